// RUN: kiln-opt --kiln-host-loop-order %s | FileCheck %s
// The output's contiguous dim moves innermost, after the reductions, where every
// buffer reads it with unit stride and enough other parallel iterations remain.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// A matrix product: (m, n, k) -> (m, k, n).
// CHECK-LABEL: func.func @matmul
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// 16 output columns (under min-inner, 32): too short to gain; left alone.
// CHECK-LABEL: func.func @matmul_narrow
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @matmul_narrow(%a: memref<64x32xf32>, %b: memref<32x16xf32>, %c: memref<64x16xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>) outs(%c : memref<64x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// B transposed (n, k): n is not contiguous in B; left alone.
// CHECK-LABEL: func.func @matmul_bt
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @matmul_bt(%a: memref<64x32xf32>, %b: memref<48x32xf32>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<48x32xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A matrix-vector product (one row): nothing outer to thread over; left alone.
// CHECK-LABEL: func.func @matvec
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @matvec(%a: memref<1x32xf32>, %b: memref<32x48xf32>, %c: memref<1x48xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<1x32xf32>, memref<32x48xf32>) outs(%c : memref<1x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// B read through a strided view (innermost stride 2): left alone.
// CHECK-LABEL: func.func @matmul_strided
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
func.func @matmul_strided(%a: memref<64x32xf32>, %b: memref<32x48xf32, strided<[96, 2]>>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x48xf32, strided<[96, 2]>>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A row maximum: the row index is not contiguous in the input; left alone.
// CHECK-LABEL: func.func @row_max
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @row_max(%x: memref<64x128xf32>, %m: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x128xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  }
  return
}

// Convolutions (the input column is ow + kw, or ow * 2 + kw): left alone.
// CHECK-LABEL: func.func @conv
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-LABEL: func.func @conv_stride2
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
func.func @conv(%x: memref<1x8x18x18xf32>, %w: memref<16x8x3x3xf32>, %y: memref<1x16x16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>,
                                   affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
                                   affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x8x18x18xf32>, memref<16x8x3x3xf32>) outs(%y : memref<1x16x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @conv_stride2(%x: memref<1x8x17x17xf32>, %w: memref<16x8x3x3xf32>, %y: memref<1x16x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>,
                                   affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
                                   affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x8x17x17xf32>, memref<16x8x3x3xf32>) outs(%y : memref<1x16x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
