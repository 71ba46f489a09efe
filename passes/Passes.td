//===- Passes.td - Kiln's passes ---------------------------*- tablegen -*-===//
//
// Every Kiln pass is declared here; each has one .cpp under its phase's folder and
// one lit test named after it in tests/lit/passes/.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def RemoveIdentity : Pass<"kiln-remove-identity", "mlir::func::FuncOp"> {
  let summary = "Remove onnx.Identity and inference-mode onnx.Dropout";
  let description = [{
    Part of the graph phase. Identity forwards its input; Dropout at inference
    (no training_mode input, or a constant false one) forwards its input too, and
    is removed when its mask output is unused.

    Before:
    ```mlir
    %1 = "onnx.Identity"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2, %mask = "onnx.Dropout"(%1, %none, %none) : (...) -> (tensor<4xf32>, none)
    return %2
    ```
    After:
    ```mlir
    return %0
    ```
  }];
}

#endif // KILN_PASSES_TD
