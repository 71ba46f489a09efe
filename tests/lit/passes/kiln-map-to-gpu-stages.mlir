// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// Kernel shapes beyond one linalg op: linalg.map becomes an elementwise stage;
// two fills ahead of a two-output reduction both fold into it; a buffer the
// kernel writes and reads again becomes a view of the scratch argument; integer
// pow stays for kiln-expand-math.
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
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %b0 = kiln.slice offset 0 size 0 : memref<40xf32>
    %b1 = kiln.slice offset 0 size 0 : memref<40xf32>
    kiln.launch @k0(%b0, %b1) stream 0 {num_inputs = 1 : i64} : memref<40xf32>, memref<40xf32>
    %b2 = kiln.slice offset 0 size 0 : memref<4x8xf32>
    %b3 = kiln.slice offset 0 size 0 : memref<4xf32>
    %b4 = kiln.slice offset 0 size 0 : memref<4xi32>
    kiln.launch @k1(%b2, %b3, %b4) stream 0 {num_inputs = 1 : i64} : memref<4x8xf32>, memref<4xf32>, memref<4xi32>
    %b5 = kiln.slice offset 0 size 0 : memref<40xi32>
    %b6 = kiln.slice offset 0 size 0 : memref<40xi32>
    %b7 = kiln.slice offset 0 size 0 : memref<40xi32>
    kiln.launch @k2(%b5, %b6, %b7) stream 0 {num_inputs = 2 : i64} : memref<40xi32>, memref<40xi32>, memref<40xi32>
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
// CHECK: math.ipowi
// CHECK: gpu.func @k2_s1({{.*}}, %{{.*}}: memref<256xi8>)
// CHECK: memref.view
// CHECK-NOT: kiln.launch @k0({{.*}}scratch
// CHECK: kiln.launch @k0(
// CHECK-NOT: kiln.launch @k1({{.*}}scratch
// CHECK: kiln.launch @k1(
// CHECK: %[[S:.*]] = kiln.slice offset -1 size 256 : memref<256xi8>
// CHECK: kiln.launch @k2({{.*}}) scratch(%[[S]] : memref<256xi8>) stream {{.*}}gpu_stages = [#kiln.gpu_stage<"k2_s0", {{.*}}>, #kiln.gpu_stage<"k2_s1", {{.*}}>]
