// Kernels whose PTX the kernel cache holds are left out of the codegen phase; the
// gpu.module records the cache and every kernel's key in kernel order. The key
// covers the kernel's IR, its name included (the PTX names it: k0 and k1 differ
// only there; k2 in one constant), and the target.
// RUN: rm -rf %t && mkdir -p %t/cache
// RUN: kiln-opt --pass-pipeline='builtin.module(gpu.module(kiln-take-cached-kernels{cache-dir=%t/cache}))' %s > %t/cold.mlir
// The keys are those of three different kernels.
// RUN: grep -o '[0-9a-f]\{64\}' %t/cold.mlir | sort -u | wc -l | FileCheck %s --check-prefix=THREE
// THREE: 3
// RUN: FileCheck %s --check-prefix=COLD < %t/cold.mlir
// COLD: gpu.module @kiln_kernels [#nvvm.target<chip = "sm_80">] attributes {kiln.kernel_cache = {dir = "{{.*}}/cache", kernels = {{\[}}["k0_s0", "{{[0-9a-f]+}}"], ["k1_s0", "{{[0-9a-f]+}}"], ["k2_s0", "{{[0-9a-f]+}}"]]}}
// COLD: gpu.func @k0_s0
// COLD: gpu.func @k1_s0
// COLD: gpu.func @k2_s0
//
// Put k2's key in the cache: k2 is left out, k0 and k1 stay.
// RUN: sed -n 's/.*"k2_s0", "\([0-9a-f]*\)".*/\1/p' %t/cold.mlir > %t/key
// RUN: echo "// k2_s0's PTX" > %t/cache/$(cat %t/key).ptx
// RUN: kiln-opt --pass-pipeline='builtin.module(gpu.module(kiln-take-cached-kernels{cache-dir=%t/cache}))' %s | FileCheck %s --check-prefix=WARM
// WARM: kiln.kernel_cache = {dir = "{{.*}}", kernels = {{\[}}["k0_s0", "{{[0-9a-f]+}}"], ["k1_s0", "{{[0-9a-f]+}}"], ["k2_s0", "{{[0-9a-f]+}}"]]}
// WARM: gpu.func @k0_s0
// WARM: gpu.func @k1_s0
// WARM-NOT: gpu.func @k2_s0
//
// No cache: nothing changes.
// RUN: kiln-opt --pass-pipeline='builtin.module(gpu.module(kiln-take-cached-kernels))' %s | FileCheck %s --check-prefix=NONE
// NONE-NOT: kiln.kernel_cache
// NONE: gpu.func @k2_s0
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels [#nvvm.target<chip = "sm_80">] {
    gpu.func @k0_s0(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k1_s0(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @k2_s0(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %two = arith.constant 2.0 : f32
      memref.store %two, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
