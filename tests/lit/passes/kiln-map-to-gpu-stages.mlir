// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// Kernel shapes beyond one linalg op: linalg.map becomes an elementwise stage;
// two fills ahead of a two-output reduction both fold into it; a buffer the
// kernel writes and reads again becomes a view of the scratch argument; integer
// pow is expanded (no PTX instruction, no libdevice function).
#id = affine_map<(d0) -> (d0)>
#row = affine_map<(r, c) -> (r, c)>
#red = affine_map<(r, c) -> (r)>
module {
  func.func @k0(%x: memref<40xf32>, %y: memref<40xf32>) attributes {kiln.kernel} {
    linalg.map ins(%x : memref<40xf32>) outs(%y : memref<40xf32>)
      (%v: f32) {
        %n = arith.negf %v : f32
        linalg.yield %n : f32
      }
    return
  }
  func.func @k1(%x: memref<4x8xf32>, %m: memref<4xf32>, %i: memref<4xi32>) attributes {kiln.kernel} {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0 : i32
    linalg.fill ins(%ninf : f32) outs(%m : memref<4xf32>)
    linalg.fill ins(%zero : i32) outs(%i : memref<4xi32>)
    linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x8xf32>) outs(%m, %i : memref<4xf32>, memref<4xi32>) {
    ^bb0(%v: f32, %best: f32, %at: i32):
      %c = linalg.index 1 : index
      %ci = arith.index_cast %c : index to i32
      %gt = arith.cmpf ogt, %v, %best : f32
      %nb = arith.select %gt, %v, %best : f32
      %na = arith.select %gt, %ci, %at : i32
      linalg.yield %nb, %na : f32, i32
    }
    return
  }
  func.func @k2(%a: memref<40xi32>, %b: memref<40xi32>, %out: memref<40xi32>) attributes {kiln.kernel} {
    %t = memref.alloc() : memref<40xi32>
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : memref<40xi32>, memref<40xi32>) outs(%t : memref<40xi32>) {
    ^bb0(%p: i32, %q: i32, %o: i32):
      %r = math.ipowi %p, %q : i32
      linalg.yield %r : i32
    }
    linalg.copy ins(%t : memref<40xi32>) outs(%out : memref<40xi32>)
    memref.dealloc %t : memref<40xi32>
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, kiln.num_outputs = 0 : i64, weight_bytes = 0 : i64} {
  }
}
// CHECK-LABEL: gpu.func @k0_s0
// CHECK: arith.negf
// CHECK-LABEL: gpu.func @k1_s0
// CHECK-NOT: memref.store
// CHECK: scf.for {{.*}} iter_args({{.*}} = %cst{{.*}}, {{.*}} = %c0_i32)
// CHECK: memref.store
// CHECK: memref.store
// CHECK-NOT: gpu.func @k1_s1
// Stage 0 writes the scratch view, stage 1 copies it out: both take the scratch.
// CHECK: gpu.func @k2_s0({{.*}}, %[[S:.*]]: memref<256xi8>)
// CHECK: memref.view %[[S]]
// CHECK-NOT: math.ipowi
// CHECK: scf.for
// CHECK: arith.muli
// CHECK: gpu.func @k2_s1({{.*}}, %{{.*}}: memref<256xi8>)
// CHECK: memref.view
// CHECK: kiln.gpu_scratch = {k0 = 0 : i64, k1 = 0 : i64, k2 = 256 : i64}
