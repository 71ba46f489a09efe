// RUN: kiln-opt %s --kiln-sim-thread-local-shared | FileCheck %s

// The simulator's shared memory becomes thread-local (contexts on several threads
// run one kernel at once); other globals stay as they are.
// CHECK: llvm.mlir.global private thread_local @kiln_sim_shared.k0_s0.0()
// CHECK: llvm.mlir.global private @table()
// CHECK-NOT: thread_local
module {
  llvm.mlir.global private @kiln_sim_shared.k0_s0.0() {addr_space = 0 : i32} : !llvm.array<256 x f32>
  llvm.mlir.global private @table() {addr_space = 0 : i32} : !llvm.array<4 x f32>
}
