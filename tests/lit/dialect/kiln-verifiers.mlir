// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but 2 block arguments}}
  %0 = kiln.kernel "k0"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @arg_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{block argument type 'tensor<2xf32>' differs from input type 'tensor<4xf32>'}}
  %0 = kiln.kernel "k0"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2xf32>):
    %c = arith.constant dense<0.0> : tensor<4xf32>
    kiln.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields types that differ from its results}}
  %0 = kiln.kernel "k0"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = arith.constant dense<0.0> : tensor<2xf32>
    kiln.yield %c : tensor<2xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Kernels are isolated from above: a value from outside must be an input.
func.func @isolated(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = kiln.kernel "k0"() : () -> tensor<4xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    kiln.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// The plan binds inputs and outputs 0..n-1, each once.
kiln.plan @twice attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.input 0 "a" : memref<4xf32>
  // expected-error @+1 {{input 0 is bound twice}}
  %b = kiln.input 0 "b" : memref<4xf32>
}

// -----

kiln.plan @gap attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  // expected-error @+1 {{index 1 of 1 outputs is out of range}}
  %a = kiln.output 1 "y" : memref<4xf32>
}

// -----

kiln.plan @reads attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  // expected-error @+1 {{reads 2 buffers but has 1}}
  kiln.launch @k0(%a) stream 0 {num_inputs = 2 : i64} : memref<4xf32>
}

// -----

kiln.plan @half attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %s = kiln.slice offset 64 size 256 : memref<256xi8>
  // expected-error @+1 {{has a scratch buffer but no gpu_stages to use it}}
  kiln.launch @k0(%a) scratch(%s : memref<256xi8>) stream 0 {num_inputs = 1 : i64} : memref<4xf32>
}

// -----

kiln.plan @inplace attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 0 size 16 : memref<4xf32>
  // expected-error @+1 {{in_place names input 1 of 1}}
  kiln.launch @k0(%a, %b) stream 0 {num_inputs = 1 : i64, in_place = array<i64: 1>} : memref<4xf32>, memref<4xf32>
}

// -----

kiln.plan @twice attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  kiln.record event 0 stream 0
  // expected-error @+1 {{records event 0 a second time}}
  kiln.record event 0 stream 1
}

// -----

kiln.plan @early attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  // expected-error @+1 {{waits on event 3, which no earlier kiln.record records}}
  kiln.wait event 3 stream 1
  kiln.record event 3 stream 0
}

// -----

kiln.plan @self attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  kiln.record event 0 stream 1
  // expected-error @+1 {{waits on event 0 on the stream that records it}}
  kiln.wait event 0 stream 1
}

// -----

kiln.plan @threads attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  // expected-error @+1 {{gpu stage "k0_s0" has 2048 threads per block (at most 1024)}}
  kiln.launch @k0(%a) stream 0 {num_inputs = 1 : i64, gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [2048, 1, 1], sync = false>]} : memref<4xf32>
}

// -----

kiln.plan @grid attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  // expected-error @+1 {{gpu stage "k0_s0" needs a 3-d grid and block}}
  kiln.launch @k0(%a) stream 0 {num_inputs = 1 : i64, gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [1, 1], block = [32, 1, 1], sync = false>]} : memref<4xf32>
}

// -----

// kiln.kernel marks functions; kiln.element_type belongs on arguments and results.
// expected-error @+1 {{"kiln.kernel" marks kernel functions only}}
kiln.plan @marked attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64, kiln.kernel} {
}

// -----

// expected-error @+1 {{"kiln.element_type" must be an integer or float type}}
func.func @typed(%x: memref<4xi8> {kiln.element_type = memref<4xi8>}) {
  return
}

// -----

// expected-error @+1 {{unknown kiln attribute "kiln.gpu_scratch"}}
func.func @stale() attributes {kiln.gpu_scratch = {}} {
  return
}

// -----

func.func @attention_dims(%q: tensor<2x3x8xf32>, %kt: tensor<2x4x5xf32>, %v: tensor<2x5x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{q [..., Sq, D], kt [..., D, Sk], v [..., Sk, Dv] and the result [..., Sq, Dv] disagree}}
  %o = "kiln.attention"(%q, %kt, %v) <{fill = 0.0 : f64, mask_kind = "none", scale = 1.0 : f64}> : (tensor<2x3x8xf32>, tensor<2x4x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x3x8xf32>, %kt: tensor<1x8x5xf32>, %v: tensor<2x5x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{needs equal batch dims}}
  %o = "kiln.attention"(%q, %kt, %v) <{fill = 0.0 : f64, mask_kind = "none", scale = 1.0 : f64}> : (tensor<2x3x8xf32>, tensor<1x8x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// -----

func.func @attention_mask(%q: tensor<2x3x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{a mask goes with mask_kind add or keep, and only then}}
  %o = "kiln.attention"(%q, %kt, %v) <{fill = 0.0 : f64, mask_kind = "add", scale = 1.0 : f64}> : (tensor<2x3x8xf32>, tensor<2x8x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// -----

func.func @attention_kind(%q: tensor<2x3x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x6xf32>, %m: tensor<2x3x5xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{mask_kind must be none, add or keep}}
  %o = "kiln.attention"(%q, %kt, %v, %m) <{fill = 0.0 : f64, mask_kind = "mul", scale = 1.0 : f64}> : (tensor<2x3x8xf32>, tensor<2x8x5xf32>, tensor<2x5x6xf32>, tensor<2x3x5xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// -----

kiln.plan @library_operand attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 16 size 16 : memref<4xf32>
  %c = kiln.slice offset 32 size 16 : memref<4xf32>
  // expected-error @+1 {{library call operand 4 names buffer 1, not a written one}}
  kiln.launch @k0(%a, %b, %c) stream 0 {num_inputs = 2 : i64, library = #kiln.library_call<"matmul", shape = [1, 2, 2, 2, 0, 0, 0, 0], operands = [0, 1, -1, -1, 1], activation = "none"(0.0 : f64, 0.0 : f64), scale = 1.0 : f64>} : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

kiln.plan @library_shape attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 16 size 16 : memref<4xf32>
  %c = kiln.slice offset 32 size 16 : memref<4xf32>
  // expected-error @+1 {{library call "conv" needs 18 shape values, not 8}}
  kiln.launch @k0(%a, %b, %c) stream 0 {num_inputs = 2 : i64, library = #kiln.library_call<"conv", shape = [1, 2, 2, 2, 0, 0, 0, 0], operands = [0, 1, -1, -1, 2], activation = "none"(0.0 : f64, 0.0 : f64), scale = 1.0 : f64>} : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

kiln.plan @library_scale attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 16 size 16 : memref<4xf32>
  %c = kiln.slice offset 32 size 16 : memref<4xf32>
  // expected-error @+1 {{library call scales its accumulator and has a bias}}
  kiln.launch @k0(%a, %b, %b, %c) stream 0 {num_inputs = 3 : i64, library = #kiln.library_call<"matmul", shape = [1, 2, 2, 2, 0, 0, 0, 0], operands = [0, 1, 2, -1, 3], activation = "gelu_tanh"(0.0 : f64, 0.0 : f64), scale = 0.5 : f64>} : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

kiln.plan @guard_type attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %g = kiln.slice offset 16 size 2 : memref<2xi1>
  // expected-error @+1 {{guard 'memref<2xi1>' is not one i1 element}}
  kiln.launch @k0(%a) if(%g : memref<2xi1>) [true] stream 0 {num_inputs = 1 : i64} : memref<4xf32>
}

// -----

kiln.plan @guard_values attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  %a = kiln.slice offset 0 size 16 : memref<4xf32>
  %b = kiln.slice offset 16 size 16 : memref<4xf32>
  %g = kiln.slice offset 32 size 1 : memref<i1>
  // expected-error @+1 {{has 1 guards but 2 guard values}}
  kiln.copy %a to %b if(%g : memref<i1>) [true, false] stream 0 : memref<4xf32>, memref<4xf32>
}

// -----

func.func @if_condition(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition 'tensor<2xi1>' is not one i1 element}}
  %r = kiln.if %c then @f else @f(%x) : tensor<2xi1>, (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @if_branch_type(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{branch @g has type '(tensor<3xf32>) -> tensor<3xf32>', expected '(tensor<4xf32>) -> tensor<4xf32>'}}
  %r = kiln.if %c then @f else @g(%x) : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
