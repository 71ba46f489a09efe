// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s

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

// ArgMax: one generic carrying (value, index); the index is the result.
// CHECK-LABEL: func.func @argmax
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: arith.cmpf ogt
// CHECK: tensor.expand_shape
func.func @argmax(%a: tensor<2x5xf32>) -> tensor<2x1xi64> {
  %0 = "onnx.ArgMax"(%a) {axis = 1 : i64, keepdims = 1 : i64, select_last_index = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// CumSum with a constant axis: a (k <= i) masked sum over k.
// CHECK-LABEL: func.func @cumsum
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpi ule
func.func @cumsum(%a: tensor<5xf32>) -> tensor<5xf32> {
  %axis = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.CumSum"(%a, %axis) {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// ReduceSum with run-time axes: the static result shape says which dims reduce.
// CHECK-LABEL: func.func @reduce_sum_runtime_axes
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @reduce_sum_runtime_axes(%a: tensor<3x4xf32>, %axes: tensor<1xi64>) -> tensor<3x1xf32> {
  %0 = "onnx.ReduceSum"(%a, %axes) {keepdims = 1 : i64, noop_with_empty_axes = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}

// Hardmax: the ArgMax index along the axis, then a one-hot select.
// CHECK-LABEL: func.func @hardmax
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: linalg.generic
// CHECK: arith.cmpi eq
// CHECK: arith.select
module attributes {onnx.opset = 13 : i64} {
  func.func @hardmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
    %0 = "onnx.Hardmax"(%a) {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
    return %0 : tensor<2x5xf32>
  }
}

// TopK: each element's rank along the axis (better, or equal at a lower index),
// then per output position the element of that rank and its index.
// CHECK-LABEL: func.func @topk
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg0 : tensor<3x4xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: %{{.*}}:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %[[R]] : tensor<3x4xf32>, tensor<3x4xi64>) outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
func.func @topk(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// largest = 0 orders ascending.
// CHECK-LABEL: func.func @topk_smallest
// CHECK: arith.cmpf olt
func.func @topk_smallest(%x: tensor<4xf32>, %k: tensor<1xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  %v, %i = "onnx.TopK"(%x, %k) {axis = 0 : i64, largest = 0 : i64} : (tensor<4xf32>, tensor<1xi64>) -> (tensor<3xf32>, tensor<3xi64>)
  return %v, %i : tensor<3xf32>, tensor<3xi64>
}

// The accumulator policy for sums: an f16 ReduceSum accumulates in f32.
// CHECK-LABEL: func.func @half_sum
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @half_sum(%x: tensor<4x8xf16>) -> tensor<4x1xf16> {
  %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.ReduceSum"(%x, %axes) : (tensor<4x8xf16>, tensor<1xi64>) -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}
