// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s
// Resize (passes/lowering/Resample.cpp).

// Resize, linear, half_pixel: source coordinate (o + 0.5) / scale - 0.5, then the
// 2^rank neighbours weighted by their distances.
// CHECK-LABEL: func.func @resize_linear
// CHECK: linalg.generic
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear(%x: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %none = onnx.NoValue
  %s = "onnx.Constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "onnx.Resize"(%x, %none, %s, %none) {mode = "linear"} : (tensor<2x2xf32>, none, tensor<2xf32>, none) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
