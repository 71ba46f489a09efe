// RUN: kiln-opt %s --kiln-schedule --kiln-plan-memory --kiln-verify-memory-plan | FileCheck %s

// %a is live for k0-k1, %b for k1-k2, %c for k2: %a and %b are live together, %c
// may reuse %a's bytes. The arena (128) meets the lower bound (80, aligned).
// CHECK: kiln.plan @p attributes {arena_bytes = 128 : i64, lower_bound_bytes = 80 : i64, naive_bytes = 112 : i64, weight_bytes = 128 : i64}
// CHECK: kiln.weight offset 0 {{.*}}: memref<4xf32>
// CHECK: kiln.weight offset 64 {{.*}}: memref<2xf32>
// CHECK: kiln.slice offset 0 size 40
// CHECK: kiln.slice offset 64 size 40
// CHECK: kiln.slice offset 0 size 32
// CHECK: kiln.launch @k0({{.*}}) stream 0
// CHECK: kiln.launch @k1({{.*}}) stream 0
// CHECK: kiln.launch @k2({{.*}}) stream 0
kiln.plan @p attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %w = kiln.weight offset -1 {value = dense<1.0> : tensor<4xf32>} : memref<4xf32>
  %v = kiln.weight offset -1 {value = dense<1.0> : tensor<2xf32>} : memref<2xf32>
  %a = kiln.slice offset -1 size 40 : memref<10xf32>
  %b = kiln.slice offset -1 size 40 : memref<10xf32>
  %c = kiln.slice offset -1 size 32 : memref<8xf32>
  kiln.launch @k0(%w, %a) stream -1 {num_inputs = 1 : i64} : memref<4xf32>, memref<10xf32>
  kiln.launch @k1(%a, %b) stream -1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k2(%b, %v, %c) stream -1 {num_inputs = 2 : i64} : memref<10xf32>, memref<2xf32>, memref<8xf32>
}
