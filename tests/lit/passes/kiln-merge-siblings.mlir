// RUN: kiln-opt %s -split-input-file --kiln-merge-siblings --canonicalize | FileCheck %s

// Q, K and V projections of one input, each with its bias: one MatMul by the
// concatenated weights, one Add of the concatenated biases, three slices.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[W:.*]] = "onnx.Constant"() <{value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>}>
// CHECK: %[[M:.*]] = "onnx.MatMul"(%arg0, %[[W]]) : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
// CHECK: %[[B:.*]] = "onnx.Constant"() <{value = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<3xf32>}>
// CHECK: %[[A:.*]] = "onnx.Add"(%[[M]], %[[B]])
// CHECK-COUNT-3: "onnx.Slice"(%[[A]]
// CHECK-NOT: onnx.MatMul
func.func @qkv(%x: tensor<1x4x2xf32>) -> (tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>) {
  %wq = "onnx.Constant"() {value = dense<1.0> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %wk = "onnx.Constant"() {value = dense<2.0> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %wv = "onnx.Constant"() {value = dense<3.0> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %bq = "onnx.Constant"() {value = dense<4.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %bk = "onnx.Constant"() {value = dense<5.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %bv = "onnx.Constant"() {value = dense<6.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %q = "onnx.MatMul"(%x, %wq) : (tensor<1x4x2xf32>, tensor<2x1xf32>) -> tensor<1x4x1xf32>
  %q1 = "onnx.Add"(%q, %bq) : (tensor<1x4x1xf32>, tensor<1xf32>) -> tensor<1x4x1xf32>
  %k = "onnx.MatMul"(%x, %wk) : (tensor<1x4x2xf32>, tensor<2x1xf32>) -> tensor<1x4x1xf32>
  %k1 = "onnx.Add"(%bk, %k) : (tensor<1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %v = "onnx.MatMul"(%x, %wv) : (tensor<1x4x2xf32>, tensor<2x1xf32>) -> tensor<1x4x1xf32>
  %v1 = "onnx.Add"(%v, %bv) : (tensor<1x4x1xf32>, tensor<1xf32>) -> tensor<1x4x1xf32>
  return %q1, %k1, %v1 : tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>
}

// -----

// One sibling without a bias: the MatMuls merge, the Adds stay on the slices. A
// MatMul by a run-time weight is not a sibling.
// CHECK-LABEL: func.func @partial
// CHECK: %[[M:.*]] = "onnx.MatMul"(%arg0, %{{.*}}) : (tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<4x5xf32>
// CHECK: "onnx.Slice"(%[[M]]
// CHECK: "onnx.Slice"(%[[M]]
// CHECK: "onnx.Add"
// CHECK: "onnx.MatMul"(%arg0, %arg1)
func.func @partial(%x: tensor<4x2xf32>, %w: tensor<2x2xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x2xf32>) {
  %wa = "onnx.Constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %wb = "onnx.Constant"() {value = dense<2.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = "onnx.Constant"() {value = dense<4.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %a = "onnx.MatMul"(%x, %wa) : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %a1 = "onnx.Add"(%a, %b) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %c = "onnx.MatMul"(%x, %wb) : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %d = "onnx.MatMul"(%x, %w) : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %a1, %c, %d : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x2xf32>
}
