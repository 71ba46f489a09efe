// RUN: kiln-opt --kiln-host-parallel %s | FileCheck %s
// RUN: kiln-opt --kiln-host-parallel=min-work=1000000000 %s | FileCheck %s --check-prefix=NONE
// Top-level parallel loops with enough work go to the thread pool: the body is
// outlined over a range of the leading iterations, the buffers passed as pointers.

// NONE-NOT: kiln_parallel_for
// NONE-NOT: _par0

// 64 rows: the range is the rows, each a whole inner loop of 1024.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[A:.*]]: memref<64x1024xf32>, %[[B:.*]]: memref<64x1024xf32>)
// CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr : (i64) -> !llvm.ptr
// CHECK-NOT: scf.parallel
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: llvm.store
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: llvm.store
// CHECK: %[[FN:.*]] = constant @rows_par0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: %[[N:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: call @kiln_parallel_for(%[[FN]], %[[ARGS]], %[[N]])
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func private @rows_par0(
// CHECK-SAME: %[[P:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK: llvm.load
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<64x1024xf32>
// CHECK: %[[LO:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[HI:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[HI]]
// CHECK: scf.parallel (%[[J:.*]]) =
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[J]]]
// CHECK: math.exp
// CHECK: memref.store
func.func @rows(%a: memref<64x1024xf32>, %b: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<64x1024xf32>
    %y = math.exp %x : f32
    memref.store %y, %b[%i, %j] : memref<64x1024xf32>
    scf.reduce
  }
  return
}

// Dimensions of one iteration are left out: 1x8x8192 ranges over the 8, the
// last dimension stays whole.
// CHECK-LABEL: func.func @unit_dim(
// CHECK: llvm.mlir.constant(8 : i64)
// CHECK: call @kiln_parallel_for
// CHECK-LABEL: func.func private @unit_dim_par0(
// CHECK: scf.for
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}})
func.func @unit_dim(%a: memref<1x8x8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c8192 = arith.constant 8192 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%n, %i, %j) = (%c0, %c0, %c0) to (%c1, %c8, %c8192) step (%c1, %c1, %c1) {
    memref.store %zero, %a[%n, %i, %j] : memref<1x8x8192xf32>
    scf.reduce
  }
  return
}

// Several leading dimensions make up the range (4 x 32 = 128 iterations, unravelled
// with a division and a remainder); a one-dimensional loop ranges over itself.
// CHECK-LABEL: func.func @nested(
// CHECK: llvm.mlir.constant(128 : i64)
// CHECK-LABEL: func.func private @nested_par0(
// CHECK: scf.for %[[L:.*]] =
// CHECK-DAG: arith.remui %[[L]]
// CHECK-DAG: arith.divui %[[L]]
// CHECK: scf.parallel
// CHECK-LABEL: func.func @flat(
// CHECK: llvm.mlir.constant(100000 : i64)
// CHECK-LABEL: func.func private @flat_par0(
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @nested(%a: memref<4x32x16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c4, %c32, %c16, %c16) step (%c1, %c1, %c1, %c1) {
    memref.store %zero, %a[%n, %c, %h, %w] : memref<4x32x16x16xf32>
    scf.reduce
  }
  return
}
func.func @flat(%a: memref<100000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 100000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%cn) step (%c1) {
    memref.store %zero, %a[%i] : memref<100000xf32>
    scf.reduce
  }
  return
}

// A reduction loop inside is work too: 256 rows of a 512-long sum.
// CHECK-LABEL: func.func @row_sums(
// CHECK: call @kiln_parallel_for
// CHECK-LABEL: func.func private @row_sums_par0(
// CHECK: scf.for
// CHECK: scf.for
func.func @row_sums(%a: memref<256x512xf32>, %s: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %s[%i] : memref<256xf32>
    scf.for %k = %c0 to %c512 step %c1 {
      %x = memref.load %a[%i, %k] : memref<256x512xf32>
      %acc = memref.load %s[%i] : memref<256xf32>
      %sum = arith.addf %acc, %x : f32
      memref.store %sum, %s[%i] : memref<256xf32>
    }
    scf.reduce
  }
  return
}

// Stay as they are: too little work; a loop with results; run-time bounds; a
// capture that is neither a static buffer nor free to clone (a loaded value).
// CHECK-LABEL: func.func @small(
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK-LABEL: func.func @reduction(
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK-LABEL: func.func @dynamic(
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK-LABEL: func.func @loaded(
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK: return
func.func @small(%a: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1) {
    memref.store %zero, %a[%i, %j] : memref<16x16xf32>
    scf.reduce
  }
  return
}
func.func @reduction(%a: memref<1000000xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 1000000 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%cn) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<1000000xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}
func.func @dynamic(%a: memref<1000000xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %a[%i] : memref<1000000xf32>
    scf.reduce
  }
  return
}
func.func @loaded(%a: memref<1000000xf32>, %v: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 1000000 : index
  %x = memref.load %v[%c0] : memref<1xf32>
  scf.parallel (%i) = (%c0) to (%cn) step (%c1) {
    memref.store %x, %a[%i] : memref<1000000xf32>
    scf.reduce
  }
  return
}

// A loop directly in a time loop's body is handed off every step: the step travels
// in the argument array as an integer after the pointers, and the view at the step
// is rebuilt from it in the outlined function.
// CHECK-LABEL: func.func @time_loop(
// CHECK-SAME: %[[XS:.*]]: memref<8x64x1024xf32>, %[[H:.*]]: memref<64x1024xf32>)
// CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: scf.for %[[T:.*]] = 
// CHECK:   memref.extract_aligned_pointer_as_index %[[XS]]
// CHECK:   memref.extract_aligned_pointer_as_index %[[H]]
// CHECK:   %[[W:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK:   llvm.inttoptr %[[W]]
// CHECK:   call @kiln_parallel_for(
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK-LABEL: func.func private @time_loop_par0(
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %{{.*}}[2]
// CHECK: %[[P:.*]] = llvm.load %[[SLOT]]
// CHECK: %[[I:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
// CHECK: %[[STEP:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK: memref.subview %{{.*}}[%[[STEP]], 0, 0]
func.func @time_loop(%xs: memref<8x64x1024xf32>, %h: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.for %t = %c0 to %c8 step %c1 {
    %x = memref.subview %xs[%t, 0, 0] [1, 64, 1024] [1, 1, 1] : memref<8x64x1024xf32> to memref<64x1024xf32, strided<[1024, 1], offset: ?>>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<64x1024xf32, strided<[1024, 1], offset: ?>>
      %s = memref.load %h[%i, %j] : memref<64x1024xf32>
      %n = arith.addf %v, %s : f32
      memref.store %n, %h[%i, %j] : memref<64x1024xf32>
      scf.reduce
    }
  }
  return
}
