// RUN: kiln-opt --pass-pipeline='builtin.module(gpu.module(kiln-expand-math))' %s | FileCheck %s
// Math without a PTX instruction becomes arithmetic in the gpu.module: integer pow
// by squaring, exp by its polynomial, tanh by its expansion; no call remains.
module attributes {gpu.container_module} {
  gpu.module @kiln_kernels {
    // CHECK-LABEL: gpu.func @ipowi
    // CHECK-NOT: math.ipowi
    // CHECK: scf.for
    // CHECK: arith.muli
    // CHECK: arith.select
    gpu.func @ipowi(%x: memref<4xi32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xi32>
      %r = math.ipowi %v, %v : i32
      memref.store %r, %x[%c0] : memref<4xi32>
      gpu.return
    }
    // powf: exp(b log|a|), NaN for a negative base with a non-integer exponent,
    // negated for an odd one, 1 for b = 0 or a = 1.
    // CHECK-LABEL: gpu.func @powf
    // CHECK-NOT: math.powf
    // CHECK: arith.constant 0x7FC00000 : f32
    // CHECK: math.floor
    // CHECK: arith.remf
    // CHECK: arith.cmpf olt
    // CHECK: gpu.return
    gpu.func @powf(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      %p = math.powf %v, %v : f32
      memref.store %p, %x[%c0] : memref<4xf32>
      gpu.return
    }
    // CHECK-LABEL: gpu.func @exp_tanh
    // CHECK-NOT: math.exp
    // CHECK-NOT: math.tanh
    // CHECK: math.fma
    // CHECK: gpu.return
    gpu.func @exp_tanh(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<4xf32>
      %e = math.exp %v : f32
      %t = math.tanh %e : f32
      memref.store %t, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
