// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>

// Inference BatchNormalization: one elementwise generic over x and the four
// per-channel vectors, reshaped to broadcast over the spatial dims.
// CHECK-LABEL: func.func @batchnorm
// CHECK-COUNT-4: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: math.sqrt
func.func @batchnorm(%x: tensor<1x2x3x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0, %1, %2 = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-5 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, none, none)
  return %0 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @layernorm
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: math.sqrt
func.func @layernorm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0, %1, %2 = "onnx.LayerNormalization"(%x, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, none, none)
  return %0 : tensor<4x8xf32>
}

// LRN: squares padded across channels, a window sum, then x / (bias + a/n*s)^beta.
// CHECK-LABEL: func.func @lrn
// CHECK: tensor.pad %{{.*}} low[0, 1, 0, 0] high[0, 1, 0, 0]
// CHECK: linalg.generic {indexing_maps = [#[[WIN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: math.powf
// CHECK: arith.divf
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = "onnx.LRN"(%x) {size = 3 : i64} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over N, H, W.
// CHECK-LABEL: func.func @mvn
// CHECK: arith.subf
// CHECK: math.sqrt
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf
func.func @mvn(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %0 = "onnx.MeanVarianceNormalization"(%x) : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}
