// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// RUN: kiln-opt --kiln-map-to-gpu=gpu-arch=sm_90 %s | FileCheck %s --check-prefix=SM90
// RUN: kiln-opt --kiln-map-to-gpu=gpu-arch=sm_86 %s | FileCheck %s --check-prefix=SM86
// One kernel per mapping strategy: a GEMM (tiled through shared memory), a row
// reduction (one block per row, gpu.all_reduce) and an elementwise op (four
// consecutive elements per thread); the fills before the reductions fold into their
// initial values.
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
// The architecture is the gpu.module's target (sm_80 by default).
// SM90: gpu.module @kiln_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx78">]
// CHECK: gpu.module @kiln_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">]
// GEMM: 16x16 threads, each with 4x4 outputs in registers (a 64x64 block tile);
// both operand tiles in shared memory, 32 steps of K at a time on sm_80 (16 on
// sm_86), barriers around each; 96 is three whole K steps: a constant inner trip
// count. Per K step a thread loads 4 row and 4 column values and does 16
// multiply-adds.
// CHECK: gpu.func @k0_s0({{.*}}) workgroup({{.*}}memref<64x32xf32, #gpu.address_space<workgroup>>, {{.*}}memref<32x64xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 16, 16, 1>}
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.*}} = %c0 to %c96 step %c32 iter_args({{([^,]*, ){15}[^,]*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// CHECK-COUNT-4: memref.load %{{.*}} : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.load %{{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.store %{{.*}} : memref<64x128xf32>
// SM86: gpu.func @k0_s0({{.*}}) workgroup({{.*}}memref<64x16xf32, #gpu.address_space<workgroup>>, {{.*}}memref<16x64xf32, #gpu.address_space<workgroup>>)
// Row max: one block per row; the lowered all_reduce shuffles within warps and
// meets in shared memory; the fill's -inf is the initial value.
// CHECK: gpu.func @k1_s0({{.*}}) workgroup({{.*}}memref<32xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: arith.maximumf
// Elementwise: every argument declared 16-byte aligned; each thread loads four
// consecutive elements, computes them (exp as a polynomial), then stores all four,
// so that LLVM merges the accesses into 16-byte ones.
// CHECK: gpu.func @k2_s0(%[[X:.*]]: memref<8x1024xf32>, %[[Y:.*]]: memref<8x1024xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: memref.assume_alignment %[[X]], 16
// CHECK: memref.assume_alignment %[[Y]], 16
// CHECK: gpu.thread_id  x
// CHECK: gpu.block_id  x
// CHECK: %[[I0:.*]] = arith.muli %{{.*}}, %c4
// CHECK: memref.load %[[X]][%{{.*}}, %[[I0]]]
// CHECK-NOT: memref.store
// CHECK: %[[I3:.*]] = arith.addi %[[I0]], %c3
// CHECK: memref.load %[[X]][%{{.*}}, %[[I3]]]
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[Y]][%{{.*}}, %[[I0]]]
// CHECK: memref.store
// CHECK: memref.store
// CHECK: memref.store %{{.*}}, %[[Y]][%{{.*}}, %[[I3]]]
// CHECK-NEXT: }
// CHECK: gpu.return
// The launch geometry is recorded on the plan's launches.
// A contraction's launch also records its engine and why (f32: SIMT).
// CHECK: kiln.launch @k0({{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [2, 1, 1], block = [16, 16, 1], sync = true>], kiln.engine = "simt", kiln.engine_reason = "f32 operands (fp32 builds keep SIMT; --precision fp16 or auto, or --allow-tf32)", num_inputs = 2 : i64}
// CHECK: kiln.launch @k1({{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k1_s0", grid = [8, 1, 1], block = [256, 1, 1], sync = true>], num_inputs = 1 : i64}
// CHECK: kiln.launch @k2({{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k2_s0", grid = [8, 1, 1], block = [256, 1, 1], sync = false>], num_inputs = 1 : i64}
