// RUN: kiln-opt --kiln-map-to-gpu --kiln-simulate-gpu %s | FileCheck %s
// The cuda-sim target: the mapped gpu.funcs become host functions that call the
// SIMT simulator; shared memory becomes globals; the plan says which stages
// synchronize (their threads run as fibers).
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(r, c) -> (r, c)>
#red = affine_map<(r, c) -> (r)>
module {
  func.func @k0(%a: memref<64x96xf32>, %b: memref<96x128xf32>, %c: memref<64x128xf32>) attributes {kiln.kernel} {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<64x96xf32>, memref<96x128xf32>) outs(%c : memref<64x128xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func @k1(%x: memref<8x1024xf32>, %m: memref<8xf32>) attributes {kiln.kernel} {
    %ninf = arith.constant 0xFF800000 : f32
    linalg.fill ins(%ninf : f32) outs(%m : memref<8xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<8x1024xf32>) outs(%m : memref<8xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %r = arith.maximumf %acc, %v : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @k2(%x: memref<8x1024xf32>, %y: memref<8x1024xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<8x1024xf32>) outs(%y : memref<8x1024xf32>) {
    ^bb0(%v: f32, %o: f32):
      %e = math.exp %v : f32
      linalg.yield %e : f32
    }
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %b0 = kiln.slice offset 0 size 0 : memref<64x96xf32>
    %b1 = kiln.slice offset 0 size 0 : memref<96x128xf32>
    %b2 = kiln.slice offset 0 size 0 : memref<64x128xf32>
    kiln.launch @k0(%b0, %b1, %b2) stream 0 {num_inputs = 2 : i64} : memref<64x96xf32>, memref<96x128xf32>, memref<64x128xf32>
    %b3 = kiln.slice offset 0 size 0 : memref<8x1024xf32>
    %b4 = kiln.slice offset 0 size 0 : memref<8xf32>
    kiln.launch @k1(%b3, %b4) stream 0 {num_inputs = 1 : i64} : memref<8x1024xf32>, memref<8xf32>
    %b5 = kiln.slice offset 0 size 0 : memref<8x1024xf32>
    %b6 = kiln.slice offset 0 size 0 : memref<8x1024xf32>
    kiln.launch @k2(%b5, %b6) stream 0 {num_inputs = 1 : i64} : memref<8x1024xf32>, memref<8x1024xf32>
  }
}
// CHECK-NOT: gpu.module
// CHECK-DAG: func.func private @kiln_sim_thread_id(i32) -> i64
// CHECK-DAG: func.func private @kiln_sim_block_id(i32) -> i64
// CHECK-DAG: func.func private @kiln_sim_barrier()
// CHECK-DAG: func.func private @kiln_sim_shuffle(i32, i32, i32, i32) -> i32
// CHECK-DAG: func.func private @kiln_sim_shuffle_valid() -> i32
// GEMM: both shared tiles are globals (one block runs at a time).
// CHECK: memref.global "private" @kiln_sim_shared.k0_s0.0 : memref<64x32xf32> {alignment = 64 : i64}
// CHECK: memref.global "private" @kiln_sim_shared.k0_s0.1 : memref<32x64xf32> {alignment = 64 : i64}
// CHECK: func.func @k0_s0(%{{.*}}: memref<64x96xf32>, %{{.*}}: memref<96x128xf32>, %{{.*}}: memref<64x128xf32>) {
// CHECK: memref.get_global @kiln_sim_shared.k0_s0.0
// CHECK: call @kiln_sim_thread_id
// CHECK: call @kiln_sim_block_id
// CHECK: call @kiln_sim_barrier()
// Row max: f32 shuffles go through i32 and back; valid is a separate call.
// CHECK: func.func @k1_s0(
// CHECK: %[[V:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[R:.*]] = call @kiln_sim_shuffle(%[[V]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) -> i32
// CHECK: arith.bitcast %[[R]] : i32 to f32
// CHECK: call @kiln_sim_shuffle_valid()
// CHECK: call @kiln_sim_barrier()
// Elementwise: no barrier, no shuffle.
// CHECK: func.func @k2_s0(
// CHECK-NOT: kiln_sim_barrier
// CHECK-NOT: kiln_sim_shuffle
// CHECK: return
// CHECK: kiln.launch @k0({{.*}}sync = true>]
// CHECK: kiln.launch @k1({{.*}}sync = true>]
// CHECK: kiln.launch @k2({{.*}}sync = false>]
