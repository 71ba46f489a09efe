// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// Kernels with the same body (the repeated layers of a transformer, a ResNet's
// repeated blocks) are mapped once: every launch of them runs the first one's
// gpu.func, each launch keeping its own name, buffers and scratch.
#x2 = affine_map<(r, c) -> (r, c)>
module {
  func.func @k0(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x64xf32>) outs(%y : memref<4x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @k1(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x64xf32>) outs(%y : memref<4x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    }
    return
  }
  // A different body (negf), and the same body on another shape: kernels of their own.
  func.func @k2(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x64xf32>) outs(%y : memref<4x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.negf %v : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @k3(%x: memref<8x64xf32>, %y: memref<8x64xf32>) attributes {kiln.kernel} {
    linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<8x64xf32>) outs(%y : memref<8x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    }
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %a = kiln.slice offset 0 size 0 : memref<4x64xf32>
    %b = kiln.slice offset 0 size 0 : memref<4x64xf32>
    %c = kiln.slice offset 0 size 0 : memref<8x64xf32>
    %d = kiln.slice offset 0 size 0 : memref<8x64xf32>
    kiln.launch @k0(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<4x64xf32>, memref<4x64xf32>
    kiln.launch @k1(%b, %a) stream 0 {num_inputs = 1 : i64} : memref<4x64xf32>, memref<4x64xf32>
    kiln.launch @k2(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<4x64xf32>, memref<4x64xf32>
    kiln.launch @k3(%c, %d) stream 0 {num_inputs = 1 : i64} : memref<8x64xf32>, memref<8x64xf32>
  }
}
// CHECK: gpu.func @k0_s0(
// CHECK: math.exp
// CHECK-NOT: gpu.func @k1_s0
// CHECK: gpu.func @k2_s0(
// CHECK: arith.negf
// CHECK: gpu.func @k3_s0(
// CHECK: math.exp
// CHECK: kiln.launch @k0(%{{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k0_s0"
// CHECK: kiln.launch @k1(%{{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k0_s0"
// CHECK: kiln.launch @k2(%{{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k2_s0"
// CHECK: kiln.launch @k3(%{{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k3_s0"
