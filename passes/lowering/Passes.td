//===- Passes.td - The tensor phase's pass -*- tablegen -*-===//
//
// The tensor phase's pass: onnx to linalg, tensor, arith and math, one pattern file per op family.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_PASSES_TD
#define KILN_PASSES_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertOnnxToLinalg : Pass<"kiln-convert-onnx-to-linalg", "mlir::ModuleOp"> {
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
  let dependentDialects = ["kiln::KilnDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect"];
}

#endif // KILN_PASSES_LOWERING_PASSES_TD
