// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The dialect's ops print and parse back; optional inputs are onnx.NoValue.

// CHECK-LABEL: func.func @conv_relu
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: %[[NONE:.*]] = onnx.NoValue
  %none = onnx.NoValue
  // auto_pad has the same default in every Conv version: the dialect fills it in.
  // CHECK: %[[C:.*]] = "onnx.Conv"(%{{.*}}, %{{.*}}, %[[NONE]]) <{auto_pad = "NOTSET", group = 1 : i64}>
  %0 = "onnx.Conv"(%x, %w, %none) {group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  // CHECK: "onnx.Relu"(%[[C]])
  %1 = "onnx.Relu"(%0) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}

// Accessors fall back to the schema's defaults when an attribute is absent.
// CHECK-LABEL: func.func @if_region
func.func @if_region(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: "onnx.If"
  %0 = "onnx.If"(%c) ({
    // CHECK: onnx.Yield %{{.*}} : tensor<3xf32>
    onnx.Yield %x : tensor<3xf32>
  }, {
    %n = "onnx.Neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %n : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
