//===- OnnxBase.td - The onnx dialect and its hand-written ops -*- tablegen -*-===//
//
// The onnx dialect is Kiln's import dialect: one op per ONNX operator (generated in
// OnnxOps.td), tensors with static shapes, the ONNX node name as each op's location.
// This file holds the dialect definition and the few ops ONNX has no schema for.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ONNX_BASE_TD
#define KILN_ONNX_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "dialects/onnx/OnnxInterfaces.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let summary = "ONNX operators as imported by Kiln";
  let description = [{
    One op per ONNX operator of the default domain, generated from the ONNX schema.
    Optional inputs that are absent are `none` values (onnx.NoValue); attributes
    are materialized with the defaults of the operator version the model used.
  }];
  let cppNamespace = "::kiln::onnx";
}

// Every op has a shape function (OnnxInterfaces.td).
class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, !listconcat(traits, [Onnx_InferShapesInterface])>;

def Onnx_NoValueOp : Onnx_Op<"NoValue", [Pure]> {
  let summary = "An absent optional input or output";
  let results = (outs NoneType:$none);
  let assemblyFormat = "attr-dict";
}

def Onnx_YieldOp : Onnx_Op<"Yield", [Pure, ReturnLike, Terminator]> {
  let summary = "Returns the outputs of an If, Loop or Scan subgraph";
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // KILN_ONNX_BASE_TD
