// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg -split-input-file -verify-diagnostics

module attributes {onnx.opset = 17 : i64} {
  func.func @no_pattern(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.LpNormalization (opset 17): unsupported operator or attribute combination}}
    %0 = "onnx.LpNormalization"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Det beyond 16 x 16 has no lowering.
module attributes {onnx.opset = 17 : i64} {
  func.func @det(%a: tensor<17x17xf32>) -> tensor<f32> {
    // expected-error @+1 {{Kiln cannot lower onnx.Det (opset 17)}}
    %0 = "onnx.Det"(%a) : (tensor<17x17xf32>) -> tensor<f32>
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

// -----

// What Kiln does not compile by design, or not yet, fails saying why.
module attributes {onnx.opset = 15 : i64} {
  func.func @random(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.Bernoulli (opset 15): random number generation is not supported (a compiled model is deterministic)}}
    %0 = "onnx.Bernoulli"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {onnx.opset = 15 : i64} {
  func.func @training_dropout(%a: tensor<4xf32>) -> tensor<4xf32> {
    %none = onnx.NoValue
    %true = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    // expected-error @+1 {{Kiln cannot lower onnx.Dropout (opset 15): training-mode Dropout is not supported (Kiln compiles inference)}}
    %0, %m = "onnx.Dropout"(%a, %none, %true) : (tensor<4xf32>, none, tensor<i1>) -> (tensor<4xf32>, none)
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {onnx.opset = 15 : i64} {
  func.func @control_flow(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{Kiln cannot lower onnx.If (opset 15): an If decided at run time needs a condition of static shape (kiln-decompose outlines its branches)}}
    %0 = "onnx.If"(%c) ({
      "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
    }, {
      "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
    }) : (tensor<i1>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
