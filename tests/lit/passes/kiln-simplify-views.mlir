// RUN: kiln-opt %s -split-input-file --kiln-simplify-views --canonicalize | FileCheck %s

// An NHWC round trip goes; a chain of three transposes becomes one.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x5xf32>)
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[X]])
// CHECK: %[[T:.*]] = "onnx.Transpose"(%[[R]]) <{perm = [3, 2, 1, 0]}> : (tensor<1x3x4x5xf32>) -> tensor<5x4x3x1xf32>
// CHECK-NOT: onnx.Transpose
// CHECK: return %[[T]]
func.func @transposes(%x: tensor<1x3x4x5xf32>) -> tensor<5x4x3x1xf32> {
  %t = "onnx.Transpose"(%x) {perm = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %u = "onnx.Transpose"(%t) {perm = [0, 3, 1, 2]} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  %r = "onnx.Relu"(%u) : (tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %a = "onnx.Transpose"(%r) {perm = [1, 0, 2, 3]} : (tensor<1x3x4x5xf32>) -> tensor<3x1x4x5xf32>
  %b = "onnx.Transpose"(%a) {perm = [3, 2, 0, 1]} : (tensor<3x1x4x5xf32>) -> tensor<5x4x3x1xf32>
  return %b : tensor<5x4x3x1xf32>
}

// -----

// Moving a size-1 dimension is a reshape.
// CHECK-LABEL: func.func @unit_transpose
// CHECK-NOT: onnx.Transpose
// CHECK: "onnx.Reshape"(%arg0, %{{.*}}) {{.*}}: (tensor<1x8x4xf32>, tensor<3xi64>) -> tensor<8x1x4xf32>
func.func @unit_transpose(%x: tensor<1x8x4xf32>) -> tensor<8x1x4xf32> {
  %t = "onnx.Transpose"(%x) {perm = [1, 0, 2]} : (tensor<1x8x4xf32>) -> tensor<8x1x4xf32>
  return %t : tensor<8x1x4xf32>
}

// -----

// Flatten of Unsqueeze of Reshape: one Reshape of the source; a Squeeze that undoes an
// Unsqueeze goes.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = "onnx.Reshape"(%[[X]], %{{.*}}) {{.*}} -> tensor<6x4xf32>
// CHECK-NOT: onnx.Flatten
// CHECK-NOT: onnx.Squeeze
// CHECK: return %[[R]], %[[X]]
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x4xf32>) {
  %s = "onnx.Constant"() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %a = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = "onnx.Unsqueeze"(%r, %a) : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<1x6x4xf32>
  %f = "onnx.Flatten"(%u) {axis = 2 : i64} : (tensor<1x6x4xf32>) -> tensor<6x4xf32>
  %v = "onnx.Unsqueeze"(%x, %a) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
  %q = "onnx.Squeeze"(%v, %a) : (tensor<1x2x3x4xf32>, tensor<1xi64>) -> tensor<2x3x4xf32>
  return %f, %q : tensor<6x4xf32>, tensor<2x3x4xf32>
}
