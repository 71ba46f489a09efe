// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// Stages that touch disjoint memory and share a block shape are one launch: a
// Concat's producers, each writing its slice of the result. The merged function
// branches on the block index to each stage's code, which sees its own block index
// (here the second stage's blocks start at 2).
#x2 = affine_map<(r, c) -> (r, c)>
module {
  func.func @k0(%x: memref<16x128xf32>, %y: memref<16x256xf32>) attributes {kiln.kernel} {
    %a = memref.subview %y[0, 0] [16, 128] [1, 1] : memref<16x256xf32> to memref<16x128xf32, strided<[256, 1]>>
    %b = memref.subview %y[0, 128] [16, 128] [1, 1] : memref<16x256xf32> to memref<16x128xf32, strided<[256, 1], offset: 128>>
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<16x128xf32>) outs(%a : memref<16x128xf32, strided<[256, 1]>>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<16x128xf32>) outs(%b : memref<16x128xf32, strided<[256, 1], offset: 128>>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    }
    return
  }
  // The second stage reads what the first writes: two launches, in order.
  func.func @k1(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<4x8xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%y : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    }
    return
  }
  // A tiled contraction (16 x 16 threads, 2 x 2 outputs each: one block) and an
  // elementwise stage (256 x 1, one block) writing disjoint parts: one launch of
  // 256 x 1 threads; the contraction's thread indices come from the linear one.
  func.func @k2(%a: memref<32x32xf32>, %b: memref<32x32xf32>, %c: memref<16x64xf32>,
                %y: memref<48x64xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    %l = memref.subview %y[0, 0] [32, 32] [1, 1] : memref<48x64xf32> to memref<32x32xf32, strided<[64, 1]>>
    %r = memref.subview %y[32, 0] [16, 64] [1, 1] : memref<48x64xf32> to memref<16x64xf32, strided<[64, 1], offset: 2048>>
    linalg.fill ins(%zero : f32) outs(%l : memref<32x32xf32, strided<[64, 1]>>)
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%l : memref<32x32xf32, strided<[64, 1]>>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<16x64xf32>) outs(%r : memref<16x64xf32, strided<[64, 1], offset: 2048>>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.negf %v : f32
      linalg.yield %n : f32
    }
    return
  }
  // Four independent contractions, 64x64 and a 64x48 (16 KB of shared tiles each,
  // sm_80), into disjoint quarters: merged while the launch's shared memory stays
  // within a block's 48 KB, three and then one.
  func.func @k3(%a: memref<64x96xf32>, %b: memref<96x64xf32>, %y: memref<256x64xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    %q0 = memref.subview %y[0, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1]>>
    %q1 = memref.subview %y[64, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: 4096>>
    %q2 = memref.subview %y[128, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: 8192>>
    %b48 = memref.subview %b[0, 0] [96, 48] [1, 1] : memref<96x64xf32> to memref<96x48xf32, strided<[64, 1]>>
    %q3 = memref.subview %y[192, 0] [64, 48] [1, 1] : memref<256x64xf32> to memref<64x48xf32, strided<[64, 1], offset: 12288>>
    linalg.fill ins(%zero : f32) outs(%q0 : memref<64x64xf32, strided<[64, 1]>>)
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<64x96xf32>, memref<96x64xf32>) outs(%q0 : memref<64x64xf32, strided<[64, 1]>>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
    linalg.fill ins(%zero : f32) outs(%q1 : memref<64x64xf32, strided<[64, 1], offset: 4096>>)
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<64x96xf32>, memref<96x64xf32>) outs(%q1 : memref<64x64xf32, strided<[64, 1], offset: 4096>>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
    linalg.fill ins(%zero : f32) outs(%q2 : memref<64x64xf32, strided<[64, 1], offset: 8192>>)
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<64x96xf32>, memref<96x64xf32>) outs(%q2 : memref<64x64xf32, strided<[64, 1], offset: 8192>>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
    linalg.fill ins(%zero : f32) outs(%q3 : memref<64x48xf32, strided<[64, 1], offset: 12288>>)
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b48 : memref<64x96xf32>, memref<96x48xf32, strided<[64, 1]>>) outs(%q3 : memref<64x48xf32, strided<[64, 1], offset: 12288>>) {
    ^bb0(%u: f32, %v: f32, %acc: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    }
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %x0 = kiln.slice offset 0 size 0 : memref<16x128xf32>
    %y0 = kiln.slice offset 0 size 0 : memref<16x256xf32>
    kiln.launch @k0(%x0, %y0) stream 0 {num_inputs = 1 : i64} : memref<16x128xf32>, memref<16x256xf32>
    %x = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %y1 = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %z1 = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %m = kiln.slice offset 0 size 0 : memref<32x32xf32>
    %c2 = kiln.slice offset 0 size 0 : memref<16x64xf32>
    %y2 = kiln.slice offset 0 size 0 : memref<48x64xf32>
    kiln.launch @k2(%m, %m, %c2, %y2) stream 0 {num_inputs = 3 : i64} : memref<32x32xf32>, memref<32x32xf32>, memref<16x64xf32>, memref<48x64xf32>
    kiln.launch @k1(%x, %y1, %z1) stream 0 {num_inputs = 1 : i64} : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
    %a3 = kiln.slice offset 0 size 0 : memref<64x96xf32>
    %b3 = kiln.slice offset 0 size 0 : memref<96x64xf32>
    %y3 = kiln.slice offset 0 size 0 : memref<256x64xf32>
    kiln.launch @k3(%a3, %b3, %y3) stream 0 {num_inputs = 2 : i64} : memref<64x96xf32>, memref<96x64xf32>, memref<256x64xf32>
  }
}
// CHECK: gpu.func @k0_s0_1more(
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[IN0:.*]] = arith.cmpi ult, %[[BID]], %[[C2:.*]] : index
// CHECK: cf.cond_br %[[IN0]], ^[[S0:.*]], ^[[T1:.*]]
// CHECK: ^[[S0]]:
// CHECK: arith.negf
// CHECK: cf.br ^[[EXIT:.*]]
// CHECK: ^[[T1]]:
// CHECK: cf.cond_br %{{.*}}, ^[[S1:.*]], ^[[EXIT]]
// CHECK: ^[[S1]]:
// CHECK: arith.subi %[[BID]], %[[C2]] : index
// CHECK: math.exp
// CHECK: cf.br ^[[EXIT]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: gpu.return
// CHECK-NOT: gpu.func @k0_s1
// CHECK: gpu.func @k1_s0
// CHECK: gpu.func @k1_s1
// CHECK: gpu.func @k2_s0_1more({{.*}}known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: arith.remui %[[T]], %c16
// CHECK: arith.divui %[[T]], %c16
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: arith.negf
// CHECK-NOT: gpu.func @k2_s1
// CHECK: kiln.launch @k0({{.*}}gpu_stages = [#kiln.gpu_stage<"k0_s0_1more", grid = [4, 1, 1], block = [256, 1, 1], sync = false>]
// CHECK: kiln.launch @k2({{.*}}gpu_stages = [#kiln.gpu_stage<"k2_s0_1more", grid = [2, 1, 1], block = [256, 1, 1], sync = true>]
// CHECK: kiln.launch @k1({{.*}}gpu_stages = [#kiln.gpu_stage<"k1_s0", {{.*}}>, #kiln.gpu_stage<"k1_s1", {{.*}}>]
// CHECK: kiln.launch @k3({{.*}}gpu_stages = [#kiln.gpu_stage<"k3_s0_2more", grid = [3, 1, 1], block = [16, 16, 1], sync = true>, #kiln.gpu_stage<"k3_s3", grid = [1, 1, 1], block = [16, 16, 1], sync = true>]
