// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s

// Inference BatchNormalization: one elementwise generic over x and the four
// per-channel vectors, reshaped to broadcast over the spatial dims.
// CHECK-LABEL: func.func @batchnorm
// CHECK-COUNT-4: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: math.sqrt
func.func @batchnorm(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0, %1, %2 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-5 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %0 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @layernorm
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: math.sqrt
func.func @layernorm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0, %1, %2 = "onnx.LayerNormalization"(%x, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, none, none)
  return %0 : tensor<4x8xf32>
}
