// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
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

// Windows: a0 - a1 cos(2 pi n / N) (+ a2 cos(4 pi n / N)); N = size when periodic,
// size - 1 when symmetric. A run-time size takes the output's static extent.
// CHECK-LABEL: func.func @hann
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK: %[[STEP:.*]] = arith.constant 0.628318{{.*}} : f32
// CHECK: arith.sitofp
// CHECK: math.cos
// CHECK-NOT: math.cos
// CHECK: linalg.yield
func.func @hann(%size: tensor<i64>) -> tensor<10xf32> {
  %0 = "onnx.HannWindow"(%size) : (tensor<i64>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// CHECK-LABEL: func.func @blackman_symmetric
// CHECK: arith.constant 0.69813{{.*}} : f32
// CHECK: math.cos
// CHECK: math.cos
func.func @blackman_symmetric() -> tensor<10xf32> {
  %size = "onnx.Constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.BlackmanWindow"(%size) {periodic = 0 : i64} : (tensor<i64>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}
