//===- NpyTest.cpp - Runtime .npy reader and writer -----------------------===//
#include "kiln/runtime/Npy.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace kiln::rt;

TEST_CASE("npy round trip keeps dtype, shape and bytes", "[runtime]") {
  HostTensor t;
  t.desc.dtype = DType::F32;
  t.desc.shape = {2, 3};
  float values[6] = {1, -2, 3.5f, 0, 1e-7f, 42};
  t.data.assign(reinterpret_cast<char *>(values), reinterpret_cast<char *>(values) + 24);
  std::string bytes;
  REQUIRE(formatNpy(t, bytes));
  CHECK((bytes.size() - 24) % 64 == 0); // data is 64-byte aligned
  HostTensor back;
  REQUIRE(parseNpy(bytes, back));
  CHECK(back.desc.dtype == DType::F32);
  CHECK(back.desc.shape == std::vector<int64_t>{2, 3});
  CHECK(back.data == t.data);
}

TEST_CASE("npy scalars and 1-d shapes use Python tuple syntax", "[runtime]") {
  HostTensor t;
  t.desc.dtype = DType::I64;
  t.desc.shape = {3};
  t.data.resize(24);
  std::string bytes;
  REQUIRE(formatNpy(t, bytes));
  CHECK(bytes.find("'shape': (3,)") != std::string::npos);
  t.desc.shape = {};
  t.data.resize(8);
  REQUIRE(formatNpy(t, bytes));
  CHECK(bytes.find("'shape': ()") != std::string::npos);
  HostTensor back;
  REQUIRE(parseNpy(bytes, back));
  CHECK(back.desc.shape.empty());
}

TEST_CASE("npy rejects what it cannot represent", "[runtime]") {
  HostTensor t;
  t.desc.dtype = DType::F32;
  t.desc.shape = {4};
  t.data.resize(16);
  std::string bytes;
  REQUIRE(formatNpy(t, bytes));
  HostTensor back;
  Status truncated = parseNpy(bytes.substr(0, bytes.size() - 1), back);
  CHECK_FALSE(truncated);
  CHECK(truncated.message().find("declares 16") != std::string::npos);
  CHECK_FALSE(parseNpy("not numpy at all", back));
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK_FALSE(parseNpy(fortran, back));
  std::string bigEndian = bytes;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  CHECK_FALSE(parseNpy(bigEndian, back));
  t.data.resize(15);
  CHECK_FALSE(formatNpy(t, bytes));
}
