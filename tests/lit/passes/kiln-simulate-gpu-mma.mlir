// RUN: kiln-opt --kiln-simulate-gpu %s | FileCheck %s
// Tensor cores on the simulator: mma.sync m16n8k16 passes each lane's registers
// (A and B as 32-bit pairs, C as floats) and reads the results back one by one;
// cp.async copies, their group and the wait become the simulator's queue calls, with
// addresses from the memrefs' strided metadata.
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    gpu.func @k0_s0(%g: memref<64x32xf16>, %out: memref<128x4xf32>)
        workgroup(%t : memref<2x16x40xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %n = arith.constant 8 : index
      %cp = nvgpu.device_async_copy %g[%c0, %c8], %t[%c0, %c0, %c8], 8, %n {bypassL1}
          : memref<64x32xf16> to memref<2x16x40xf16, #gpu.address_space<workgroup>>
      %grp = nvgpu.device_async_create_group %cp
      nvgpu.device_async_wait %grp {numGroups = 0 : i32}
      %p = vector.load %t[%c0, %c0, %c0] : memref<2x16x40xf16, #gpu.address_space<workgroup>>, vector<2xf16>
      %za = arith.constant dense<0.0> : vector<4x2xf16>
      %zb = arith.constant dense<0.0> : vector<2x2xf16>
      %zc = arith.constant dense<0.0> : vector<2x2xf32>
      %a = vector.insert %p, %za [0] : vector<2xf16> into vector<4x2xf16>
      %b = vector.insert %p, %zb [1] : vector<2xf16> into vector<2x2xf16>
      %d = nvgpu.mma.sync(%a, %b, %zc) {mmaShape = [16, 8, 16]}
          : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %e = vector.extract %d[1, 0] : f32 from vector<2x2xf32>
      memref.store %e, %out[%c0, %c0] : memref<128x4xf32>
      gpu.return
    }
  }
}
// CHECK-DAG: func.func private @kiln_sim_cp_async(i64, i64, i64, i64)
// CHECK-DAG: func.func private @kiln_sim_cp_async_commit()
// CHECK-DAG: func.func private @kiln_sim_cp_async_wait(i32)
// CHECK-DAG: func.func private @kiln_sim_mma_sync(i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32)
// CHECK-DAG: func.func private @kiln_sim_mma_result(i32) -> f32
// CHECK: memref.global "private" @kiln_sim_shared.k0_s0.0 : memref<2x16x40xf16>
// CHECK: func.func @k0_s0(
// CHECK: %[[SHARED:.*]] = memref.get_global @kiln_sim_shared.k0_s0.0
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata %[[SHARED]]
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: memref.extract_strided_metadata %arg0
// 8 elements of 2 bytes (the source's count times 2 read).
// CHECK: call @kiln_sim_cp_async(%{{.*}}, %{{.*}}, %c16_i64, %{{.*}}) : (i64, i64, i64, i64) -> ()
// CHECK: call @kiln_sim_cp_async_commit() : () -> ()
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: call @kiln_sim_cp_async_wait(%[[ZERO]]) : (i32) -> ()
// f16 is kind 0; A's four and B's two registers as i32, then C's four floats.
// CHECK: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK: vector.bitcast %{{.*}} : vector<2xf16> to vector<1xi32>
// CHECK: call @kiln_sim_mma_sync(%[[KIND]], %{{.*}}) : (i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> ()
// CHECK-COUNT-4: call @kiln_sim_mma_result(
// CHECK-NOT: nvgpu.
