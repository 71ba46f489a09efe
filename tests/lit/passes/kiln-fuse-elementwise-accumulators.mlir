// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg --kiln-fuse-elementwise | FileCheck %s

// Two f16 MatMuls (f32 accumulators, accumulator policy) meet in a residual Add:
// the Add can be the epilogue of one contraction only, so the other's truncf
// stays its own generic (its contraction's epilogue later) instead of fusing
// into the Add, which would leave that f32 accumulator in memory. The first's
// truncf, the Add and the Relu fuse as usual.
// CHECK-LABEL: func.func @residual
// CHECK: %[[A:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[B:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[BT:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<4x5xf16>)
// CHECK: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[BT]] : tensor<4x5xf32>, tensor<4x5xf16>) outs(%{{.*}} : tensor<4x5xf16>)
// CHECK: arith.truncf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @residual(%a: tensor<4x8xf16>, %b: tensor<8x5xf16>, %c: tensor<4x6xf16>, %d: tensor<6x5xf16>) -> tensor<4x5xf16> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
  %1 = "onnx.MatMul"(%c, %d) : (tensor<4x6xf16>, tensor<6x5xf16>) -> tensor<4x5xf16>
  %2 = "onnx.Add"(%0, %1) : (tensor<4x5xf16>, tensor<4x5xf16>) -> tensor<4x5xf16>
  %3 = "onnx.Relu"(%2) : (tensor<4x5xf16>) -> tensor<4x5xf16>
  return %3 : tensor<4x5xf16>
}
