// RUN: kiln-opt %s --convert-onnx-to-linalg -split-input-file -verify-diagnostics

module attributes {onnx.opset = 17 : i64} {
  func.func @no_pattern(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.LpNormalization (opset 17): unsupported operator or attribute combination}}
    %0 = "onnx.LpNormalization"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Det has no lowering yet.
module attributes {onnx.opset = 17 : i64} {
  func.func @det(%a: tensor<3x3xf32>) -> tensor<f32> {
    // expected-error @+1 {{Kiln cannot lower onnx.Det (opset 17)}}
    %0 = "onnx.Det"(%a) : (tensor<3x3xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}

// -----

module attributes {onnx.opset = 17 : i64} {
  func.func @einsum_bad(%a: tensor<2x3xf32>) -> tensor<2xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.Einsum (opset 17)}}
    %0 = "onnx.Einsum"(%a) {equation = "ij->k"} : (tensor<2x3xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
