// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=1 device=host host-cores=2" --kiln-plan-memory --kiln-verify-plan | FileCheck %s --check-prefix=SEQ
// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=2 device=host host-cores=2" --kiln-plan-memory --kiln-verify-plan | FileCheck %s --check-prefix=FORK
// RUN: kiln-opt %s -split-input-file --kiln-assign-streams="max-streams=1 device=host host-cores=2" --kiln-plan-memory=in-place=false --kiln-verify-plan | FileCheck %s --check-prefix=NOINPLACE

// In sequence: %a is live for k0-k1, %b for k1-k2, %c for k2: %a and %b are live
// together, %c may reuse %a's bytes. The arena (128) meets the lower bound (80,
// aligned).
// SEQ-LABEL: kiln.plan @chain attributes {arena_bytes = 128 : i64, {{.*}}lower_bound_bytes = 80 : i64, naive_bytes = 112 : i64, {{.*}}weight_bytes = 128 : i64}
// SEQ: kiln.weight offset 0 {{.*}}: memref<4xf32>
// SEQ: kiln.weight offset 64 {{.*}}: memref<2xf32>
// SEQ: kiln.slice offset 0 size 40
// SEQ: kiln.slice offset 64 size 40
// SEQ: kiln.slice offset 0 size 32
kiln.plan @chain attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %w = kiln.weight offset -1 {value = dense<1.0> : tensor<4xf32>} : memref<4xf32>
  %v = kiln.weight offset -1 {value = dense<1.0> : tensor<2xf32>} : memref<2xf32>
  %a = kiln.slice offset -1 size 40 : memref<10xf32>
  %b = kiln.slice offset -1 size 40 : memref<10xf32>
  %c = kiln.slice offset -1 size 32 : memref<8xf32>
  kiln.launch @k0(%w, %a) stream -1 {num_inputs = 1 : i64} : memref<4xf32>, memref<10xf32>
  kiln.launch @k1(%a, %b) stream -1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k2(%b, %v, %c) stream -1 {num_inputs = 2 : i64} : memref<10xf32>, memref<2xf32>, memref<8xf32>
}

// -----

// Fork/join: two branches of two launches each. In sequence (l0 l1 r0 r1) the
// left branch's first tensor is dead when the right branch starts, so %r0 reuses
// %l0's bytes: arena 3 x 4 KiB. Run concurrently on two streams, any left tensor
// can be live with any right one, and each branch's two tensors meet at its
// second launch: no two may share, arena 4 x 4 KiB, and the lower bound says so.
// SEQ-LABEL: kiln.plan @fork
// SEQ-SAME: arena_bytes = 12288
// SEQ-NOT: kiln.wait
// FORK-LABEL: kiln.plan @fork
// FORK-SAME: arena_bytes = 16384 : i64
// FORK-SAME: lower_bound_bytes = 16384 : i64
// FORK-SAME: sequential_arena_bytes = 12288 : i64
// FORK: kiln.wait
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

// -----

// In place: k1 (elementwise, marked) writes %b over %a, which dies at it, at the
// same offset: one 64-byte slot instead of two (the lower bound knows it too).
// SEQ-LABEL: kiln.plan @update
// SEQ-SAME: arena_bytes = 64 : i64, {{.*}}lower_bound_bytes = 40 : i64
// NOINPLACE-LABEL: kiln.plan @update
// NOINPLACE-SAME: arena_bytes = 128 : i64
// SEQ: kiln.slice offset 0 size 40
// SEQ-NEXT: kiln.slice offset 0 size 40
kiln.plan @update attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset -1 size 40 : memref<10xf32>
  %b = kiln.slice offset -1 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.launch @k0(%x, %a) stream -1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k1(%a, %b) stream -1 {num_inputs = 1 : i64, in_place = array<i64: 0>} : memref<10xf32>, memref<10xf32>
  kiln.launch @k2(%b, %y) stream -1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// An in-place result whose partner's offset is taken may go elsewhere, but never
// partly over its partner: %g (placed first, [0, 152)) shares with %a but not with
// %b; %a sits at 128 (clear of %f, which it is live with). %b cannot sit on %a
// (%g overlaps there), and the first gap after %g, 192, would overlap %a's
// [128, 228): %b goes to 256.
// SEQ-LABEL: kiln.plan @partner_elsewhere
// SEQ: kiln.slice offset 0 size 152
// SEQ: kiln.slice offset 0 size 100
// SEQ: kiln.slice offset 128 size 100
// SEQ: kiln.slice offset 256 size 100
kiln.plan @partner_elsewhere attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<25xf32>
  %g = kiln.slice offset -1 size 152 : memref<38xf32>
  %f = kiln.slice offset -1 size 100 : memref<25xf32>
  %a = kiln.slice offset -1 size 100 : memref<25xf32>
  %b = kiln.slice offset -1 size 100 : memref<25xf32>
  %y = kiln.output 0 "y" : memref<25xf32>
  kiln.launch @kf(%x, %f) stream -1 {num_inputs = 1 : i64} : memref<25xf32>, memref<25xf32>
  kiln.launch @k0(%f, %a) stream -1 {num_inputs = 1 : i64} : memref<25xf32>, memref<25xf32>
  kiln.launch @k1(%a, %b) stream -1 {num_inputs = 1 : i64, in_place = array<i64: 0>} : memref<25xf32>, memref<25xf32>
  kiln.launch @k2(%x, %g) stream -1 {num_inputs = 1 : i64} : memref<25xf32>, memref<38xf32>
  kiln.launch @k3(%b, %g, %y) stream -1 {num_inputs = 2 : i64} : memref<25xf32>, memref<38xf32>, memref<25xf32>
}

// -----

// The two branches of an If decided at run time both write its result %r (then:
// @a, else: @e). The else branch's write continues the tensor the then branch
// wrote, so %r stays live from @a to @use, and the then branch's %t (live from @b
// to @b2, between the two writes) gets bytes of its own: when the then branch
// runs, @use reads what @a wrote. Arena: %r, %t, and the condition's 64 bytes.
// SEQ-LABEL: kiln.plan @branches
// SEQ-SAME: arena_bytes = 8256 : i64
// SEQ: kiln.launch @a({{.*}}) if(%{{.*}} : memref<i1>) [true] stream 0
// SEQ: kiln.launch @e({{.*}}) if(%{{.*}} : memref<i1>) [false] stream 0
kiln.plan @branches attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1024xf32>
  %c = kiln.slice offset -1 size 1 : memref<i1>
  %r = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %t = kiln.slice offset -1 size 4096 : memref<1024xf32>
  %z = kiln.output 1 "z" : memref<1024xf32>
  %y = kiln.output 0 "y" : memref<1024xf32>
  kiln.launch @cond(%x, %c) stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<i1>
  kiln.launch @a(%x, %r) if(%c : memref<i1>) [true] stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @b(%x, %t) if(%c : memref<i1>) [true] stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @b2(%t, %z) if(%c : memref<i1>) [true] stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.copy %x to %z if(%c : memref<i1>) [false] stream -1 : memref<1024xf32>, memref<1024xf32>
  kiln.launch @e(%x, %r) if(%c : memref<i1>) [false] stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>
  kiln.launch @use(%r, %y) stream -1 {num_inputs = 1 : i64, flops = 1000 : i64} : memref<1024xf32>, memref<1024xf32>
}
