// RUN: kiln-opt %s -split-input-file --kiln-fold-affine | FileCheck %s

// Conv, then a per-channel Mul and Add: both fold, weights scaled per output channel
// ([1, 2] * [2, 0.5] = [2, 1]), the bias (absent) becomes the shift.
// CHECK-LABEL: func.func @conv_mul_add
// CHECK-NOT: onnx.Mul
// CHECK-NOT: onnx.Add
// CHECK-DAG: %[[W:.*]] = "onnx.Constant"() <{value = dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}1.000000e+00]]]]> : tensor<2x1x1x1xf32>}>
// CHECK-DAG: %[[B:.*]] = "onnx.Constant"() <{value = dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>}>
// CHECK: %[[Y:.*]] = "onnx.Conv"(%arg0, %[[W]], %[[B]])
// CHECK: return %[[Y]]
func.func @conv_mul_add(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = "onnx.Constant"() {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %c = "onnx.Conv"(%x, %w, %none) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  %s = "onnx.Constant"() {value = dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %m = "onnx.Mul"(%s, %c) : (tensor<2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %t2 = "onnx.Constant"() {value = dense<[[[[3.0]], [[4.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %a = "onnx.Add"(%m, %t2) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return %a : tensor<1x2x3x3xf32>
}

// -----

// Div and Sub by a uniform constant: the bias [1, 1] becomes (1 / 4) - 1.
// CHECK-LABEL: func.func @conv_div_sub
// CHECK-DAG: "onnx.Constant"() <{value = dense<2.500000e-01> : tensor<2x1x1x1xf32>}>
// CHECK-DAG: "onnx.Constant"() <{value = dense<-7.500000e-01> : tensor<2xf32>}>
// CHECK-NOT: onnx.Div
// CHECK-NOT: onnx.Sub
func.func @conv_div_sub(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "onnx.Conv"(%x, %w, %b) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %four = "onnx.Constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %d = "onnx.Div"(%c, %four) : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = "onnx.Sub"(%d, %one) : (tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x2x3x3xf32>
  return %s : tensor<1x2x3x3xf32>
}

// -----

// Not folded: a constant - conv (the sign would flip), a constant varying along a
// spatial axis, a Conv result with a second use, and a shift after a MatMul (no
// bias to take it).
// CHECK-LABEL: func.func @not_folded
// CHECK: onnx.Sub
// CHECK: onnx.Mul
// CHECK: onnx.Add
// CHECK: onnx.Add
func.func @not_folded(%x: tensor<1x1x3x3xf32>, %v: tensor<2x4xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x3xf32>) {
  %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %none = onnx.NoValue
  %c1 = "onnx.Conv"(%x, %w, %none) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %r1 = "onnx.Sub"(%one, %c1) : (tensor<f32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c2 = "onnx.Conv"(%x, %w, %none) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  %row = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %r2 = "onnx.Mul"(%c2, %row) : (tensor<1x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  %c3 = "onnx.Conv"(%x, %w, %none) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x3x3xf32>
  %r3 = "onnx.Add"(%c3, %c3) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %m = "onnx.Constant"() {value = dense<1.0> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %mm = "onnx.MatMul"(%v, %m) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r4 = "onnx.Add"(%mm, %row) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r1, %r2, %r3, %r4 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x3xf32>
}

// -----

// Gemm with transB: the scale multiplies rows of B (one per output column) and C;
// the shift adds shift / beta to C. ConvTranspose: the output channel of weight
// [c, j] is group(c) * (M / group) + j.
// CHECK-LABEL: func.func @gemm_and_conv_transpose
// CHECK-DAG: "onnx.Constant"() <{value = dense<{{\[\[}}2.000000e+00, 2.000000e+00], [3.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>}>
// CHECK-DAG: "onnx.Constant"() <{value = dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>}>
// CHECK: "onnx.Gemm"({{.*}}) <{{{.*}}beta = 2.000000e+00 : f32
// CHECK-DAG: "onnx.Constant"() <{value = dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>}>
// CHECK: "onnx.ConvTranspose"
// CHECK-NOT: onnx.Mul
// CHECK-NOT: onnx.Add
func.func @gemm_and_conv_transpose(%a: tensor<1x2xf32>, %x: tensor<1x2x3x3xf32>) -> (tensor<1x2xf32>, tensor<1x4x3x3xf32>) {
  %b = "onnx.Constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %c = "onnx.Constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %g = "onnx.Gemm"(%a, %b, %c) {beta = 2.0 : f32, transB = 1 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %s = "onnx.Constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "onnx.Mul"(%g, %s) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %t = "onnx.Constant"() {value = dense<[2.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "onnx.Add"(%m, %t) : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %none = onnx.NoValue
  %ct = "onnx.ConvTranspose"(%x, %w, %none) {group = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x4x3x3xf32>
  %s4 = "onnx.Constant"() {value = dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>} : () -> tensor<4x1x1xf32>
  %z = "onnx.Mul"(%ct, %s4) : (tensor<1x4x3x3xf32>, tensor<4x1x1xf32>) -> tensor<1x4x3x3xf32>
  return %y, %z : tensor<1x2xf32>, tensor<1x4x3x3xf32>
}
