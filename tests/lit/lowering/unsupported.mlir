// RUN: kiln-opt %s --convert-onnx-to-linalg -split-input-file -verify-diagnostics

module attributes {onnx.opset = 17 : i64} {
  func.func @no_pattern(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.LpNormalization (opset 17): unsupported operator or attribute combination}}
    %0 = "onnx.LpNormalization"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Pad modes other than constant are not lowered yet.
module attributes {onnx.opset = 17 : i64} {
  func.func @edge_pad(%a: tensor<4xf32>) -> tensor<6xf32> {
    %p = "onnx.Constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %none = onnx.NoValue
    // expected-error @+1 {{Kiln cannot lower onnx.Pad (opset 17)}}
    %0 = "onnx.Pad"(%a, %p, %none, %none) {mode = "edge"} : (tensor<4xf32>, tensor<2xi64>, none, none) -> tensor<6xf32>
    return %0 : tensor<6xf32>
  }
}
