//===- KilnOps.td - Kiln's own dialect ---------------------*- tablegen -*-===//
//
// Two levels. On tensors, `kiln.kernel` groups the ops that become one launch.
// On buffers, `kiln.plan` holds the host side of a model: the arena slices, weights,
// inputs and outputs it binds, and the ordered launches of outlined kernel
// functions, each with a stream.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_KILN_OPS_TD
#define KILN_KILN_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let summary = "Kiln's kernels and execution plans";
  let cppNamespace = "::kiln";
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Tensor level: kernels
//===----------------------------------------------------------------------===//

def Kiln_KernelOp : Kiln_Op<"kernel", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A group of ops that becomes one kernel launch";
  let description = [{
    The body computes the results from the block arguments (one per input) and
    nothing else: kernels are isolated from above, so every value a kernel reads
    is an explicit input. Fusion decides what goes into one kernel.

    ```mlir
    %r = kiln.kernel "k0" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = arith.addf %x, %y : tensor<4xf32>
      kiln.yield %s : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, ReturnLike, Terminator,
    HasParent<"KernelOp">]> {
  let summary = "Returns a kernel's results";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange{}); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Buffer level: the plan
//===----------------------------------------------------------------------===//

def Kiln_PlanOp : Kiln_Op<"plan", [Symbol, NoTerminator, SingleBlock]> {
  let summary = "The host side of a compiled model";
  let description = [{
    Straight-line code over buffers: `kiln.input`/`kiln.output` bind the caller's
    tensors, `kiln.weight` the constants (laid out in the weights blob),
    `kiln.slice` the intermediates (in one arena), and `kiln.launch` calls outlined
    kernel functions in order, each on a stream. `arena_bytes` and `weight_bytes`
    are set by memory planning (-1 before).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$arena_bytes,
                       I64Attr:$weight_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def Kiln_InputOp : Kiln_Op<"input"> {
  let summary = "The caller's buffer for a model input (kept even when unused:\n                 it is part of the interface)";
  let arguments = (ins I64Attr:$index, StrAttr:$name);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$index $name attr-dict `:` type($buffer)";
}

def Kiln_OutputOp : Kiln_Op<"output"> {
  let summary = "The caller's buffer for a model output";
  let arguments = (ins I64Attr:$index, StrAttr:$name);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$index $name attr-dict `:` type($buffer)";
}

def Kiln_WeightOp : Kiln_Op<"weight", [Pure]> {
  let summary = "A constant, stored in the weights blob at `offset`";
  let arguments = (ins ElementsAttr:$value, I64Attr:$offset);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "`offset` $offset attr-dict `:` type($buffer)";
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure]> {
  let summary = "An intermediate buffer: `size` bytes of the arena at `offset`";
  let arguments = (ins I64Attr:$offset, I64Attr:$size);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "`offset` $offset `size` $size attr-dict `:` type($buffer)";
}

def Kiln_LaunchOp : Kiln_Op<"launch"> {
  let summary = "Runs an outlined kernel function on a stream";
  let description = [{
    Operands are the kernel's buffers: first `num_inputs` read, the rest written.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyStaticShapeMemRef>:$buffers,
                       I64Attr:$num_inputs, I64Attr:$stream);
  let assemblyFormat = [{
    $kernel `(` $buffers `)` `stream` $stream attr-dict `:` type($buffers)
  }];
}

def Kiln_CopyOp : Kiln_Op<"copy"> {
  let summary = "Copies a buffer (an output that is an input or a weight)";
  let arguments = (ins AnyStaticShapeMemRef:$source, AnyStaticShapeMemRef:$target,
                       I64Attr:$stream);
  let assemblyFormat = "$source `to` $target `stream` $stream attr-dict `:` type($source) `,` type($target)";
}

#endif // KILN_KILN_OPS_TD
