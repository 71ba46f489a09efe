// RUN: kiln-opt --kiln-map-to-gpu %s | FileCheck %s
// A kernel with a time loop (a recurrent op's Scan after bufferization) is one
// launch, one block per row (the batch: every stage runs over it first and the
// buffers the kernel writes, the state, the scratch, the output's slice at the
// step, are touched only in their row): the initial state's copy, then the loop
// around its stages (the fill and the recurrence contraction into scratch, each
// thread reducing its outputs serially; the step's tanh into the output's slice;
// the new state's copy), each stage strided over the block's threads in its row
// and followed by a barrier. k1 reads its state across rows (transposed): one
// block.
#x2 = affine_map<(b, h) -> (b, h)>
module {
  func.func @k0(%h0: memref<2x4xf32>, %xs: memref<3x2x4xf32>, %r: memref<4x4xf32>,
                %ys: memref<3x2x4xf32>) attributes {kiln.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %zero = arith.constant 0.0 : f32
    %h = memref.alloc() : memref<2x4xf32>
    %t = memref.alloc() : memref<2x4xf32>
    linalg.copy ins(%h0 : memref<2x4xf32>) outs(%h : memref<2x4xf32>)
    scf.for %i = %c0 to %c3 step %c1 {
      %x = memref.subview %xs[%i, 0, 0] [1, 2, 4] [1, 1, 1] : memref<3x2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
      %y = memref.subview %ys[%i, 0, 0] [1, 2, 4] [1, 1, 1] : memref<3x2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%t : memref<2x4xf32>)
      linalg.matmul ins(%h, %r : memref<2x4xf32>, memref<4x4xf32>) outs(%t : memref<2x4xf32>)
      linalg.generic {indexing_maps = [#x2, #x2, #x2], iterator_types = ["parallel", "parallel"]}
          ins(%x, %t : memref<2x4xf32, strided<[4, 1], offset: ?>>, memref<2x4xf32>)
          outs(%y : memref<2x4xf32, strided<[4, 1], offset: ?>>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %n = math.tanh %s : f32
        linalg.yield %n : f32
      }
      linalg.copy ins(%y : memref<2x4xf32, strided<[4, 1], offset: ?>>) outs(%h : memref<2x4xf32>)
    }
    memref.dealloc %h : memref<2x4xf32>
    memref.dealloc %t : memref<2x4xf32>
    return
  }
  func.func @k1(%h0: memref<4x4xf32>, %ys: memref<3x4x4xf32>) attributes {kiln.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %h = memref.alloc() : memref<4x4xf32>
    linalg.copy ins(%h0 : memref<4x4xf32>) outs(%h : memref<4x4xf32>)
    scf.for %i = %c0 to %c3 step %c1 {
      %y = memref.subview %ys[%i, 0, 0] [1, 4, 4] [1, 1, 1] : memref<3x4x4xf32> to memref<4x4xf32, strided<[4, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(b, c) -> (c, b)>, #x2], iterator_types = ["parallel", "parallel"]}
          ins(%h : memref<4x4xf32>) outs(%y : memref<4x4xf32, strided<[4, 1], offset: ?>>) {
      ^bb0(%a: f32, %o: f32):
        %n = math.tanh %a : f32
        linalg.yield %n : f32
      }
      linalg.copy ins(%y : memref<4x4xf32, strided<[4, 1], offset: ?>>) outs(%h : memref<4x4xf32>)
    }
    memref.dealloc %h : memref<4x4xf32>
    return
  }
  kiln.plan @main attributes {arena_bytes = 0 : i64, weight_bytes = 0 : i64} {
    %a = kiln.slice offset 0 size 0 : memref<2x4xf32>
    %b = kiln.slice offset 0 size 0 : memref<3x2x4xf32>
    %c = kiln.slice offset 0 size 0 : memref<4x4xf32>
    %d = kiln.slice offset 0 size 0 : memref<3x2x4xf32>
    kiln.launch @k0(%a, %b, %c, %d) stream 0 {num_inputs = 3 : i64} : memref<2x4xf32>, memref<3x2x4xf32>, memref<4x4xf32>, memref<3x2x4xf32>
    %e = kiln.slice offset 0 size 0 : memref<4x4xf32>
    %f = kiln.slice offset 0 size 0 : memref<3x4x4xf32>
    kiln.launch @k1(%e, %f) stream 0 {num_inputs = 1 : i64} : memref<4x4xf32>, memref<3x4x4xf32>
  }
}
// CHECK: gpu.func @k0_s0(%[[H0:.*]]: memref<2x4xf32>, %[[XS:.*]]: memref<3x2x4xf32>, %[[R:.*]]: memref<4x4xf32>, %[[YS:.*]]: memref<3x2x4xf32>, %[[SCRATCH:.*]]: memref<512xi8>) {{.*}}known_block_size = array<i32: 32, 1, 1>
// CHECK-NOT: gpu.func @k0_s1
// CHECK-DAG: %[[H:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<512xi8> to memref<2x4xf32>
// CHECK-DAG: %[[T:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<512xi8> to memref<2x4xf32>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[ROW:.*]] = gpu.block_id x
// The initial state's copy.
// CHECK: scf.for %{{.*}} = %[[TID]] to %{{.*}} step %{{.*}} {
// CHECK:   memref.load %[[H0]][%[[ROW]],
// CHECK:   memref.store %{{.*}}, %[[H]][%[[ROW]],
// CHECK: gpu.barrier
// The time loop.
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG: %[[X:.*]] = memref.subview %[[XS]][%[[I]], 0, 0]
// CHECK-DAG: %[[Y:.*]] = memref.subview %[[YS]][%[[I]], 0, 0]
// CHECK:   scf.for %{{.*}} = %[[TID]]
// CHECK:     memref.store %{{.*}}, %[[T]]
// CHECK:   gpu.barrier
// CHECK:   scf.for %{{.*}} = %[[TID]]
// CHECK:     scf.for
// CHECK:       memref.load %[[H]][%[[ROW]],
// CHECK:       memref.load %[[R]]
// CHECK:       arith.mulf
// CHECK:     memref.store %{{.*}}, %[[T]]
// CHECK:   gpu.barrier
// CHECK:   scf.for %{{.*}} = %[[TID]]
// CHECK:     memref.load %[[X]]
// CHECK:     math.tanh
// CHECK:     memref.store %{{.*}}, %[[Y]][%[[ROW]],
// CHECK:   gpu.barrier
// CHECK:   scf.for %{{.*}} = %[[TID]]
// CHECK:     memref.load %[[Y]]
// CHECK:     memref.store %{{.*}}, %[[H]]
// CHECK:   gpu.barrier
// CHECK: }
// CHECK: gpu.return
// CHECK: gpu.func @k1_s0
// CHECK-NOT: gpu.block_id
// CHECK: gpu.return
// The launches: a block per row, synchronizing; one block.
// CHECK: kiln.launch @k0{{.*}}gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [2, 1, 1], block = [32, 1, 1], sync = true>]
// CHECK: kiln.launch @k1{{.*}}gpu_stages = [#kiln.gpu_stage<"k1_s0", grid = [1, 1, 1], block = [32, 1, 1], sync = true>]
