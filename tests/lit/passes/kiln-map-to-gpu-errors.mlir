// RUN: kiln-opt --kiln-map-to-gpu --split-input-file --verify-diagnostics %s
// What the cuda mapping cannot take is an error naming the kernel, not a crash.

module {
  func.func @k0(%x: memref<4xf32>) attributes {kiln.kernel} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    // A time loop runs linalg stages, views and index arithmetic; nothing else.
    scf.for %i = %c0 to %c4 step %c1 {
      // expected-error @+1 {{kernel k0: 'memref.store' in a time loop has no cuda mapping}}
      memref.store %one, %x[%i] : memref<4xf32>
    }
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  }
}

// -----

module {
  func.func @k0(%x: memref<?xf32>, %y: memref<?xf32>) attributes {kiln.kernel} {
    // expected-error @+1 {{kernel k0: dynamic loop bounds have no cuda mapping}}
    linalg.copy ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
  }
}

// -----

// expected-error @+1 {{kiln-map-to-gpu needs a kiln.plan}}
module {
}

