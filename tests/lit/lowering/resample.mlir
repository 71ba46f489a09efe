// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// Resize (passes/lowering/Resample.cpp).

// Resize, linear, half_pixel: source coordinate (o + 0.5) / scale - 0.5, then the
// 2^rank neighbours weighted by their distances.
// CHECK-LABEL: func.func @resize_linear
// CHECK: linalg.generic
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear(%x: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %none = onnx.NoValue
  %s = "onnx.Constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "onnx.Resize"(%x, %none, %s, %none) {mode = "linear"} : (tensor<2x2xf32>, none, tensor<2xf32>, none) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// Resize, cubic: four neighbours per resized dim weighted by Keys' kernel
// (cubic_coeff_a); the batch and channel dims, left alone, read one position each,
// so a 2-D resize sums 16 products. exclude_outside renormalizes the weights.
// CHECK-LABEL: func.func @resize_cubic
// CHECK: linalg.generic
// CHECK: math.floor
// CHECK: arith.divf
// CHECK-COUNT-16: tensor.extract %arg0
// CHECK-NOT: tensor.extract %arg0
// CHECK: linalg.yield
func.func @resize_cubic(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32> {
  %none = onnx.NoValue
  %s = "onnx.Constant"() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.Resize"(%x, %none, %s, %none) {mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = 1 : i64} : (tensor<1x1x4x4xf32>, none, tensor<4xf32>, none) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// tf_crop_and_resize reads the crop from the roi input; outside the input, the
// extrapolation value.
// CHECK-LABEL: func.func @resize_crop
// CHECK: tensor.extract %arg1
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ogt
// CHECK: arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f32
func.func @resize_crop(%x: tensor<4x4xf32>, %roi: tensor<4xf32>) -> tensor<3x3xf32> {
  %none = onnx.NoValue
  %sz = "onnx.Constant"() {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Resize"(%x, %roi, %none, %sz) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f32} : (tensor<4x4xf32>, tensor<4xf32>, none, tensor<2xi64>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}


// GridSample, bilinear with reflection padding: one generic over the output that
// reads its grid point and four taps of X.
// CHECK-LABEL: func.func @grid_sample
// CHECK: linalg.generic
// CHECK-COUNT-2: tensor.extract %arg1
// CHECK: math.absf
// CHECK: arith.remf
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: linalg.yield
func.func @grid_sample(%x: tensor<1x2x3x4xf32>, %g: tensor<1x5x6x2xf32>) -> tensor<1x2x5x6xf32> {
  %y = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bilinear", padding_mode = "reflection"}> : (tensor<1x2x3x4xf32>, tensor<1x5x6x2xf32>) -> tensor<1x2x5x6xf32>
  return %y : tensor<1x2x5x6xf32>
}

// RoiAlign (avg, sampling_ratio 2): the batch index and roi corners are read per
// output, then 2 x 2 bilinear samples (four taps each) are averaged.
// CHECK-LABEL: func.func @roi_align
// CHECK: linalg.generic
// CHECK: tensor.extract %arg2
// CHECK-COUNT-16: tensor.extract %arg0
// CHECK: arith.constant 2.500000e-01
// CHECK: linalg.yield
func.func @roi_align(%x: tensor<1x2x8x8xf32>, %rois: tensor<3x4xf32>, %b: tensor<3xi64>) -> tensor<3x2x4x4xf32> {
  %y = "onnx.RoiAlign"(%x, %rois, %b) <{coordinate_transformation_mode = "half_pixel", mode = "avg", output_height = 4 : i64, output_width = 4 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.000000e+00 : f32}> : (tensor<1x2x8x8xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x4x4xf32>
  return %y : tensor<3x2x4x4xf32>
}
