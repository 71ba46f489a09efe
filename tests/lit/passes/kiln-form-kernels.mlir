// RUN: kiln-opt %s --kiln-form-kernels | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// Each compute op is its own kernel; tensor.empty, fill and scalar constants are
// cloned into the kernel that uses them; tensor constants stay outside as inputs.
// CHECK-LABEL: func.func @two_kernels
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[K0:.*]] = kiln.kernel "k0"(%[[X]], %[[W]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK: tensor.empty
// CHECK: linalg.generic
// CHECK: kiln.yield
// CHECK: %[[K1:.*]] = kiln.kernel "k1"(%[[K0]])
// CHECK: linalg.fill
// CHECK: return %[[K1]]
func.func @two_kernels(%x: tensor<4xf32>) -> tensor<f32> {
  %w = arith.constant dense<2.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%m : tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// Fusion rules. epilogue: the elementwise generic that alone reads a reduction's
// result at the same index joins its kernel, and only its result leaves it; pad:
// the tensor.pad only a reduction reads joins that reduction's kernel.
// RUN: kiln-opt %s --kiln-form-kernels=disable=epilogue,pad,concat,reduction | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --kiln-form-kernels=disable=attention | FileCheck %s --check-prefix=ATT
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[K:.*]] = kiln.kernel "k0"(%arg0, %arg1, %arg2) : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
// CHECK: linalg.fill
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[EP:.*]] = linalg.generic {{.*}}ins(%[[MM]], %{{.*}} : tensor<2x4xf32>, tensor<4xf32>)
// CHECK: kiln.yield %[[EP]] : tensor<2x4xf32>
// CHECK-NOT: kiln.kernel
// CHECK: return %[[K]]
// OFF-LABEL: func.func @epilogue
// OFF: kiln.kernel "k0"
// OFF: kiln.kernel "k1"
func.func @epilogue(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %bias: tensor<4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %ep = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %ep : tensor<2x4xf32>
}

// The reduction's result is also a graph output: the consumer reads it from a
// kernel of its own.
// CHECK-LABEL: func.func @shared_result
// CHECK: kiln.kernel "k0"
// CHECK: kiln.kernel "k1"
func.func @shared_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %ep = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %mm, %ep : tensor<2x4xf32>, tensor<2x4xf32>
}

// A window sum over a padded row: the pad is in the reduction's kernel.
// CHECK-LABEL: func.func @pad_into_window
// CHECK: %[[K:.*]] = kiln.kernel "k0"(%arg0) : (tensor<6xf32>) -> tensor<6xf32> {
// CHECK: tensor.pad
// CHECK: linalg.generic
// CHECK: kiln.yield
// CHECK-NOT: kiln.kernel
// OFF-LABEL: func.func @pad_into_window
// OFF: kiln.kernel "k0"
// OFF: tensor.pad
// OFF: kiln.kernel "k1"
func.func @pad_into_window(%x: tensor<6xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<6xf32> to tensor<8xf32>
  %w = tensor.empty() : tensor<3xf32>
  %e = tensor.empty() : tensor<6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(o, k) -> (o + k)>, affine_map<(o, k) -> (k)>, affine_map<(o, k) -> (o)>], iterator_types = ["parallel", "reduction"]}
      ins(%p, %w : tensor<8xf32>, tensor<3xf32>) outs(%acc : tensor<6xf32>) {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  return %s : tensor<6xf32>
}

// concat: the insert_slice chain and both producers are one kernel; each slice is
// inserted as soon as it is computed, and every user of a tensor.empty gets its
// own (so that bufferization writes each producer into its slice, no copies).
// CHECK-LABEL: func.func @concat
// CHECK: %[[K:.*]] = kiln.kernel "k0"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32> {
// CHECK-DAG: %[[D:.*]] = tensor.empty() : tensor<2x6xf32>
// CHECK-DAG: %[[E0:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} outs(%[[E1]] : tensor<2x3xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[D]][0, 0] [2, 3] [1, 1]
// CHECK: %[[B:.*]] = linalg.generic {{.*}} outs(%[[E0]] : tensor<2x3xf32>)
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 3] [1, 1]
// CHECK: kiln.yield %[[I1]]
// CHECK-NOT: kiln.kernel
// OFF-LABEL: func.func @concat
// OFF-COUNT-4: kiln.kernel
func.func @concat(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = math.exp %v : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  %d = tensor.empty() : tensor<2x6xf32>
  %i0 = tensor.insert_slice %a into %d[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %i1 = tensor.insert_slice %b into %i0[0, 3] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  return %i1 : tensor<2x6xf32>
}

// reduction: a row reduction, the elementwise op that reads its result through a
// keepdims reshape in the same row, and the one after: one kernel (the reshape
// is cloned after the reduction). A slice is a view in the kernel that reads it.
#x2 = affine_map<(r, c) -> (r, c)>
#row = affine_map<(r, c) -> (r)>
#b2 = affine_map<(r, c) -> (r, 0)>
// CHECK-LABEL: func.func @row_group
// CHECK: %[[K:.*]] = kiln.kernel "k0"(%arg0) : (tensor<4x16xf32>) -> tensor<4x8xf32> {
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 8] [1, 1]
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X]]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[S]]
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[E]]
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[C]]
// CHECK: kiln.yield %[[Q]]
// CHECK-NOT: kiln.kernel
// OFF-LABEL: func.func @row_group
// OFF-COUNT-3: kiln.kernel
func.func @row_group(%in: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %x = tensor.extract_slice %in[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#x2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %k = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#x2, #b2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %k : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %m: f32, %o2: f32):
    %r = arith.subf %v, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %q = linalg.generic {indexing_maps = [#x2, #x2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%c, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %w: f32, %o2: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %q : tensor<4x8xf32>
}

// reduction, with contractions: attention. Q K^T (each (b, i) row of scores reads
// its batch's K), a row sum, the division and P V form one kernel of rows (b, i);
// a contraction with a weight every row shares (no batch index) stays a kernel of
// its own (a tiled contraction).
#q = affine_map<(b, i, j, d) -> (b, i, d)>
#k = affine_map<(b, i, j, d) -> (b, j, d)>
#s = affine_map<(b, i, j, d) -> (b, i, j)>
#x3 = affine_map<(b, i, j) -> (b, i, j)>
#r3 = affine_map<(b, i, j) -> (b, i)>
#p = affine_map<(b, i, d, j) -> (b, i, j)>
#v = affine_map<(b, i, d, j) -> (b, j, d)>
#o = affine_map<(b, i, d, j) -> (b, i, d)>
#w = affine_map<(b, i, d, j) -> (j, d)>
// CHECK-LABEL: func.func @attention
// CHECK: kiln.kernel "k0"(%arg0, %arg1, %arg2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-COUNT-4: linalg.generic
// CHECK: kiln.yield
// CHECK: kiln.kernel "k1"
// CHECK-COUNT-1: linalg.generic
// CHECK: kiln.yield
// CHECK-NOT: kiln.kernel
// OFF-LABEL: func.func @attention
// OFF-COUNT-5: kiln.kernel
// Rule "attention" off: the contractions stay kernels of their own around the
// row group (sum, division).
// ATT-LABEL: func.func @attention
// ATT-COUNT-4: kiln.kernel
// ATT-NOT: kiln.kernel
func.func @attention(%qv: tensor<2x4x8xf32>, %kv: tensor<2x4x8xf32>, %vv: tensor<2x4x8xf32>,
                     %wv: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x4x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qv, %kv : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%z4 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scores : tensor<2x4x4xf32>) outs(%z2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %probs = linalg.generic {indexing_maps = [#x3, #r3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%scores, %sum : tensor<2x4x4xf32>, tensor<2x4xf32>) outs(%e4 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %r = arith.divf %a, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %e8 = tensor.empty() : tensor<2x4x8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ctx = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%probs, %vv : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%z8 : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %z8b = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %proj = linalg.generic {indexing_maps = [#p, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ctx, %wv : tensor<2x4x8xf32>, tensor<8x8xf32>) outs(%z8b : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  return %proj : tensor<2x4x8xf32>
}
