// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @constants
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: arith.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK: arith.constant dense<-1> : tensor<2xi8>
func.func @constants() -> (tensor<2xf32>, tensor<3xi64>, tensor<2xui8>) {
  %0 = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "onnx.Constant"() {value_ints = [1, 2, 3]} : () -> tensor<3xi64>
  %2 = "onnx.Constant"() {value = dense<255> : tensor<2xui8>} : () -> tensor<2xui8>
  return %0, %1, %2 : tensor<2xf32>, tensor<3xi64>, tensor<2xui8>
}
