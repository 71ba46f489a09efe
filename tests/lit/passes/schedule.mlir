// RUN: kiln-opt %s --kiln-schedule | FileCheck %s

// One stream today: every launch and copy runs on stream 0, in plan order.
// CHECK: kiln.launch @k0({{.*}}) stream 0
// CHECK: kiln.launch @k1({{.*}}) stream 0
// CHECK: kiln.copy {{.*}} stream 0
kiln.plan @p attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %i = kiln.input 0 "x" : memref<4xf32>
  %a = kiln.slice offset -1 size 16 : memref<4xf32>
  %o = kiln.output 0 "y" : memref<4xf32>
  %o2 = kiln.output 1 "x_again" : memref<4xf32>
  kiln.launch @k0(%i, %a) stream -1 {num_inputs = 1 : i64} : memref<4xf32>, memref<4xf32>
  kiln.launch @k1(%a, %o) stream -1 {num_inputs = 1 : i64} : memref<4xf32>, memref<4xf32>
  kiln.copy %i to %o2 stream -1 : memref<4xf32>, memref<4xf32>
}
