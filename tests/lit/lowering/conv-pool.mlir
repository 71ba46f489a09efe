// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s

// A grouped convolution: padded input, one generic over (n, f, c, kh, kw, oh, ow)
// whose input channel is (f floordiv M/group) * C/group + c.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 floordiv 2 + d2, d5 * 2 + d3, d6 * 2 + d4)>
// CHECK-LABEL: func.func @conv_grouped
// CHECK: tensor.pad
// CHECK: linalg.generic {indexing_maps = [#[[X]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]
func.func @conv_grouped(%x: tensor<1x2x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %none = onnx.NoValue
  %0 = "onnx.Conv"(%x, %w, %none) {group = 2 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x8x8xf32>, tensor<4x1x3x3xf32>, none) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @maxpool
// CHECK: tensor.pad
// CHECK: 0xFF800000
// CHECK: arith.maximumf
func.func @maxpool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0, %1 = "onnx.MaxPool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, none)
  return %0 : tensor<1x1x2x2xf32>
}

// Average over real elements only: each window sum is divided by its count of
// real taps, per dim max(0, min(k - 1, floor((in - 1 - start) / d)) -
// max(0, ceil((0 - start) / d)) + 1) with start = o * stride - padLow.
// CHECK-LABEL: func.func @avgpool
// CHECK: tensor.pad
// CHECK-NOT: tensor.pad
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x1x2x2xf32>)
// CHECK: %[[O:.*]] = linalg.index 2 : index
// CHECK: %[[M:.*]] = arith.muli %[[O]], %c2
// CHECK: %[[START:.*]] = arith.subi %[[M]], %c1
// CHECK: arith.ceildivsi
// CHECK: arith.maxsi
// CHECK: arith.floordivsi
// CHECK: arith.minsi
// CHECK: linalg.index 3 : index
// CHECK: %[[N:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
func.func @avgpool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.AveragePool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2], count_include_pad = 0 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// ConvTranspose as a gather: each output position sums the kernel taps whose
// source row (o + pad - k * dilation) / stride is exact and inside the input.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: tensor.extract
// CHECK: arith.select
func.func @conv_transpose(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32> {
  %none = onnx.NoValue
  %0 = "onnx.ConvTranspose"(%x, %w, %none) {strides = [1, 1]} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, none) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}


// MaxPool with Indices: a second windowed reduction keeps the smallest flat input
// index whose element equals the window's max; storage_order 1 relays it
// column-major.
// CHECK-LABEL: func.func @maxpool_indices
// CHECK: %[[NONE:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: linalg.fill ins(%[[NONE]] : i64)
// CHECK: arith.cmpf oeq
// CHECK: arith.minsi
// CHECK: arith.remsi
func.func @maxpool_indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %y, %i = "onnx.MaxPool"(%x) <{auto_pad = "NOTSET", ceil_mode = 0 : i64, kernel_shape = [2, 2], storage_order = 1 : i64, strides = [2, 2]}> : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %y, %i : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}
