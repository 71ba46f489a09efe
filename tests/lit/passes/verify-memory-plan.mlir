// RUN: kiln-opt %s --kiln-verify-memory-plan -split-input-file -verify-diagnostics

// Two slices live during the same launch may not overlap.
kiln.plan @overlap attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  // expected-error @+1 {{overlaps a slice that is live at the same time (offset 0)}}
  %b = kiln.slice offset 32 size 40 : memref<10xf32>
  kiln.launch @k0(%a, %b) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}

// -----

// Slices whose lives do not meet may share bytes.
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

// A finished plan: canonicalization merged two identical slices, so %a holds one
// tensor (k0 -> k1), then another (written by k4, not in place; read by k5); %b
// shares its bytes in between (k2 -> k3). Each tensor has its own life: no false
// overlap.
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

// In place (read and written by one launch) the tensor stays the same: %a lives from
// k0 to k2, across %b's life.
kiln.plan @inplace attributes {arena_bytes = 128 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 40 : memref<10xf32>
  // expected-error @+1 {{overlaps a slice that is live at the same time (offset 0)}}
  %b = kiln.slice offset 0 size 40 : memref<10xf32>
  kiln.launch @k0(%a) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  kiln.launch @k1(%b) stream 0 {num_inputs = 0 : i64} : memref<10xf32>
  kiln.launch @k2(%a, %a) stream 0 {num_inputs = 1 : i64} : memref<10xf32>, memref<10xf32>
}
