// RUN: kiln-opt %s -split-input-file --kiln-recognize-composites --canonicalize | FileCheck %s

// LayerNorm as opset-13 exporters write it.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = "onnx.LayerNormalization"(%[[X]], %[[G]], %[[B]]) <{axis = 2 : i64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : i64}>
// CHECK-NOT: onnx.ReduceMean
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = "onnx.ReduceMeanV13"(%x) {axes = [-1]} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %d = "onnx.Sub"(%x, %m) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %two = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %p = "onnx.Pow"(%d, %two) : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %v = "onnx.ReduceMeanV13"(%p) {axes = [-1]} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %eps = "onnx.Constant"() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %ve = "onnx.Add"(%v, %eps) : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = "onnx.Sqrt"(%ve) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = "onnx.Div"(%d, %s) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %y = "onnx.Mul"(%n, %g) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %z = "onnx.Add"(%y, %b) : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %z : tensor<2x3x8xf32>
}

// -----

// The centered value is also an output: not a composite.
// CHECK-LABEL: func.func @layer_norm_leaks
// CHECK-NOT: onnx.LayerNormalization
func.func @layer_norm_leaks(%x: tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %m = "onnx.ReduceMeanV13"(%x) {axes = [1]} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %d = "onnx.Sub"(%x, %m) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %p = "onnx.Mul"(%d, %d) : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  %v = "onnx.ReduceMeanV13"(%p) {axes = [1]} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %eps = "onnx.Constant"() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %ve = "onnx.Add"(%v, %eps) : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %s = "onnx.Sqrt"(%ve) : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %n = "onnx.Div"(%d, %s) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %e = "onnx.Exp"(%d) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %n, %e : tensor<3x8xf32>, tensor<3x8xf32>
}

// -----

// GELU, exact: x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch writes it.
// CHECK-LABEL: func.func @gelu_erf
// CHECK: %[[G:.*]] = "onnx.Gelu"(%arg0) <{approximate = "none"}>
// CHECK-NOT: onnx.Erf
// CHECK: return %[[G]]
func.func @gelu_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = "onnx.Constant"() {value = dense<1.41421354> : tensor<f32>} : () -> tensor<f32>
  %d = "onnx.Div"(%x, %c) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = "onnx.Erf"(%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Add"(%e, %one) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = "onnx.Mul"(%x, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %y = "onnx.Mul"(%m, %half) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// GELU, tanh form, another arrangement: 0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: "onnx.Gelu"(%arg0) <{approximate = "tanh"}>
// CHECK-NOT: onnx.Tanh
func.func @gelu_tanh(%x: tensor<8xf32>) -> tensor<8xf32> {
  %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %hx = "onnx.Mul"(%half, %x) : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %three = "onnx.Constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %cube = "onnx.Pow"(%x, %three) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %k = "onnx.Constant"() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
  %kc = "onnx.Mul"(%cube, %k) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in = "onnx.Add"(%x, %kc) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %s = "onnx.Constant"() {value = dense<0.797884583> : tensor<f32>} : () -> tensor<f32>
  %si = "onnx.Mul"(%in, %s) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t = "onnx.Tanh"(%si) : (tensor<8xf32>) -> tensor<8xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Add"(%t, %one) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = "onnx.Mul"(%hx, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Close to GELU but not it (sqrt 3): stays.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: onnx.Gelu
// CHECK: onnx.Erf
func.func @not_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "onnx.Constant"() {value = dense<1.7320508> : tensor<f32>} : () -> tensor<f32>
  %d = "onnx.Div"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = "onnx.Erf"(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Add"(%e, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = "onnx.Mul"(%x, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %y = "onnx.Mul"(%m, %half) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Attention as exporters write it: MatMul, Div by sqrt(d), Where with a causal
// keep-mask, Softmax, MatMul.
// CHECK-LABEL: func.func @attention
// CHECK: %[[A:.*]] = "kiln.attention"(%arg0, %arg1, %arg2, %arg3) <{fill = -1.000000e+04 : f64, mask_kind = "keep", scale = 5.000000e-01 : f64}> : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xi1>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: onnx.Softmax
// CHECK: return %[[A]]
func.func @attention(%q: tensor<1x2x4x4xf32>, %kt: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %keep: tensor<1x1x4x4xi1>) -> tensor<1x2x4x4xf32> {
  %s = "onnx.MatMul"(%q, %kt) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %two = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %d = "onnx.Div"(%s, %two) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %fill = "onnx.Constant"() {value = dense<-1.0e4> : tensor<f32>} : () -> tensor<f32>
  %w = "onnx.Where"(%keep, %d, %fill) : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = "onnx.Softmax"(%w) {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = "onnx.MatMul"(%p, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %o : tensor<1x2x4x4xf32>
}

// -----

// An additive mask and a Mul scale; the probabilities also an output: not a
// composite (they would be lost).
// CHECK-LABEL: func.func @attention_add
// CHECK: "kiln.attention"(%arg0, %arg1, %arg2, %arg3) <{fill = 0.000000e+00 : f64, mask_kind = "add", scale = 1.250000e-01 : f64}>
// CHECK-LABEL: func.func @probabilities_used
// CHECK-NOT: kiln.attention
func.func @attention_add(%q: tensor<2x3x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x6xf32>, %m: tensor<2x1x5xf32>) -> tensor<2x3x6xf32> {
  %s = "onnx.MatMul"(%q, %kt) : (tensor<2x3x8xf32>, tensor<2x8x5xf32>) -> tensor<2x3x5xf32>
  %c = "onnx.Constant"() {value = dense<0.125> : tensor<1xf32>} : () -> tensor<1xf32>
  %d = "onnx.Mul"(%c, %s) : (tensor<1xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %a = "onnx.Add"(%d, %m) : (tensor<2x3x5xf32>, tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
  %p = "onnx.Softmax"(%a) {axis = 2 : i64} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %o = "onnx.MatMul"(%p, %v) : (tensor<2x3x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}
func.func @probabilities_used(%q: tensor<2x3x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x6xf32>) -> (tensor<2x3x6xf32>, tensor<2x3x5xf32>) {
  %s = "onnx.MatMul"(%q, %kt) : (tensor<2x3x8xf32>, tensor<2x8x5xf32>) -> tensor<2x3x5xf32>
  %p = "onnx.Softmax"(%s) {axis = -1 : i64} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %o = "onnx.MatMul"(%p, %v) : (tensor<2x3x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o, %p : tensor<2x3x6xf32>, tensor<2x3x5xf32>
}
