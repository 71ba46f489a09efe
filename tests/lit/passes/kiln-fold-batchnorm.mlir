// RUN: kiln-opt %s -split-input-file --kiln-fold-batchnorm | FileCheck %s

// a = scale / sqrt(var + eps) = [2 / 2, 0.5 / 1], b = bias - mean * a = [0.5, -2],
// laid along the channel axis.
// CHECK-LABEL: func.func @standalone
// CHECK-NOT: onnx.BatchNormalization
// CHECK: %[[A:.*]] = "onnx.Constant"() <{value = dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e-01]]]> : tensor<2x1x1xf32>}>
// CHECK: %[[M:.*]] = "onnx.Mul"(%arg0, %[[A]]) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK: %[[B:.*]] = "onnx.Constant"() <{value = dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}-2.000000e+00]]]> : tensor<2x1x1xf32>}>
// CHECK: %[[Y:.*]] = "onnx.Add"(%[[M]], %[[B]])
// CHECK: return %[[Y]]
func.func @standalone(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %scale = "onnx.Constant"() {value = dense<[2.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "onnx.Constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = "onnx.Constant"() {value = dense<[0.5, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = "onnx.Constant"() {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y, %m, %v = "onnx.BatchNormalization"(%x, %scale, %b, %mean, %var) {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Statistics computed at run time: the op stays for the tensor phase.
// CHECK-LABEL: func.func @runtime_statistics
// CHECK: onnx.BatchNormalization
func.func @runtime_statistics(%x: tensor<1x2x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %c = "onnx.Constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y, %m, %v = "onnx.BatchNormalization"(%x, %c, %c, %mean, %c) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Training mode: not an affine (kiln-decompose handles it).
// CHECK-LABEL: func.func @training
// CHECK: onnx.BatchNormalization
func.func @training(%x: tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32> {
  %c = "onnx.Constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y, %m, %v = "onnx.BatchNormalization"(%x, %c, %c, %c, %c) {training_mode = 1 : i64} : (tensor<2x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x3x3xf32>, none, none)
  return %y : tensor<2x2x3x3xf32>
}
