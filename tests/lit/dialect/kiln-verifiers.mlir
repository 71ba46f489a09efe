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
