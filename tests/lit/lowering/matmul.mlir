// RUN: kiln-opt %s --kiln-convert-onnx-to-linalg | FileCheck %s
// CHECK-DAG: #[[BIJ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BJK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[DIAG:.*]] = affine_map<(d0, d1) -> (d0, d1, d1)>

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

// Einsum: one generic whose maps come from the equation; output letters are
// parallel loops, the others reductions into a zero-filled accumulator.
// CHECK-LABEL: func.func @einsum_matmul
// CHECK: linalg.generic {indexing_maps = [#[[BIJ]], #[[BJK]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @einsum_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "onnx.Einsum"(%a, %b) {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// A letter repeated in one operand reads its diagonal; the ellipsis is a batch.
// CHECK-LABEL: func.func @einsum_diagonal
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
func.func @einsum_diagonal(%a: tensor<3x4x4xf32>) -> tensor<3x4xf32> {
  %0 = "onnx.Einsum"(%a) {equation = "...ii ->...i"} : (tensor<3x4x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// No arrow: the output holds the letters that appear once (here none: a scalar).
// CHECK-LABEL: func.func @einsum_implicit
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} {{.*}} outs(%{{.*}} : tensor<f32>)
func.func @einsum_implicit(%a: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<f32> {
  %0 = "onnx.Einsum"(%a, %b) {equation = "i,i"} : (tensor<5xf32>, tensor<5xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Det: a generic over the batch that loads each 2x2 matrix and eliminates it with
// partial pivoting (a row exchange when the lower pivot is larger flips the sign).
// CHECK-LABEL: func.func @det
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: math.absf
// CHECK: arith.cmpf ogt
// CHECK: arith.negf
// CHECK: arith.divf
// CHECK: linalg.yield
func.func @det(%x: tensor<3x2x2xf32>) -> tensor<3xf32> {
  %y = "onnx.Det"(%x) : (tensor<3x2x2xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// The accumulator policy: an f16 MatMul reads f16, multiplies and accumulates
// in f32 (the fill and the generic's result are f32), and one elementwise
// truncf gives the f16 result (the kernels phase makes it the epilogue).
// CHECK-LABEL: func.func @half
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x5xf16>) outs(%[[F]] : tensor<4x5xf32>)
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<4x5xf16>)
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @half(%a: tensor<4x8xf16>, %b: tensor<8x5xf16>) -> tensor<4x5xf16> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
  return %0 : tensor<4x5xf16>
}
