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
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %x0 = kiln.slice offset 0 size 0 : memref<16x128xf32>
    %y0 = kiln.slice offset 0 size 0 : memref<16x256xf32>
    kiln.launch @k0(%x0, %y0) stream 0 {num_inputs = 1 : i64} : memref<16x128xf32>, memref<16x256xf32>
    %x = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %y1 = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %z1 = kiln.slice offset 0 size 0 : memref<4x8xf32>
    kiln.launch @k1(%x, %y1, %z1) stream 0 {num_inputs = 1 : i64} : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>
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
// CHECK: kiln.launch @k0({{.*}}gpu_stages = [#kiln.gpu_stage<"k0_s0_1more", grid = [4, 1, 1], block = [256, 1, 1], sync = false>]
// CHECK: kiln.launch @k1({{.*}}gpu_stages = [#kiln.gpu_stage<"k1_s0", {{.*}}>, #kiln.gpu_stage<"k1_s1", {{.*}}>]
