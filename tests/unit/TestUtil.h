//===- TestUtil.h - Helpers shared by Kiln's unit tests --------*- C++ -*-===//
#ifndef KILN_TESTS_UNIT_TESTUTIL_H
#define KILN_TESTS_UNIT_TESTUTIL_H

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace kiln::test {

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("kiln-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string &name, const std::string &bytes) const {
    std::filesystem::path p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::filesystem::path path;
};

} // namespace kiln::test

#endif // KILN_TESTS_UNIT_TESTUTIL_H
