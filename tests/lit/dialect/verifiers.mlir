// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{input has 3 channels but weight expects 2 x group 1}}
  %0 = "onnx.Conv"(%x, %w, %none) {group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_auto_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{unknown auto_pad 'SAME'}}
  %0 = "onnx.Conv"(%x, %w, %none) {auto_pad = "SAME"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_kernel_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{kernel_shape has 1 values, expected 2}}
  %0 = "onnx.Conv"(%x, %w, %none) {kernel_shape = [3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @cast_mismatch(%x: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{result element type 'i32' does not match 'to' ('i64')}}
  %0 = "onnx.Cast"(%x) {to = 7 : i64} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @cast_string(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{cast to ONNX data type 8 is not supported}}
  %0 = "onnx.Cast"(%x) {to = 8 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // expected-error @+1 {{perm is not a permutation of 0..2}}
  %0 = "onnx.Transpose"(%x) {perm = [2, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

func.func @concat_axis(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "onnx.Concat"(%x, %x) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_ranks(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{inputs have different ranks (2 and 1)}}
  %0 = "onnx.Concat"(%x, %y) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{A and B must be matrices, got rank 3}}
  %0 = "onnx.Gemm"(%a, %b, %none) : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{reshapes 6 elements into 8}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = "onnx.Softmax"(%x) {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @gather_axis(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{axis 5 is out of range for rank 2}}
  %0 = "onnx.Gather"(%x, %i) {axis = 5 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @type_constraint(%x: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{operand #0 must be tensor of}}
  %0 = "onnx.Sigmoid"(%x) : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @missing_required_attr(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{requires attribute 'to'}}
  %0 = "onnx.Cast"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
