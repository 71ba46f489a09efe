// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// A fused Conv + bias + Relu kernel (as kiln-form-kernels and bufferization give
// it) is one stage: the padding's fill and copy are not stages (the convolution
// loads the unpadded input, clamped, and selects 0 outside it) and the bias + Relu
// stage, which overwrites the convolution's output in place, is applied where the
// convolution stores.
#in = affine_map<(n, f, c, kh, kw, h, w) -> (n, c, h + kh, w + kw)>
#wt = affine_map<(n, f, c, kh, kw, h, w) -> (f, c, kh, kw)>
#out = affine_map<(n, f, c, kh, kw, h, w) -> (n, f, h, w)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
module {
  func.func @k0(%x: memref<1x2x4x4xf32>, %w: memref<3x2x3x3xf32>, %b: memref<3x1x1xf32>, %y: memref<1x3x4x4xf32>) attributes {kiln.kernel} {
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%y : memref<1x3x4x4xf32>)
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x2x6x6xf32>
    linalg.map outs(%alloc : memref<1x2x6x6xf32>)
      () {
        linalg.yield %cst : f32
      }
    %sub = memref.subview %alloc[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x2x6x6xf32> to memref<1x2x4x4xf32, strided<[72, 36, 6, 1], offset: 7>>
    linalg.copy ins(%x : memref<1x2x4x4xf32>) outs(%sub : memref<1x2x4x4xf32, strided<[72, 36, 6, 1], offset: 7>>)
    linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%alloc, %w : memref<1x2x6x6xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x4xf32>) {
    ^bb0(%i: f32, %k: f32, %o: f32):
      %0 = arith.mulf %i, %k : f32
      %1 = arith.addf %o, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %b : memref<1x3x4x4xf32>, memref<3x1x1xf32>) outs(%y : memref<1x3x4x4xf32>) {
    ^bb0(%v: f32, %c: f32, %o: f32):
      %0 = arith.addf %v, %c : f32
      %1 = arith.maximumf %0, %cst : f32
      linalg.yield %1 : f32
    }
    memref.dealloc %alloc : memref<1x2x6x6xf32>
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %x = kiln.slice offset 0 size 0 : memref<1x2x4x4xf32>
    %w = kiln.slice offset 0 size 0 : memref<3x2x3x3xf32>
    %b = kiln.slice offset 0 size 0 : memref<3x1x1xf32>
    %y = kiln.slice offset 0 size 0 : memref<1x3x4x4xf32>
    kiln.launch @k0(%x, %w, %b, %y) stream 0 {num_inputs = 3 : i64} : memref<1x2x4x4xf32>, memref<3x2x3x3xf32>, memref<3x1x1xf32>, memref<1x3x4x4xf32>
  }
}
// CHECK: gpu.func @k0_s0(%[[X:[^:]*]]: memref<1x2x4x4xf32>, %{{[^:]*}}: memref<3x2x3x3xf32>, %[[B:[^:]*]]: memref<3x1x1xf32>, %[[Y:[^:]*]]: memref<1x3x4x4xf32>)
// CHECK-NOT: memref.store
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[V:.*]] = memref.load %[[X]]
// CHECK: arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK: arith.mulf
// CHECK: %[[ACC:.*]] = arith.addf
// CHECK: memref.load %[[B]]
// CHECK: %[[BIASED:.*]] = arith.addf
// CHECK: %[[RELU:.*]] = arith.maximumf %[[BIASED]]
// CHECK: memref.store %[[RELU]], %[[Y]]
// CHECK-NOT: memref.store
// CHECK: gpu.return
// CHECK-NOT: gpu.func
// CHECK: kiln.launch @k0({{.*}}) stream 0 {gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = {{[^>]*}}>], kiln.engine = "simt", kiln.engine_reason = {{.*}}, num_inputs = 3 : i64}
