//===- DriverTest.cpp - The compile driver, called as a library -----------===//
//
// The driver is what `kiln` calls; tests (and the Python bindings) call it directly:
// a phase's IR to a file, the artifacts of each target, and its one-line errors.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Driver.h"
#include "TestUtil.h"

#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using kiln::test::TempDir;

namespace {

const char *kModel = R"(<ir_version: 8, opset_import: ["" : 17]>
add (float[2,4] X, float[2,4] Y) => (float[2,4] Z)
{
  S = Add(X, Y)
  Z = Relu(S)
}
)";

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

TEST_CASE("the driver prints a phase's IR", "[driver]") {
  TempDir dir;
  kiln::CompileRequest request;
  request.model.path = dir.write("add.onnxtxt", kModel);
  request.compileTo = "plan";
  request.output = dir.path.string() + "/plan.mlir";
  std::string error;
  REQUIRE(kiln::compileModel(request, error));
  std::string ir = readFile(request.output);
  CHECK(ir.find("kiln.plan @main_graph") != std::string::npos);
  CHECK(ir.find("kiln.launch") != std::string::npos);
}

TEST_CASE("the driver emits the artifacts of each target", "[driver]") {
  TempDir dir;
  std::string model = dir.write("add.onnxtxt", kModel);
  for (const char *target : {"host", "cuda", "cuda-sim"}) {
    kiln::CompileRequest request;
    request.model.path = model;
    request.target = target;
    request.output = dir.path.string() + "/" + target;
    std::string error;
    INFO(target);
    REQUIRE(kiln::compileModel(request, error));
    CHECK(llvm::sys::fs::exists(request.output + "/model.cpp"));
    CHECK(llvm::sys::fs::exists(request.output + "/model.weights"));
    bool ptx = std::string(target) == "cuda";
    CHECK(llvm::sys::fs::exists(request.output + "/model.ptx") == ptx);
    CHECK(llvm::sys::fs::exists(request.output + "/model.o") == !ptx);
  }
}

TEST_CASE("the driver reports bad requests in one line", "[driver]") {
  TempDir dir;
  kiln::CompileRequest request;
  request.model.path = dir.write("add.onnxtxt", kModel);
  request.output = dir.path.string() + "/out";
  std::string error;

  request.target = "tpu";
  CHECK_FALSE(kiln::compileModel(request, error));
  CHECK(error == "--target 'tpu' is not a target (host, cuda, cuda-sim)");

  request.target = "cuda";
  request.targetOptions.gpu.arch = "sm_70";
  CHECK_FALSE(kiln::compileModel(request, error));
  CHECK(error == "--gpu-arch 'sm_70' is not supported (sm_80, sm_86, sm_89, sm_90)");

  request.targetOptions.gpu.arch = "sm_90";
  request.compileTo = "lower";
  CHECK_FALSE(kiln::compileModel(request, error));
  CHECK(error.find("--compile-to 'lower' is not a phase") == 0);

  request.compileTo = "emit";
  request.model.path = dir.path.string() + "/missing.onnx";
  CHECK_FALSE(kiln::compileModel(request, error));
  CHECK(error.find("missing.onnx") != std::string::npos);
}
