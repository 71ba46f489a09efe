// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s
// Data-dependent indexing (passes/lowering/Indexing.cpp).

// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: tensor.extract
func.func @gather(%a: tensor<5x6xf32>, %i: tensor<3xi64>) -> tensor<3x6xf32> {
  %0 = "onnx.Gather"(%a, %i) {axis = 0 : i64} : (tensor<5x6xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}
