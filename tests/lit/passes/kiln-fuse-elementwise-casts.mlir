// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg --kiln-fuse-elementwise | FileCheck %s

// The Cast of a graph input to f16 before a padded Conv (what --precision fp16
// makes of the first layer): the pad moves before the conversion (its zero
// converted), and the conversion, one instruction a load, fuses into the Conv
// (recomputed per reduction step, as a transpose is): no kernel of its own.
// CHECK-LABEL: func.func @cast_pad_conv
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[P]], %arg1 : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NOT: linalg.generic {{.*}} ins(%arg0
func.func @cast_pad_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16> {
  %none = onnx.NoValue
  %c = "onnx.Cast"(%x) {to = 10 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf16>
  %y = "onnx.Conv"(%c, %w, %none) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>, none) -> tensor<1x4x8x8xf16>
  return %y : tensor<1x4x8x8xf16>
}
