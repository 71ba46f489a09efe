//===- LibraryBuild.h - Build libmodel.so ----------------------*- C++ -*-===//
//
// `--emit lib`: the artifact's model.cpp, what the target's kernel writer asks to
// link (the host object) and, with --embed-weights, model_weights.S, compiled with
// the system C++ compiler against kiln_runtime into libmodel.so, which exports only
// the C ABI (kiln/runtime/model_abi.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_LIBRARYBUILD_H
#define KILN_CODEGEN_EMIT_LIBRARYBUILD_H

#include <string>
#include <vector>

namespace kiln {

struct LibraryBuild {
  std::string dir;                     // the artifact directory
  std::vector<std::string> linkInputs; // beyond model.cpp
  bool embedWeights = false;
  /// -O1; false: -O0 (a library built to run once, as the precision check's)
  bool optimize = true;
  std::string compiler = "c++";
  std::string runtimeIncludeDir;
  std::string runtimeLibrary;
};

/// Builds `dir`/libmodel.so, logging to `dir`/build.log. False with `error`.
bool buildModelLibrary(const LibraryBuild &build, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_LIBRARYBUILD_H
