// RUN: kiln-opt %s --convert-onnx-to-linalg | FileCheck %s

// Iteration order (batch, m, k, n): n innermost.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>

// Batched MatMul with a broadcast right operand: one contraction generic.
// CHECK-LABEL: func.func @batched
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
func.func @batched(%a: tensor<2x4x8xf32>, %b: tensor<8x5xf32>) -> tensor<2x4x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x4x8xf32>, tensor<8x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// Gemm: transB in the map, alpha/beta/C in one epilogue.
// CHECK-LABEL: func.func @gemm
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[BT]], {{.*}}]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @gemm(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) {alpha = 2.0 : f32, beta = 1.0 : f32, transA = 0 : i64, transB = 1 : i64} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
