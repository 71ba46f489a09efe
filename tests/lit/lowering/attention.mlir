// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s

// kiln.attention: the contraction Q Kt (reduction last), the scale and keep-mask,
// Softmax over the last axis (max, exp, sum, divide), the contraction P V.
// CHECK-LABEL: func.func @attention
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg0, %arg1
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[S]], %arg3
// CHECK: arith.mulf
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[P]], %arg2
// CHECK-NOT: kiln.attention
func.func @attention(%q: tensor<2x3x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x6xf32>, %keep: tensor<2x1x5xi1>) -> tensor<2x3x6xf32> {
  %o = "kiln.attention"(%q, %kt, %v, %keep) <{fill = -1.0e4 : f64, mask_kind = "keep", scale = 0.125 : f64}> : (tensor<2x3x8xf32>, tensor<2x8x5xf32>, tensor<2x5x6xf32>, tensor<2x1x5xi1>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// f16: both contractions follow the accumulator policy (accumulatorType): f16
// read, widened, summed into an f32 accumulator, narrowed by an elementwise truncf.
// CHECK-LABEL: func.func @attention_f16
// CHECK: %[[S16:.*]] = linalg.generic {{.*}}"reduction"]{{.*}} ins(%arg0, %arg1 : tensor<2x3x8xf16>, tensor<2x8x5xf16>) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[S16]] : tensor<2x3x5xf32>) outs(%{{.*}} : tensor<2x3x5xf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK: %[[O16:.*]] = linalg.generic {{.*}}"reduction"]{{.*}} outs(%{{.*}} : tensor<2x3x6xf32>)
// CHECK: arith.addf {{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[O16]] : tensor<2x3x6xf32>) outs(%{{.*}} : tensor<2x3x6xf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
func.func @attention_f16(%q: tensor<2x3x8xf16>, %kt: tensor<2x8x5xf16>, %v: tensor<2x5x6xf16>) -> tensor<2x3x6xf16> {
  %o = "kiln.attention"(%q, %kt, %v) <{fill = 0.0 : f64, mask_kind = "none", scale = 0.125 : f64}> : (tensor<2x3x8xf16>, tensor<2x8x5xf16>, tensor<2x5x6xf16>) -> tensor<2x3x6xf16>
  return %o : tensor<2x3x6xf16>
}
