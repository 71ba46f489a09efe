// The plan of an MLP (MatMul + bias + Relu in one kernel) built with Kiln's kernels
// only, then kiln-select-library-calls alone: the kernel becomes a library call with
// the bias and Relu as its epilogue; a kernel computing anything else stays one.
// RUN: kiln compile %S/../e2e/Inputs/mlp.onnxtxt --contractions kiln --compile-to plan -o %t.mlir
// RUN: kiln-opt --kiln-select-library-calls %t.mlir | FileCheck %s
// RUN: kiln compile %S/../e2e/Inputs/chain.onnxtxt --contractions kiln --compile-to plan -o %t2.mlir
// RUN: kiln-opt --kiln-select-library-calls %t2.mlir | FileCheck %s --check-prefix=NONE
// CHECK: kiln.launch @k0({{.*}}library = #kiln.library_call<"matmul", shape = [1, 2, 2, 3, 0, 0, 0, 0], operands = [0, 1, 2, -1, 3], activation = "relu"
// NONE-NOT: library_call
