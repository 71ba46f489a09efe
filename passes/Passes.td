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

def ConvertOnnxToLinalg : Pass<"convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower the onnx dialect to linalg, tensor, arith and math";
  let description = [{
    The tensor phase. One file per op family under passes/lowering/, each
    exporting populate<Family>LoweringPatterns. Unsigned integer tensors become
    signless (the original element type is kept on function arguments and results
    as `kiln.element_type`). An op that no pattern lowers is an error naming the
    node, the op and the opset.

    Before:
    ```mlir
    %0 = "onnx.Relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {...} ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.maximumf %x, %cst : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect", "mlir::tensor::TensorDialect"];
}

#endif // KILN_PASSES_TD
