// RUN: kiln-opt %s --kiln-verify-plan -split-input-file -verify-diagnostics

// A hand-written fork/join plan missing one event: c reads what b writes on
// stream 1, but stream 0 never waits for b.
kiln.plan @missing attributes {arena_bytes = 256 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 64 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.record event 0 stream 0
  kiln.launch @a(%x, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.wait event 0 stream 1
  // expected-note @+1 {{the other launch @b (stream 1)}}
  kiln.launch @b(%x, %b) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 1 stream 1
  // expected-error @+1 {{launch @c (stream 0) reads bytes [64, 104) of the arena that launch @b (stream 1) writes, with no happens-before path between them}}
  kiln.launch @c(%a, %b, %y) stream 0 {num_inputs = 2 : i64} : memref<10xf32>, memref<10xf32>, memref<10xf32>
  kiln.wait event 1 stream 0
}

// -----

// The same plan with the event: verified.
kiln.plan @ordered attributes {arena_bytes = 256 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 64 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.record event 0 stream 0
  kiln.launch @a(%x, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.wait event 0 stream 1
  kiln.launch @b(%x, %b) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 1 stream 1
  kiln.wait event 1 stream 0
  kiln.launch @c(%a, %b, %y) stream 0 {num_inputs = 2 : i64} : memref<10xf32>, memref<10xf32>, memref<10xf32>
}

// -----

// Two launches writing the caller's output from two streams race too.
kiln.plan @output attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.record event 0 stream 0
  kiln.wait event 0 stream 1
  // expected-note @+1 {{the other launch @a (stream 0)}}
  kiln.launch @a(%x, %y) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  // expected-error @+1 {{launch @b (stream 1) writes bytes [0, 40) of output 0 that launch @a (stream 0) writes}}
  kiln.launch @b(%x, %y) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 1 stream 1
  kiln.wait event 1 stream 0
}

// -----

// Stream 1 must wait for the run's start.
kiln.plan @unforked attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  // expected-error @+1 {{runs on stream 1, which does not wait for the run's start on stream 0}}
  kiln.launch @a(%x, %y) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 0 stream 1
  kiln.wait event 0 stream 0
}

// -----

// ... and be joined into stream 0 before the run ends.
kiln.plan @unjoined attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.record event 0 stream 0
  kiln.wait event 0 stream 1
  // expected-error @+1 {{is the last work of stream 1, which is not joined into stream 0 before the run ends}}
  kiln.launch @a(%x, %y) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// Memory: two tensors live during the same launch may not overlap.
kiln.plan @overlap attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 32 size 40 : memref<10xf32>
  // expected-error @+2 {{launch @k0 (stream 0) writes bytes [32, 72) of the arena while a tensor in bytes [0, 40) is still live}}
  // expected-note @+1 {{last used by launch @k0 (stream 0)}}
  kiln.launch @k0(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// Tensors on two streams share bytes only if events order all their uses: here
// %b's writer on stream 1 runs beside %a's reader on stream 0.
kiln.plan @concurrent attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  %z = kiln.output 1 "z" : memref<10xf32>
  kiln.launch @k0(%x, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 0 stream 0
  kiln.wait event 0 stream 1
  // expected-note @+1 {{the other launch @k1 (stream 0)}}
  kiln.launch @k1(%a, %y) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  // expected-error @+1 {{launch @k2 (stream 1) writes bytes [0, 40) of the arena that launch @k1 (stream 0) reads, with no happens-before path between them}}
  kiln.launch @k2(%x, %b) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k3(%b, %z) stream 1 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.record event 1 stream 1
  kiln.wait event 1 stream 0
}

// -----

// Tensors whose lives do not meet may share bytes.
kiln.plan @reuse attributes {arena_bytes = 64 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  %c = kiln.slice offset 0 size 40 : memref<10xf32>
  kiln.launch @k0(%a) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  kiln.launch @k1(%b) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
}

// -----

kiln.plan @outside attributes {arena_bytes = 32 : i64, weight_bytes = 0 : i64} {
  // expected-error @+1 {{slice [0, 40) lies outside the arena of 32 bytes}}
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  kiln.launch @k0(%a) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
}

// -----

// A finished plan may hold several tensors in one slice value in turn: %a holds
// one (k0 -> k1), then another (written by k4, not in place; read by k5); %b
// shares its bytes in between (k2 -> k3). Each tensor has its own life.
kiln.plan @merged attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  %c = kiln.slice offset 64 size 40 : memref<10xf32>
  kiln.launch @k0(%a) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  kiln.launch @k1(%a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>
  kiln.launch @k2(%b) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  kiln.launch @k3(%b, %c) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k4(%c, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k5(%a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>
}

// -----

// In place (read and written by one launch) the tensor stays the same: %a lives
// from k0 to k2, across %b's life.
kiln.plan @inplace attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  kiln.launch @k0(%a) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  // expected-error @+1 {{launch @k1 (stream 0) writes bytes [0, 40) of the arena while a tensor in bytes [0, 40) is still live}}
  kiln.launch @k1(%b) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  // expected-note @+1 {{last used by launch @k2 (stream 0)}}
  kiln.launch @k2(%a, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// A launch marked in_place may write its result over the input that dies at it,
// at the very same bytes ...
kiln.plan @update attributes {arena_bytes = 64 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.launch @k0(%x, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k1(%a, %b) stream 0 {num_inputs = 1 : i64, in_place = array<i64: 0>} : memref<10xf32>, memref<10xf32>
  kiln.launch @k2(%b, %y) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// ... but not without the mark.
kiln.plan @unmarked attributes {arena_bytes = 64 : i64, weight_bytes = 0 : i64} {
  %x = kiln.input 0 "x" : memref<10xf32>
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  %y = kiln.output 0 "y" : memref<10xf32>
  kiln.launch @k0(%x, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  // expected-error @+2 {{launch @k1 (stream 0) writes bytes [0, 40) of the arena while a tensor in bytes [0, 40) is still live}}
  // expected-note @+1 {{last used by launch @k1 (stream 0)}}
  kiln.launch @k1(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
  kiln.launch @k2(%b, %y) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}
