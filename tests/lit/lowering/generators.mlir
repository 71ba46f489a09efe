// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s
// Tensors generated from shapes and positions (passes/lowering/Generators.cpp).

// CHECK-LABEL: func.func @shape_of
// CHECK: arith.constant dense<[2, 3, 4]> : tensor<3xi64>
func.func @shape_of(%a: tensor<2x3x4xf32>) -> tensor<3xi64> {
  %0 = "onnx.Shape"(%a) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @one_hot
// CHECK: linalg.generic
// CHECK: linalg.index 1
// CHECK: arith.select
func.func @one_hot(%i: tensor<3xi64>, %depth: tensor<i64>, %v: tensor<2xf32>) -> tensor<3x5xf32> {
  %0 = "onnx.OneHot"(%i, %depth, %v) {axis = -1 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
