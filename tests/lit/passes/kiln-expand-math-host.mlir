// RUN: kiln-opt --kiln-expand-math %s | FileCheck %s
// RUN: kiln-opt --kiln-host-codegen-pipeline %s | FileCheck %s --check-prefix=HOST
// On the host the same expansions run on the kernels: a loop of tanh and erf (an
// LSTM gate, exact GELU) becomes arithmetic that vectorizes; f64 math stays what
// LLVM makes a libm call.
module {
  // CHECK-LABEL: func.func @k0
  // CHECK-NOT: math.tanh
  // CHECK-NOT: math.erf
  // CHECK: math.fma
  // CHECK: math.log %{{.*}} : f64
  // HOST-LABEL: llvm.func @k0
  // HOST-NOT: tanh
  // HOST-NOT: erf
  // HOST: llvm.intr.fma
  // HOST: llvm.intr.log(%{{.*}}) : (f64) -> f64
  func.func @k0(%x: memref<64xf32>, %y: memref<64xf64>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        outs(%x : memref<64xf32>) {
    ^bb0(%v: f32):
      %t = math.tanh %v : f32
      %e = math.erf %t : f32
      linalg.yield %e : f32
    }
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        outs(%y : memref<64xf64>) {
    ^bb0(%v: f64):
      %l = math.log %v : f64
      linalg.yield %l : f64
    }
    return
  }
}
