//===- Passes.td - The host target's codegen passes -*- tablegen -*-===//
//
// The host target's codegen passes.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_PASSES_TD
#define KILN_CODEGEN_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandHostBf16 : Pass<"kiln-expand-host-bf16", "mlir::ModuleOp"> {
  let summary = "Expand bf16 conversions into integer arithmetic for the host";
  let description = [{
    Part of the host codegen pipeline (and so of cuda-sim's). LLVM lowers an f32 to
    bf16 truncation on CPUs without bf16 instructions to a call of
    `__truncsfbf2`, which the system's libgcc (GCC 12) does not have: a model with
    such a cast would not load. This pass expands `arith.truncf` to bf16 (round to
    nearest even, NaN kept quiet) and `arith.extf` from bf16 into integer
    arithmetic (MLIR's bf16 expansion), so no runtime function is needed.

    Before:
    ```mlir
    %b = arith.truncf %x : f32 to bf16
    ```
    After:
    ```mlir
    %i = arith.bitcast %x : f32 to i32
    ... (round to nearest even) ...
    %b = arith.bitcast %h : i16 to bf16
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def HostLoopOrder : Pass<"kiln-host-loop-order", "mlir::func::FuncOp"> {
  let summary = "Put a contraction's contiguous output dim innermost, for the vectorizer";
  let description = [{
    Part of the host codegen pipeline, before linalg becomes loops. A
    `linalg.generic` with reduction loops whose output's innermost index is a
    parallel loop `d` of at least `min-inner` iterations, read with unit stride (as
    the last index, `d` alone, innermost stride 1) by every buffer that uses it, is
    interchanged so that `d` runs innermost, after the reductions: a batched
    product's `out[b, m, n] += a[b, m, k] * b[b, k, n]` runs over `n` innermost and
    vectorizes, where it ran scalar dot products over `k`. Each output's reduction
    keeps its order, so results are bitwise the same. Left alone: the other
    parallel loops giving fewer than `min-outer` iterations (a matrix-vector
    product keeps its rows to thread over), strided or transposed reads along `d`,
    convolution windows (`ow + kw`: slower so on ResNet-50 and GoogLeNet), and row
    reductions (Softmax's max: the row's index is not contiguous in the input).
  }];
  let options = [
    Option<"minOuter", "min-outer", "int64_t", /*default=*/"16",
           "The fewest iterations the other parallel loops must give">,
    Option<"minInner", "min-inner", "int64_t", /*default=*/"32",
           "The fewest iterations the moved loop must have">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def HostParallel : Pass<"kiln-host-parallel", "mlir::ModuleOp"> {
  let summary = "Run host kernels' outermost parallel loops on the runtime's thread pool";
  let description = [{
    Part of the host codegen pipeline (not cuda-sim's), after linalg became
    `scf.parallel` loops (reductions stay `scf.for`). A kernel's top-level
    `scf.parallel` (or one directly in a top-level time loop's body, handed off
    every step) whose work (operations executed, loops weighted by their trip
    counts) reaches `min-work` is outlined into a private function
    `@<kernel>_par<i>(args: !llvm.ptr, begin: i64, end: i64)` running the
    iterations [begin, end) of its leading dimensions (those of more than one
    iteration, as many as give 64 iterations; the innermost stays a whole loop to
    vectorize unless it is the only one). The kernel calls
    `kiln_parallel_for(fn, args, n)` (runtime/include/kiln/runtime/ThreadPool.h),
    which splits [0, n) across the pool. Captured buffers travel as their aligned
    pointers in `args` (static shapes, strides and offsets: the function rebuilds
    each descriptor from its type), index values computed outside the kernel's
    pure code (a time loop's step) as integers in the same array; constants,
    index arithmetic and views are cloned. A loop with reductions (results), run-time bounds or a capture of
    another kind stays as it is.

    Before:
    ```mlir
    func.func @k(%a: memref<64x1024xf32>, %b: memref<64x1024xf32>) {
      scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
        ... %b[%i, %j] = f(%a[%i, %j]) ...
      }
    }
    ```
    After:
    ```mlir
    func.func @k(%a: memref<64x1024xf32>, %b: memref<64x1024xf32>) {
      %args = llvm.alloca %c2 x !llvm.ptr : (i64) -> !llvm.ptr
      ... store %a's and %b's aligned pointers into %args ...
      %fn = constant @k_par0 : (!llvm.ptr, i64, i64) -> ()
      call @kiln_parallel_for(%fn, %args, %c64_i64)
    }
    func.func private @k_par0(%args: !llvm.ptr, %begin: i64, %end: i64) {
      ... %a, %b rebuilt from the pointers in %args ...
      scf.for %i = %begin to %end {
        scf.parallel (%j) = (%c0) to (%c1024) step (%c1) { ... }
      }
    }
    ```
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Outline loops executing at least this many operations">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// Codegen: the GPU targets (codegen/cuda, codegen/cuda-sim)
//===----------------------------------------------------------------------===//

#endif // KILN_CODEGEN_HOST_PASSES_TD
