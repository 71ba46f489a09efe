//===- Passes.td - The kernels phase's passes -*- tablegen -*-===//
//
// The kernels phase's passes: fusion by named rules (FusionRules.h) into kiln.kernel regions.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_PASSES_TD
#define KILN_PASSES_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise producers into their only consumer";
  let description = [{
    The first fusion of the kernels phase: linalg's elementwise fusion, limited to
    producers whose single user is the consumer (no recomputation). Chains such
    as bias + ReLU or the arithmetic of a normalization collapse into one
    linalg.generic, which kiln-form-kernels then makes one kernel.

    Before:
    ```mlir
    %a = linalg.generic {add} ins(%x, %b) ...
    %r = linalg.generic {max(., 0)} ins(%a) ...
    ```
    After:
    ```mlir
    %r = linalg.generic {add; max(., 0)} ins(%x, %b) ...
    ```

    Transposes (generics that only move their input) also fold into a MatMul
    that reads them and into the output layout of a MatMul that produces them,
    unless `transposes` is off (kiln compile --no-fuse=transpose).
  }];
  let options = [
    Option<"transposes", "transposes", "bool", /*default=*/"true",
           "Fold transposes into the contractions next to them">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def FormKernels : Pass<"kiln-form-kernels", "mlir::func::FuncOp"> {
  let summary = "Group tensor-level ops into kiln.kernel regions";
  let description = [{
    The kernels phase. Each compute op (linalg, or a tensor op that makes a new
    tensor) becomes a kiln.kernel with the cheap producers it needs
    (tensor.empty, scalar constants, fills, reshapes, slices) cloned inside;
    graph inputs, weights and other kernels' results are its inputs.

    Before:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic ... ins(%x) outs(%e) -> tensor<4xf32>
    ```
    After:
    ```mlir
    %r = kiln.kernel "k0" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = tensor.empty() : tensor<4xf32>
      %g = linalg.generic ... ins(%a) outs(%e) -> tensor<4xf32>
      kiln.yield %g : tensor<4xf32>
    }
    ```

    Producers then join their consumer's kernel by rules, each of which
    `disable` (kiln compile --no-fuse=RULE) turns off: `epilogue` (an elementwise
    generic that alone reads a reduction's result at the same index), `pad` (a
    tensor.pad read only by a reduction), `concat` (a Concat's insert_slice
    chain with the producers of its slices) and `reduction` (row reductions and
    the elementwise generics around them that stay in their row: Softmax,
    LayerNorm) and `attention` (the small batched contractions that produce or
    consume such rows, each operand indexed by the row's batch loops: Q K^T,
    scale, mask, Softmax and P V as one kernel). Reshapes and slices are cloned into the kernels that read them
    (views, not kernels). A kernel yields the results its members give to ops
    outside it.
  }];
  let options = [
    ListOption<"disabledRules", "disable", "std::string",
               "Fusion rules to leave out (epilogue, pad, concat, reduction, attention; all: every one)">
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_PASSES_FUSION_PASSES_TD
