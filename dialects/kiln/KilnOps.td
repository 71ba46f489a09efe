//===- KilnOps.td - Kiln's own dialect ---------------------*- tablegen -*-===//
//
// Two levels. On tensors, `kiln.kernel` groups the ops that become one launch.
// On buffers, `kiln.plan` holds the host side of a model: the arena slices, weights,
// inputs and outputs it binds, and the ordered launches of outlined kernel
// functions, each with a stream.
//
// Everything one phase writes and a later one reads is declared here, with a
// verifier: the ops and their attributes, `#kiln.gpu_stage` (a launch's mapping to
// the GPU, written by kiln-map-to-gpu, read by the emitter), and two discardable
// attributes: `kiln.kernel` (an outlined kernel function) and `kiln.element_type`
// (an argument's or result's ONNX element type where the signless type lost it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_KILN_OPS_TD
#define KILN_KILN_OPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let summary = "Kiln's kernels and execution plans";
  let cppNamespace = "::kiln";
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$kernel,
    "::mlir::TypeAttr":$element_type,
    // On a kiln.launch of a contraction: the engine of Kiln's kernel for it
    // ("tensor_cores" or "simt", kiln-map-to-gpu), and why that engine (and not
    // the other, or the library call: kiln-choose-engines).
    "::mlir::StringAttr":$engine,
    "::mlir::StringAttr":$engine_reason,
    // On a kiln.launch: its time alone on the device by the cost model
    // (kiln-assign-streams), in ns; the report gives it per kernel.
    "::mlir::IntegerAttr":$estimated_ns,
    // On the cuda gpu.module: the kernel cache's directory and each kernel's
    // name and key, in kernel order (kiln-take-cached-kernels).
    "::mlir::DictionaryAttr":$kernel_cache
  );
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Kiln_GpuStageAttr : AttrDef<Kiln_Dialect, "GpuStage"> {
  let mnemonic = "gpu_stage";
  let summary = "One GPU launch of a kernel: its function and geometry";
  let description = [{
    kiln-map-to-gpu maps a kernel to one or more stages, launched in order on the
    kernel's stream; each is a `gpu.func` of `gpu.module @kiln_kernels` (a host
    function on cuda-sim) with a grid and a block of three dimensions. `sync` says
    whether the stage's threads meet at barriers or exchange values by shuffles
    (the simulator then runs them as fibers).

    ```mlir
    #kiln.gpu_stage<"k0_s0", grid = [4, 1, 1], block = [256, 1, 1], sync = false>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$function,
                        ArrayRefParameter<"int64_t">:$grid,
                        ArrayRefParameter<"int64_t">:$block,
                        "::mlir::BoolAttr":$sync);
  let assemblyFormat = [{
    `<` $function `,` `grid` `=` `[` $grid `]` `,` `block` `=` `[` $block `]` `,`
    `sync` `=` $sync `>`
  }];
  let genVerifyDecl = 1;
}

def Kiln_GpuStageArrayAttr : TypedArrayAttrBase<Kiln_GpuStageAttr, "GPU stages">;

def Kiln_LibraryCallAttr : AttrDef<Kiln_Dialect, "LibraryCall"> {
  let mnemonic = "library_call";
  let summary = "A launch that a contraction library can run instead of its kernel";
  let description = [{
    kiln-select-library-calls sets it on a launch whose kernel is one contraction
    (`kind` "conv": a 2-d convolution, NCHW input and OIHW weights; "matmul": a
    row-major (batched) matrix product) with its input padding and an epilogue the
    library fuses: out = activation(scale * acc + bias + residual) (no scale with a
    bias). `shape` is
    conv [N, C, H, W, F, KH, KW, OH, OW, groups, stride h, w, dilation h, w,
    pad top, left, bottom, right], matmul [batch, M, N, K, transpose A,
    transpose B, A batched, B batched] (0/1 flags). `operands` are the launch's
    buffer indices of [input, weights, bias, residual, output], -1 where absent.
    `activation` is "none", "relu", "clip" (between `alpha` and `beta`) or
    "gelu_erf" or "gelu_tanh". The
    kernel stays in the artifact: a run falls back to it where the library is
    missing or cannot run the call.

    ```mlir
    #kiln.library_call<"conv", shape = [1, 3, 224, 224, 64, 7, 7, 112, 112, 1,
      2, 2, 1, 1, 3, 3, 3, 3], operands = [0, 1, 2, -1, 3], activation = "relu"(0.0, 0.0), scale = 1.0>
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$kind, ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"int64_t">:$operands,
                        "::mlir::StringAttr":$activation, "::mlir::FloatAttr":$alpha,
                        "::mlir::FloatAttr":$beta, "::mlir::FloatAttr":$scale);
  let assemblyFormat = [{
    `<` $kind `,` `shape` `=` `[` $shape `]` `,` `operands` `=` `[` $operands `]` `,`
    `activation` `=` $activation `(` $alpha `,` $beta `)` `,` `scale` `=` $scale `>`
  }];
  let genVerifyDecl = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Graph level: composites the graph phase recognizes and ONNX (opset <= 21) lacks
//===----------------------------------------------------------------------===//

def Kiln_AttentionOp : Kiln_Op<"attention", [Pure]> {
  let summary = "Scaled dot-product attention: softmax(scale * Q Kt (masked)) V";
  let description = [{
    kiln-recognize-composites makes it from the MatMul, scale, mask, Softmax,
    MatMul chain exporters write; kiln-convert-onnx-to-linalg lowers it to the
    contraction, row Softmax and contraction that the `attention` fusion rule
    makes one kernel. `q` is [batch..., Sq, D], `kt` the keys transposed
    [batch..., D, Sk], `v` [batch..., Sk, Dv], the result [batch..., Sq, Dv], batch
    dims equal. The scores `scale * q kt` are masked by `mask_kind`: "none";
    "add" (an additive `mask` broadcasting to the scores); "keep" (a boolean `mask`:
    where false the score is `fill`, as Where(mask, scores, fill)). Softmax runs
    over the last axis.

    ```mlir
    %o = "kiln.attention"(%q, %kt, %v) <{scale = 0.125 : f64, mask_kind = "none",
         fill = 0.0 : f64}> : (tensor<1x12x128x64xf32>, tensor<1x12x64x128xf32>,
         tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$q, AnyRankedTensor:$kt, AnyRankedTensor:$v,
                       Optional<AnyRankedTensor>:$mask, F64Attr:$scale,
                       StrAttr:$mask_kind, F64Attr:$fill);
  let results = (outs AnyRankedTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor level: branches decided at run time, kernels
//===----------------------------------------------------------------------===//

def Kiln_IfOp : Kiln_Op<"if", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs one of two branch functions, chosen on the host at run time";
  let description = [{
    kiln-decompose outlines each branch of an ONNX If whose condition is known only
    at run time into a function of the values the branches capture (`inputs`, the
    same for both), returning the If's results. The phases up to the kernels
    treat the branch functions like @main_graph; kiln-build-plan lays both
    branches' launches into the plan, each guarded by the condition (`guards`
    on kiln.launch and kiln.copy), and the emitters branch on the host.

    ```mlir
    %r = kiln.if %c then @main_graph_if0_then else @main_graph_if0_else (%x)
        : tensor<i1>, (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$cond, Variadic<AnyRankedTensor>:$inputs,
                       FlatSymbolRefAttr:$then_branch, FlatSymbolRefAttr:$else_branch);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $cond `then` $then_branch `else` $else_branch `(` $inputs `)` attr-dict `:`
    type($cond) `,` functional-type($inputs, $results)
  }];
  let hasVerifier = 1;
}

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
    are set by memory planning (-1 before), which also records the most bytes live
    at once (`lower_bound_bytes`) and the sum of all slices (`naive_bytes`).
    Scheduling records the cost model's critical path of the schedule
    (`estimated_ns`), the sum of all launches (`sequential_ns`) and the arena and
    lower bound of the sequential plan (`sequential_arena_bytes`,
    `sequential_lower_bound_bytes`), for the report.
    Inputs are numbered 0..n-1 and outputs 0..m-1, each exactly once.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$arena_bytes,
                       I64Attr:$weight_bytes,
                       OptionalAttr<I64Attr>:$lower_bound_bytes,
                       OptionalAttr<I64Attr>:$naive_bytes,
                       OptionalAttr<I64Attr>:$estimated_ns,
                       OptionalAttr<I64Attr>:$sequential_ns,
                       OptionalAttr<I64Attr>:$sequential_arena_bytes,
                       OptionalAttr<I64Attr>:$sequential_lower_bound_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name), [{
    build($_builder, $_state, name, -1, -1, nullptr, nullptr, nullptr, nullptr, nullptr,
          nullptr);
  }]>];
  let extraClassDeclaration = [{
    /// The plan's inputs and outputs, ordered by index.
    ::llvm::SmallVector<InputOp> getInputOps();
    ::llvm::SmallVector<OutputOp> getOutputOps();
  }];
  let hasVerifier = 1;
}

def Kiln_InputOp : Kiln_Op<"input"> {
  let summary = "The caller's buffer for a model input (kept even when unused:\n                 it is part of the interface)";
  let description = [{
    `element_type`, when present, is the input's ONNX element type where the
    buffer's signless type lost its signedness (ui8 for an i8 buffer).
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name, OptionalAttr<TypeAttr>:$element_type);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$index $name attr-dict `:` type($buffer)";
}

def Kiln_OutputOp : Kiln_Op<"output"> {
  let summary = "The caller's buffer for a model output";
  let description = [{ `element_type` as on `kiln.input`. }];
  let arguments = (ins I64Attr:$index, StrAttr:$name, OptionalAttr<TypeAttr>:$element_type);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$index $name attr-dict `:` type($buffer)";
}

def Kiln_WeightOp : Kiln_Op<"weight", [Pure]> {
  let summary = "A constant, stored in the weights blob at `offset`";
  let arguments = (ins ElementsAttr:$value, I64Attr:$offset);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "`offset` $offset attr-dict `:` type($buffer)";
}

def Kiln_SliceOp : Kiln_Op<"slice", [MemoryEffects<[MemAlloc]>]> {
  let summary = "An intermediate buffer: `size` bytes of the arena at `offset`";
  let description = [{
    Each slice holds one tensor until memory planning places it (offset -1
    before); identical slices are not merged (an allocation, not a pure value).
  }];
  let arguments = (ins I64Attr:$offset, I64Attr:$size);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "`offset` $offset `size` $size attr-dict `:` type($buffer)";
}

def Kiln_LaunchOp : Kiln_Op<"launch", [AttrSizedOperandSegments]> {
  let summary = "Runs an outlined kernel function on a stream";
  let description = [{
    Operands are the kernel's buffers: first `num_inputs` read, the rest written.
    `flops` (kiln-build-plan) estimates the arithmetic of one run of the kernel,
    for the scheduler's cost model. On the GPU targets, kiln-map-to-gpu records
    how the kernel runs: its stages (`gpu_stages`, launched in order) and, when
    they need kernel-internal buffers, an arena slice for them (`scratch`, passed
    after the buffers; written and read by this launch only). `in_place` (memory
    planning's input) names, per written buffer, the read buffer whose bytes it
    may take over (-1: none): the kernel reads that input only at the element it
    writes. `library` (kiln-select-library-calls, host) says that a contraction
    library may run the launch instead of its kernel. `guards` (kiln-build-plan,
    a branch of a `kiln.if`): one-element i1 buffers the host reads; the launch
    runs only when each holds its `guard_values` entry. The plan's analyses count
    a guard as a read.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyStaticShapeMemRef>:$buffers,
                       Optional<AnyStaticShapeMemRef>:$scratch,
                       I64Attr:$num_inputs, I64Attr:$stream,
                       OptionalAttr<I64Attr>:$flops,
                       OptionalAttr<Kiln_GpuStageArrayAttr>:$gpu_stages,
                       OptionalAttr<DenseI64ArrayAttr>:$in_place,
                       OptionalAttr<Kiln_LibraryCallAttr>:$library,
                       Variadic<AnyStaticShapeMemRef>:$guards,
                       OptionalAttr<DenseBoolArrayAttr>:$guard_values);
  let assemblyFormat = [{
    $kernel `(` $buffers `)` (`scratch` `(` $scratch^ `:` type($scratch) `)`)?
    (`if` `(` $guards^ `:` type($guards) `)` $guard_values)?
    `stream` $stream attr-dict `:` type($buffers)
  }];
  let builders = [OpBuilder<(ins "::llvm::StringRef":$kernel, "::mlir::ValueRange":$buffers,
                                 "int64_t":$numInputs), [{
    build($_builder, $_state, kernel, buffers, ::mlir::Value(), numInputs, -1, nullptr,
          nullptr, nullptr, nullptr, ::mlir::ValueRange(), nullptr);
  }]>];
  let extraClassDeclaration = [{
    /// The buffers the kernel reads and those it writes.
    ::mlir::OperandRange getReadBuffers() {
      return getBuffers().take_front(static_cast<size_t>(getNumInputs()));
    }
    ::mlir::OperandRange getWrittenBuffers() {
      return getBuffers().drop_front(static_cast<size_t>(getNumInputs()));
    }
  }];
  let hasVerifier = 1;
}

def Kiln_CopyOp : Kiln_Op<"copy"> {
  let summary = "Copies a buffer (an output that is an input or a weight)";
  let description = [{ `guards` and `guard_values` as on kiln.launch. }];
  let arguments = (ins AnyStaticShapeMemRef:$source, AnyStaticShapeMemRef:$target,
                       I64Attr:$stream, Variadic<AnyStaticShapeMemRef>:$guards,
                       OptionalAttr<DenseBoolArrayAttr>:$guard_values);
  let assemblyFormat = [{
    $source `to` $target (`if` `(` $guards^ `:` type($guards) `)` $guard_values)?
    `stream` $stream attr-dict `:` type($source) `,` type($target)
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$source, "::mlir::Value":$target,
                                 "int64_t":$stream), [{
    build($_builder, $_state, source, target, stream, ::mlir::ValueRange(), nullptr);
  }]>];
  let hasVerifier = 1;
}

def Kiln_RecordOp : Kiln_Op<"record"> {
  let summary = "Records `event` on `stream`";
  let description = [{
    The event completes when everything issued to `stream` before it (in plan
    order) has. Each event is recorded once per run; kiln-assign-streams inserts
    records and waits, kiln-verify-plan checks that they order every pair of
    conflicting launches.
  }];
  let arguments = (ins I64Attr:$event, I64Attr:$stream);
  let assemblyFormat = "`event` $event `stream` $stream attr-dict";
}

def Kiln_WaitOp : Kiln_Op<"wait"> {
  let summary = "Makes `stream` wait for `event`";
  let description = [{
    Work issued to `stream` after the wait starts only once the event, recorded
    earlier in the plan on another stream, has completed.
  }];
  let arguments = (ins I64Attr:$event, I64Attr:$stream);
  let assemblyFormat = "`event` $event `stream` $stream attr-dict";
}

#endif // KILN_KILN_OPS_TD
