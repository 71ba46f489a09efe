// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// A row-local kernel (a row sum, then each element minus its row's sum, read
// through a keepdims view) is one launch: one block per row, the sum by
// gpu.all_reduce (shuffles) and stored by thread 0, a barrier, then the threads stride
// over the row's elements.
#x2 = affine_map<(r, c) -> (r, c)>
#row = affine_map<(r, c) -> (r)>
#b2 = affine_map<(r, c) -> (r, 0)>
module {
  func.func @k0(%x: memref<4x300xf32>, %y: memref<4x300xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    %s = memref.alloc() : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
    linalg.generic {indexing_maps = [#x2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x300xf32>) outs(%s : memref<4xf32>) {
    ^bb0(%v: f32, %a: f32):
      %r = arith.addf %a, %v : f32
      linalg.yield %r : f32
    }
    %k = memref.expand_shape %s [[0, 1]] output_shape [4, 1] : memref<4xf32> into memref<4x1xf32>
    linalg.generic {indexing_maps = [#x2, #b2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %k : memref<4x300xf32>, memref<4x1xf32>) outs(%y : memref<4x300xf32>) {
    ^bb0(%v: f32, %m: f32, %o: f32):
      %r = arith.subf %v, %m : f32
      linalg.yield %r : f32
    }
    memref.dealloc %s : memref<4xf32>
    return
  }
  // A row kernel needs every stage over the same rows: a transpose of the
  // kernel's own buffer reads other rows, so its stages launch one by one.
  func.func @k1(%x: memref<8x8xf32>, %y: memref<8x8xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    %s = memref.alloc() : memref<8x8xf32>
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<8x8xf32>) outs(%s : memref<8x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [affine_map<(r, c) -> (c, r)>, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%s : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      linalg.yield %v : f32
    }
    memref.dealloc %s : memref<8x8xf32>
    return
  }
  // Attention in one launch, one block per (b, i) row: each thread reduces its
  // scores (Q K^T) serially, the row sum by the block, the division, then each
  // thread reduces its outputs of P V serially, written into a [b, d, i] layout
  // (rows permuted: nothing in the kernel reads it).
  func.func @k2(%q: memref<2x4x8xf32>, %k: memref<2x4x8xf32>, %v: memref<2x4x8xf32>,
                %y: memref<2x8x4xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    %s = memref.alloc() : memref<2x4x4xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<2x4x4xf32>)
    linalg.generic {indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>, affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%s : memref<2x4x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    }
    %t = memref.alloc() : memref<2x4xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<2x4xf32>)
    linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%s : memref<2x4x4xf32>) outs(%t : memref<2x4xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    }
    %p = memref.alloc() : memref<2x4x4xf32>
    linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%s, %t : memref<2x4x4xf32>, memref<2x4xf32>) outs(%p : memref<2x4x4xf32>) {
    ^bb0(%a: f32, %u: f32, %o: f32):
      %r = arith.divf %a, %u : f32
      linalg.yield %r : f32
    }
    linalg.fill ins(%zero : f32) outs(%y : memref<2x8x4xf32>)
    linalg.generic {indexing_maps = [affine_map<(b, i, d, j) -> (b, i, j)>, affine_map<(b, i, d, j) -> (b, j, d)>, affine_map<(b, i, d, j) -> (b, d, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%p, %v : memref<2x4x4xf32>, memref<2x4x8xf32>) outs(%y : memref<2x8x4xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    }
    memref.dealloc %s : memref<2x4x4xf32>
    memref.dealloc %t : memref<2x4xf32>
    memref.dealloc %p : memref<2x4x4xf32>
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %x = kiln.slice offset 0 size 0 : memref<4x300xf32>
    %y = kiln.slice offset 0 size 0 : memref<4x300xf32>
    kiln.launch @k0(%x, %y) stream 0 {num_inputs = 1 : i64} : memref<4x300xf32>, memref<4x300xf32>
    %a = kiln.slice offset 0 size 0 : memref<8x8xf32>
    %b = kiln.slice offset 0 size 0 : memref<8x8xf32>
    kiln.launch @k1(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<8x8xf32>, memref<8x8xf32>
    %q = kiln.slice offset 0 size 0 : memref<2x4x8xf32>
    %y2 = kiln.slice offset 0 size 0 : memref<2x8x4xf32>
    kiln.launch @k2(%q, %q, %q, %y2) stream 0 {num_inputs = 3 : i64} : memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x4x8xf32>, memref<2x8x4xf32>
  }
}
// CHECK: gpu.func @k0_s0({{.*}}) {{.*}}known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[ROW:.*]] = gpu.block_id x
// CHECK: scf.for
// CHECK: gpu.shuffle
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: arith.subf
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: gpu.return
// CHECK-NOT: gpu.func @k0_s1
// CHECK: gpu.func @k1_s0
// CHECK: gpu.func @k1_s1
// CHECK: gpu.func @k2_s0({{.*}}) {{.*}}known_block_size = array<i32: 32, 1, 1>
// CHECK: gpu.block_id x
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: gpu.shuffle
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-NOT: gpu.func @k2_s1
// CHECK: kiln.launch @k0({{.*}}gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [4, 1, 1], block = [256, 1, 1], sync = true>]
// CHECK: kiln.launch @k2({{.*}}gpu_stages = [#kiln.gpu_stage<"k2_s0", grid = [8, 1, 1], block = [32, 1, 1], sync = true>]
