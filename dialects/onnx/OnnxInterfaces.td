//===- OnnxInterfaces.td - Interfaces of the onnx dialect's ops -*- tablegen -*-===//
//
// InferShapesInterface is the shape function of every onnx op: given the op's
// operand types and the values of its constant operands, it gives the result types.
// Kiln's graph phase (kiln-infer-shapes) calls it op by op after folding constants,
// so that shapes computed from shapes (Shape -> Gather -> Concat -> Reshape) become
// static. The default implementation runs the operator's ONNX schema inference
// function on Kiln's own types and folded values (OnnxShapeInference.cpp); ops whose
// schema cannot say get their own functions there.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ONNX_INTERFACES_TD
#define KILN_ONNX_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Onnx_InferShapesInterface : OpInterface<"InferShapesInterface"> {
  let description = [{
    Result types of an onnx op from its operand types and constant operand values.
  }];
  let cppNamespace = "::kiln::onnx";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Infers the result types. `operandValues[i]` is the value of operand i when
        it is a known constant (an ElementsAttr), else null. On success
        `resultTypes` holds one type per result (possibly still dynamic where the
        operator's output shape depends on run-time values); on failure `why`
        says what is wrong with the op.
      }],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"inferResultTypes",
      /*args=*/(ins "::llvm::ArrayRef<::mlir::Attribute>":$operandValues,
                    "::llvm::SmallVectorImpl<::mlir::Type> &":$resultTypes,
                    "std::string &":$why),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::kiln::onnx::inferResultTypes($_op.getOperation(), operandValues,
                                              resultTypes, why);
      }]>
  ];
}

#endif // KILN_ONNX_INTERFACES_TD
