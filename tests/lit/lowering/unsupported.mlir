// RUN: kiln-opt %s --convert-onnx-to-linalg -split-input-file -verify-diagnostics

module attributes {onnx.opset = 17 : i64} {
  func.func @no_pattern(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.Hardmax (opset 17): unsupported operator or attribute combination}}
    %0 = "onnx.Hardmax"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {onnx.opset = 17 : i64} {
  func.func @dynamic_slice(%a: tensor<5xf32>, %s: tensor<1xi64>) -> tensor<2xf32> {
    %e = "onnx.Constant"() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
    %none = onnx.NoValue
    // expected-error @+1 {{Kiln cannot lower onnx.Slice (opset 17)}}
    %0 = "onnx.Slice"(%a, %s, %e, %none, %none) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
