// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @reduce_mean_v13
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.expand_shape
func.func @reduce_mean_v13(%a: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = "onnx.ReduceMeanV13"(%a) {axes = [1], keepdims = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// CHECK-LABEL: func.func @reduce_max_all
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.maximumf
func.func @reduce_max_all(%a: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "onnx.ReduceMaxV13"(%a) {keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Softmax (opset 13): max, exp(x - max), sum, divide.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "onnx.Softmax"(%a) {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
