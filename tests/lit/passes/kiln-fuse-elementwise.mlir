// RUN: kiln-opt %s --kiln-fuse-elementwise | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse-elementwise --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL

#id = affine_map<(d0) -> (d0)>
#mk = affine_map<(d0, d1) -> (d0, d1)>
#kn = affine_map<(d0, d1) -> (d1)>
#m = affine_map<(d0, d1) -> (d0)>

// An elementwise chain becomes one generic.
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.maximumf %p, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// A producer with two users, or feeding a reduction, stays separate: fusing
// would compute it twice, or once per reduction step.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: linalg.generic
func.func @not_fused(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#mk, #mk], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.negf %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#mk, #m], iterator_types = ["parallel", "reduction"]}
      ins(%n : tensor<4x8xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#mk, #mk], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.absf %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a, %s : tensor<4x8xf32>, tensor<4xf32>
}

// A transpose computes nothing: it folds into the MatMul that reads it (its
// indexing reads the untransposed operand), a reduction consumer though it is.
#t2 = affine_map<(i, j) -> (j, i)>
#i2 = affine_map<(i, j) -> (i, j)>
#amk = affine_map<(m, n, k) -> (m, k)>
#akn = affine_map<(m, n, k) -> (k, n)>
#amn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @transpose_into_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[BT:.*]]: tensor<4x3xf32>)
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[BT]] : tensor<2x3xf32>, tensor<4x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[MM]]
func.func @transpose_into_matmul(%a: tensor<2x3xf32>, %bt: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %b = linalg.transpose ins(%bt : tensor<4x3xf32>) outs(%e : tensor<3x4xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.generic {indexing_maps = [#amk, #akn, #amn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %s, %p : f32
    linalg.yield %q : f32
  } -> tensor<2x4xf32>
  return %mm : tensor<2x4xf32>
}

// A transpose of a MatMul's result becomes the MatMul's output layout: the
// output map is permuted, the transpose is gone.
// CHECK-LABEL: func.func @transpose_into_producer
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<4x2xf32>
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<4x2xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[MM]]
// LOCAL-LABEL: func.func @transpose_into_producer
// LOCAL: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d1, d0)>]
func.func @transpose_into_producer(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.generic {indexing_maps = [#amk, #akn, #amn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %s, %p : f32
    linalg.yield %q : f32
  } -> tensor<2x4xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %t = linalg.generic {indexing_maps = [#t2, #i2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%x: f32, %o2: f32):
    linalg.yield %x : f32
  } -> tensor<4x2xf32>
  return %t : tensor<4x2xf32>
}

// A keepdims reshape between a reduction and its elementwise consumer folds into
// the consumer's loops, so the consumer reads the reduction's result directly.
#r3 = affine_map<(i, j) -> (i, j)>
#r2 = affine_map<(i, j) -> (i)>
#e2 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @reshape_folds
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>)
// CHECK: arith.divf
// CHECK: %[[K:.*]] = tensor.expand_shape %[[D]] {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK: return %[[K]]
func.func @reshape_folds(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %eight = arith.constant 8.0 : f32
  %o = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#r3, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %k = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x1xf32>
  %d = linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<4x1xf32>) outs(%e : tensor<4x1xf32>) {
  ^bb0(%v: f32, %o2: f32):
    %r = arith.divf %v, %eight : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  return %d : tensor<4x1xf32>
}
