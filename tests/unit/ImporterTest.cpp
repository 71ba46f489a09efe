//===- ImporterTest.cpp - Importer: ops, constants, locations -------------===//
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "dialects/onnx/OnnxDialect.h"
#include "TestUtil.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "onnx/onnx_pb.h"

#include <catch2/catch.hpp>

using namespace mlir;
using kiln::test::TempDir;

namespace {

OwningOpRef<ModuleOp> importText(MLIRContext &ctx, const std::string &text,
                                 std::string &error,
                                 kiln::ImportOptions options = {}) {
  TempDir dir;
  std::string path = dir.write("m.onnxtxt", text);
  onnx::ModelProto model;
  if (!kiln::loadOnnxModel(path, {}, model, error))
    return nullptr;
  return kiln::importOnnxModel(ctx, model, path, options, error);
}

} // namespace

TEST_CASE("a node becomes one op named by its location", "[importer]") {
  MLIRContext ctx;
  std::string error;
  auto module = importText(ctx, R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y) { Y = Relu(X) })", error);
  INFO(error);
  REQUIRE(module);
  auto func = module->lookupSymbol<func::FuncOp>("main_graph");
  REQUIRE(func);
  auto relu = *func.getOps<kiln::onnx::ReluOp>().begin();
  auto loc = dyn_cast<NameLoc>(relu->getLoc());
  REQUIRE(loc);
  CHECK(loc.getName().str() == "Y"); // unnamed node: named by its output
  auto type = cast<RankedTensorType>(relu.getType());
  CHECK(type.getShape() == ArrayRef<int64_t>{2, 3});
}

TEST_CASE("large initializers become dense resources, small ones stay inline",
          "[importer]") {
  MLIRContext ctx;
  std::string error;
  kiln::ImportOptions options;
  options.resourceThresholdBytes = 16;
  auto module = importText(ctx, R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[8] X) => (float[8] Y)
<float[8] big = {1,2,3,4,5,6,7,8}, float[2] small = {1, 2}>
{ T = Add(X, big) Y = Identity(T) })", error, options);
  INFO(error);
  REQUIRE(module);
  int resources = 0, dense = 0;
  module->walk([&](kiln::onnx::ConstantOp c) {
    Attribute v = *c.getValue();
    resources += isa<DenseResourceElementsAttr>(v);
    dense += isa<DenseElementsAttr>(v);
  });
  CHECK(resources == 1);
  CHECK(dense == 1);
}

TEST_CASE("defaults of the node's own opset version are materialized",
          "[importer]") {
  MLIRContext ctx;
  std::string error;
  auto module = importText(ctx, R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 4] X) => (float[1, 4] Y) { Y = Softmax(X) })", error);
  INFO(error);
  REQUIRE(module);
  auto softmax = *module->lookupSymbol<func::FuncOp>("main_graph")
                      .getOps<kiln::onnx::SoftmaxOp>()
                      .begin();
  // Softmax-13 defaults axis to -1 (Softmax-1 defaulted to 1).
  REQUIRE(softmax.getAxis());
  CHECK(static_cast<int64_t>(*softmax.getAxis()) == -1);
}

TEST_CASE("a symbolic dimension that cannot be pinned is a clean error",
          "[importer]") {
  MLIRContext ctx;
  std::string error;
  auto module = importText(ctx, R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N] X) => (float[N] Y) { Y = Relu(X) })", error);
  CHECK_FALSE(module);
  CHECK_THAT(error, Catch::Contains("symbolic dimension 'N'") &&
                        Catch::Contains("--input-shape"));
}
