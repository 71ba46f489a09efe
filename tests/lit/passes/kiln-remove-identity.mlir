// RUN: kiln-opt %s -split-input-file --kiln-remove-identity | FileCheck %s

// CHECK-LABEL: func.func @identity_chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NOT: onnx.Identity
// CHECK: %[[R:.*]] = "onnx.Relu"(%[[X]])
// CHECK: return %[[R]]
func.func @identity_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.Identity"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "onnx.Identity"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "onnx.Relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dropout_inference
// CHECK-NOT: onnx.Dropout
// CHECK: return %arg0
func.func @dropout_inference(%x: tensor<4xf32>) -> tensor<4xf32> {
  %none = onnx.NoValue
  %false = "onnx.Constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %0, %mask = "onnx.Dropout"(%x, %none, %false) : (tensor<4xf32>, none, tensor<i1>) -> (tensor<4xf32>, none)
  return %0 : tensor<4xf32>
}

// -----

// Training mode on: Dropout stays (and fails to lower, naming its node). A used
// mask at inference is all true.
// CHECK-LABEL: func.func @dropout_training
// CHECK: "onnx.Dropout"
// CHECK-LABEL: func.func @dropout_mask_used
// CHECK-NOT: onnx.Dropout
// CHECK: %[[M:.*]] = "onnx.Constant"() <{value = dense<true> : tensor<4xi1>}>
// CHECK: return %[[M]]
func.func @dropout_training(%x: tensor<4xf32>) -> tensor<4xf32> {
  %none = onnx.NoValue
  %true = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0, %mask = "onnx.Dropout"(%x, %none, %true) : (tensor<4xf32>, none, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  return %0 : tensor<4xf32>
}
func.func @dropout_mask_used(%x: tensor<4xf32>) -> tensor<4xi1> {
  %none = onnx.NoValue
  %0, %mask = "onnx.Dropout"(%x, %none, %none) : (tensor<4xf32>, none, none) -> (tensor<4xf32>, tensor<4xi1>)
  return %mask : tensor<4xi1>
}

// -----

// Dropout of opsets 1-11: inference unless is_test is 0; the mask all true.
// CHECK-LABEL: func.func @dropout_v10
// CHECK-NOT: onnx.DropoutV10
// CHECK: %[[M:.*]] = "onnx.Constant"() <{value = dense<true> : tensor<2x2xi1>}>
// CHECK: return %arg0, %[[M]]
// CHECK-LABEL: func.func @dropout_v6_training
// CHECK: "onnx.DropoutV10"
func.func @dropout_v10(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi1>) {
  %0, %mask = "onnx.DropoutV10"(%x) : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi1>)
  return %0, %mask : tensor<2x2xf32>, tensor<2x2xi1>
}
func.func @dropout_v6_training(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0, %mask = "onnx.DropoutV10"(%x) {is_test = 0 : i64} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, none)
  return %0 : tensor<2x2xf32>
}
