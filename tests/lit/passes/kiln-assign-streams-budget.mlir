// RUN: kiln-opt %s --kiln-assign-streams="max-streams=2 device=host host-cores=2" --kiln-plan-memory | FileCheck %s --check-prefix=FREE
// RUN: kiln-opt %s --kiln-assign-streams="max-streams=2 device=host host-cores=2 memory-budget=12288" --kiln-plan-memory --kiln-verify-plan | FileCheck %s --check-prefix=FIT
// RUN: kiln-opt %s --kiln-assign-streams="max-streams=2 device=host host-cores=2 memory-budget=8192" -verify-diagnostics

// Two branches of two launches each. On two streams the arena is 16 KiB (no two
// tensors may share); a 12 KiB budget makes the scheduler serialize the branches
// (one stream, 12 KiB); an 8 KiB budget is below even the sequential plan's needs.
// FREE: kiln.plan @fork attributes {arena_bytes = 16384 : i64
// FREE: stream 1
// FIT: kiln.plan @fork attributes {arena_bytes = 12288 : i64
// FIT-NOT: stream 1
// FIT-NOT: kiln.wait
// expected-error @+1 {{the memory budget of 8192 bytes is too small: even the sequential plan needs an arena of 12288 bytes (its lower bound is 12288)}}
kiln.plan @fork attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %l0 = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %l1 = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %r0 = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %r1 = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @l0(%x, %l0) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @l1(%l0, %l1) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @r0(%x, %r0) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @r1(%r0, %r1) stream -1 {num_inputs = 1 : i64, flops = 100000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @join(%l1, %r1, %y) stream -1 {num_inputs = 2 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
}
