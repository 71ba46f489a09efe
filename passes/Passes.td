//===- Passes.td - Kiln's passes ---------------------------*- tablegen -*-===//
//
// Every Kiln pass is declared here; each has one .cpp under its phase's folder
// (codegen/<target>/ for a target's codegen passes) and one lit test named after it
// in tests/lit/passes/.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def InferShapes : Pass<"kiln-infer-shapes", "mlir::ModuleOp"> {
  let summary = "Kiln's shape inference: fold constants, infer every op's result type";
  let description = [{
    The first pass of the graph phase. One forward sweep over each function, op by
    op: an op whose operands are all constants and that computes shapes or small
    index tensors (EvaluateOnnx.h) becomes an onnx.Constant (Shape and Size need
    only a static operand type); an If whose condition is constant is replaced by
    its branch, one decided at run time has its branches inferred; a Scan with
    static shapes, and a Loop whose trip count and condition are constants, are
    unrolled (a copy of the body per step, visited in turn);
    every other op's result types come from its shape function
    (InferShapesInterface) fed with the constant operands' values, and refine the
    imported ones. So every dimension that follows from the pinned inputs becomes
    static, whatever libonnx's inference gave up on.

    An op whose operands are static but whose shape function fails, or whose
    inferred type contradicts the model's declared one, is an error naming the
    node; so is a result left non-static by an op whose operands are all static
    (its shape depends on run-time values). Function result types follow.

    Before:
    ```mlir
    %s = "onnx.Shape"(%x) : (tensor<2x3xf32>) -> tensor<?xi64>
    %y = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<?xi64>) -> tensor<*xf32>
    ```
    After:
    ```mlir
    %s = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
    %y = "onnx.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
    ```
  }];
}

def Decompose : Pass<"kiln-decompose", "mlir::ModuleOp"> {
  let summary = "Rewrite composite onnx ops into the primitives they are defined by";
  let description = [{
    Part of the graph phase, after kiln-infer-shapes. The quantization family
    (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
    ConvInteger, QLinearMatMul, QLinearConv) becomes Cast, Sub, MatMul (int32),
    Conv (f64, exact for 8-bit operands), Mul, Div, Round, Min and Max; Upsample and
    Resize-10 become Resize with asymmetric coordinates; Pad-2 and Slice-1 their
    input forms; RNN, GRU and LSTM an input projection and, per direction, a
    time loop: a Scan whose body is one step of the recurrence
    (DecomposeRecurrent.cpp; the tensor phase makes it an scf.for); an If decided at
    run time whose branches compute at most 4096 elements runs both and selects
    with Where, a larger one becomes kiln.if over two private functions, one per branch, of the
    values the branches capture (constants cloned in), each result of one static
    type from both branches (else an error naming the node); DFT becomes MatMuls
    with constant cosine and sine matrices (STFT with constant frame parameters: its
    frames gathered, windowed, then that DFT); MaxUnpool a ScatterElements into zeros.
    New ops are typed
    by their shape functions (OnnxBuilder.h).

    Before:
    ```mlir
    %y = "onnx.DequantizeLinear"(%x, %s, %zp) : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
    ```
    After:
    ```mlir
    %a = "onnx.Cast"(%x) <{to = 6 : i64}> : (tensor<4xui8>) -> tensor<4xi32>
    %b = "onnx.Cast"(%zp) <{to = 6 : i64}> : (tensor<ui8>) -> tensor<i32>
    %d = "onnx.Sub"(%a, %b) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %f = "onnx.Cast"(%d) <{to = 1 : i64}> : (tensor<4xi32>) -> tensor<4xf32>
    %y = "onnx.Mul"(%f, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect", "mlir::func::FuncDialect"];
}

def RemoveIdentity : Pass<"kiln-remove-identity", "mlir::func::FuncOp"> {
  let summary = "Remove onnx.Identity and inference-mode onnx.Dropout";
  let description = [{
    Part of the graph phase. Identity forwards its input; Dropout at inference
    (no training_mode input, or a constant false one; for Dropout-1 to 11 unless
    is_test is 0) forwards its input too, and a used mask becomes a constant all
    true. The one place Dropout is removed: one left (training mode) has no
    lowering, and the tensor phase names its node.

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

def FoldBatchNorm : Pass<"kiln-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Inference BatchNormalization to a per-channel affine";
  let description = [{
    Part of the graph phase. A BatchNormalization in inference mode whose scale,
    bias, mean and variance are constants becomes X * a + b, with
    a = scale / sqrt(var + eps) and b = bias - mean * a computed at compile time and
    laid along the channel axis. kiln-fold-affine folds the affine into a Conv,
    ConvTranspose, Gemm or MatMul before it; a standalone one stays an affine (one
    elementwise op, fused with its neighbours). Statistics that are not constants
    leave the op to the tensor phase.

    Before:
    ```mlir
    %y = "onnx.BatchNormalization"(%x, %scale, %b, %mean, %var) {epsilon = 1.0e-05 : f32}
         : (tensor<1x2x4x4xf32>, ...) -> (tensor<1x2x4x4xf32>, none, none)
    ```
    After:
    ```mlir
    %a = "onnx.Constant"() {value = dense<...> : tensor<2x1x1xf32>}
    %s = "onnx.Mul"(%x, %a) : (...) -> tensor<1x2x4x4xf32>
    %y = "onnx.Add"(%s, %c) : (...) -> tensor<1x2x4x4xf32>
    ```
  }];
}

def FoldAffine : Pass<"kiln-fold-affine", "mlir::func::FuncOp"> {
  let summary = "Fold constant scales and shifts into Conv, Gemm and MatMul weights";
  let description = [{
    Part of the graph phase, after kiln-fold-batchnorm. A Mul, Div, Add or Sub
    whose one operand is the only use of a Conv, ConvTranspose, Gemm or MatMul
    result and whose other is a constant, uniform or one value per output channel,
    is folded into the contraction: a scale multiplies each output channel's
    weights and bias, a shift adds to the bias (Gemm's C, shifted by shift / beta;
    a MatMul has no bias, so only scales fold into it). The weights must be
    constants; the arithmetic is done in double and written back in the element
    type. In program order, so a Conv, Mul, Add chain folds whole.

    Before:
    ```mlir
    %y = "onnx.Conv"(%x, %w, %b) : (...) -> tensor<1x2x4x4xf32>
    %z = "onnx.Mul"(%y, %s) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
    ```
    After:
    ```mlir
    %z = "onnx.Conv"(%x, %w_times_s, %b_times_s) : (...) -> tensor<1x2x4x4xf32>
    ```
  }];
}

def MergeSiblings : Pass<"kiln-merge-siblings", "mlir::func::FuncOp"> {
  let summary = "Merge MatMuls of one input by constant weights (Q, K, V)";
  let description = [{
    Part of the graph phase, after kiln-fold-affine. MatMuls in one block that
    multiply the same tensor by constant 2-D weights become one MatMul by the
    weights concatenated along N; each former result is a Slice of it (a view).
    When each sibling's only user adds a constant bias along N, the biases are
    concatenated and added once. Attention's separate Q, K and V projections
    become one GEMM, as a packed in-projection is.

    Before:
    ```mlir
    %q = "onnx.MatMul"(%x, %wq) : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
    %k = "onnx.MatMul"(%x, %wk) : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
    ```
    After:
    ```mlir
    %qk = "onnx.MatMul"(%x, %wqk) : (tensor<1x8x4xf32>, tensor<4x8xf32>) -> tensor<1x8x8xf32>
    %q = "onnx.Slice"(%qk, ...) -> tensor<1x8x4xf32>
    %k = "onnx.Slice"(%qk, ...) -> tensor<1x8x4xf32>
    ```
  }];
}

def ConvertToFp16 : Pass<"kiln-convert-to-fp16", "mlir::func::FuncOp"> {
  let summary = "Compute float tensors in f16, keeping precision-sensitive ops in f32";
  let description = [{
    Part of the graph phase with `--precision fp16` or `auto` (last, after the
    graph rewrites). Every op that computes f32 tensors computes f16 instead,
    except the keep-list (fp16KeepReason in passes/graph/ConvertToFp16.h): ops
    whose range or precision f16 lacks (Softmax/LogSoftmax, normalizations, the
    Reduce* sums, CumSum, Exp, Log, Pow, Range, Resize, losses, quantization),
    ops with subgraphs, Cast/ConstantOfShape/EyeLike (their type is the model's),
    and the nodes named by `keep-f32`. Casts join the two: one per value and
    precision, fused into the neighbouring kernels by the kernels phase. A float
    constant read in f16 becomes an f16 constant (weights stored in half the
    bytes) unless a value lies outside f16's finite range; then it keeps f32 and
    a Cast converts it. Contractions and sums accumulate in f32 whatever their
    operands (the lowering's accumulator policy). With `keep-input-types`
    and `keep-output-types` (the defaults) the graph's inputs and outputs keep
    their types (Casts at the edges); without, f32 inputs or outputs become f16.

    Before:
    ```mlir
    %w = "onnx.Constant"() {value = dense<...> : tensor<8x4xf32>}
    %y = "onnx.MatMul"(%x, %w) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %z = "onnx.Softmax"(%y) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    ```
    After:
    ```mlir
    %w = "onnx.Constant"() {value = dense<...> : tensor<8x4xf16>}
    %x16 = "onnx.Cast"(%x) {to = 10} : (tensor<2x8xf32>) -> tensor<2x8xf16>
    %y = "onnx.MatMul"(%x16, %w) : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16>
    %y32 = "onnx.Cast"(%y) {to = 1} : (tensor<2x4xf16>) -> tensor<2x4xf32>
    %z = "onnx.Softmax"(%y32) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let options = [
    Option<"keepInputTypes", "keep-input-types", "bool", /*default=*/"true",
           "Keep the graph's input types (Casts after the inputs)">,
    Option<"keepOutputTypes", "keep-output-types", "bool", /*default=*/"true",
           "Keep the graph's output types (Casts before the outputs)">,
    ListOption<"keepF32", "keep-f32", "std::string",
               "Nodes (by name) that stay in f32 besides the keep-list">,
  ];
}

def SimplifyViews : Pass<"kiln-simplify-views", "mlir::func::FuncOp"> {
  let summary = "Simplify transpose and reshape chains";
  let description = [{
    Part of the graph phase. In program order: a Transpose of a Transpose becomes
    one Transpose with the composed permutation, and goes when that is the
    identity (tf2onnx's NHWC/NCHW round trips); a Transpose that only moves size-1
    dimensions becomes a Reshape; a Reshape, Flatten, Squeeze or Unsqueeze of
    another becomes one Reshape of the first source, and goes when it changes
    nothing. Static shapes only.

    Before:
    ```mlir
    %t = "onnx.Transpose"(%x) {perm = [0, 2, 3, 1]} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
    %u = "onnx.Transpose"(%t) {perm = [0, 3, 1, 2]} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
    %y = "onnx.Relu"(%u)
    ```
    After:
    ```mlir
    %y = "onnx.Relu"(%x)
    ```
  }];
}

def RecognizeComposites : Pass<"kiln-recognize-composites", "mlir::func::FuncOp"> {
  let summary = "Recognize LayerNorm, GELU and attention written as primitives";
  let description = [{
    Part of the graph phase. LayerNorm as exporters write it before opset 17
    (ReduceMean, Sub, Pow 2 or a self-Mul, ReduceMean, Add eps, Sqrt, Div or Mul by
    the Reciprocal, optional Mul scale and Add bias, over trailing axes) becomes
    onnx.LayerNormalization; GELU before opset 20 becomes onnx.Gelu: any chain of
    elementwise ops (Add, Sub, Mul, Div, Pow, Erf, Tanh, Sqrt, Neg, Reciprocal) on
    one tensor and scalar constants containing an Erf or Tanh is evaluated on
    sample points and replaced when it computes the exact GELU
    (approximate = "none") or its tanh form (approximate = "tanh"); attention,
    MatMul(Q, Kt), an optional scale (Mul or Div by a scalar), an optional mask
    (Add, or Where(keep, scores, fill)), Softmax over the last axis and
    MatMul(P, V), with equal batch dims and static shapes, becomes kiln.attention.
    Intermediates used outside the composite block the match.

    Before:
    ```mlir
    %d = "onnx.Div"(%x, %sqrt2)
    %e = "onnx.Erf"(%d)
    %a = "onnx.Add"(%e, %one)
    %m = "onnx.Mul"(%x, %a)
    %y = "onnx.Mul"(%m, %half)
    ```
    After:
    ```mlir
    %y = "onnx.Gelu"(%x) <{approximate = "none"}>
    ```
  }];
  let dependentDialects = ["kiln::KilnDialect"];
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
  let dependentDialects = ["kiln::KilnDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect"];
}

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

def BuildPlan : Pass<"kiln-build-plan", "mlir::ModuleOp"> {
  let summary = "Outline kernels into functions and turn @main_graph into a kiln.plan";
  let description = [{
    The plan phase starts here. Each kiln.kernel becomes `func.func private @kN`
    over memrefs (inputs, then one buffer per result) that still computes on
    tensors inside (to_tensor / materialize_in_destination), ready for one-shot
    bufferization. @main_graph becomes a kiln.plan of inputs, outputs, weights,
    arena slices and launches; offsets and streams are left to the next passes.
    At a kiln.if, both branch functions are laid out in turn (then, else), their
    launches and copies guarded by the condition's buffer (`if(%c) [true]` /
    `[false]`; a nested If adds its own guard), each writing the If's results
    into the same buffers; a branch's kernels are named after it
    (@main_graph_if0_then_k0).
    Outlined functions carry `kiln.kernel`; an input's or output's ONNX element
    type, where the signless buffer lost it, moves from the function's
    `kiln.element_type` to the `kiln.input`/`kiln.output` op.
  }];
  let dependentDialects = ["kiln::KilnDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def AssignStreams : Pass<"kiln-assign-streams", "mlir::ModuleOp"> {
  let summary = "Schedule launches on streams in parallel stages, with the minimum events";
  let description = [{
    Builds the DAG of launches and copies, estimates each one's time on a device
    model (FLOPs, bytes and blocks vs SMs, or the host's cores a kernel's work fills), cuts the DAG
    where one node feeds everything after it, and splits each region into stages
    of independent groups run concurrently, one stream per group (IOS-style: exact
    search over down-closed sets for small regions, greedy beyond a budget), at
    most `max-streams` at once (1: everything on stream 0 in plan order). Then it
    orders the plan by stage and inserts `kiln.record`/`kiln.wait` only where
    vector clocks say no existing path orders a dependency (the transitive
    reduction); every other stream waits for the run's start on stream 0 and is
    joined into it at the end. With `memory-budget`, schedules whose arena exceeds
    it are serialized (fewer streams); an error when even one stream does not fit.
    Records `estimated_ns` (the schedule's critical path), `sequential_ns`,
    `sequential_arena_bytes` and `sequential_lower_bound_bytes` on the plan for the
    report.

    Before:
    ```mlir
    kiln.launch @a(%x, %t1) stream -1 ...
    kiln.launch @b(%x, %t2) stream -1 ...
    kiln.launch @c(%t1, %t2, %y) stream -1 ...
    ```
    After (`max-streams=2`):
    ```mlir
    kiln.record event 0 stream 0
    kiln.launch @a(%x, %t1) stream 0 ...
    kiln.wait event 0 stream 1
    kiln.launch @b(%x, %t2) stream 1 ...
    kiln.record event 1 stream 1
    kiln.wait event 1 stream 0
    kiln.launch @c(%t1, %t2, %y) stream 0 ...
    ```
  }];
  let options = [
    Option<"maxStreams", "max-streams", "int64_t", /*default=*/"1",
           "The most streams that run at once (1: sequential)">,
    Option<"deviceModel", "device", "std::string", /*default=*/"\"h200\"",
           "The device model of the cost model: h200, a100 or host">,
    Option<"hostCores", "host-cores", "int64_t", /*default=*/"0",
           "Cores of the host device model (0: this machine's)">,
    Option<"memoryBudget", "memory-budget", "int64_t", /*default=*/"0",
           "The most arena bytes the schedule may need (0: no limit)">,
  ];
}

def PlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place arena slices and weights";
  let description = [{
    Liveness over the schedule's happens-before order (stream order and events,
    not the textual order): two tensors share bytes only when every use of one
    happens before every use of the other, or when a launch's `in_place` lets it
    write its result over an input that dies at it (then at the very same bytes).
    Slices are placed greedily, largest first, at the lowest 64-byte aligned
    offset that overlaps no tensor it may not share with. Weights are laid out one
    after another. Sets the plan's `arena_bytes`, `weight_bytes`,
    `lower_bound_bytes` (the most bytes live around one launch) and `naive_bytes`
    (the sum of all slices).
  }];
  let options = [
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let in_place launches write over the input that dies at them (false: "
           "for comparison)">,
  ];
}

def SelectLibraryCalls : Pass<"kiln-select-library-calls", "mlir::ModuleOp"> {
  let summary = "Mark the launches a contraction library runs (#kiln.library_call)";
  let description = [{
    A target's plan step (host: oneDNN). A launch whose kernel is one 2-d
    convolution (NCHW, OIHW weights, grouped or not, zero padding) or (batched)
    matrix product with its zero-filled f32 accumulator and at most one
    elementwise epilogue out = activation(scale * acc + per-channel bias +
    residual), activation Relu, Clip or GELU (erf or tanh form), gets
    `library = #kiln.library_call<...>` naming the contraction, its sizes and
    which buffers are input, weights, bias, residual and output. Its operands are
    all f32, or all f16 (read into the f32 accumulator; the epilogue may round it
    to f16 where it starts or ends: the library computes it in f32 and rounds
    once): the buffers' type is the call's. The kernel is kept: the run falls back
    to it where the library cannot run the call.

    `engine` names the library and so what it can fuse: `onednn` (host: every
    form above), `cuda` (cuBLASLt and cuDNN: every operand f32 or every one f16;
    matrix products with Relu or GELU in its tanh form, convolutions with Relu only
    and the same padding before as after, or less after where the windows never
    reach it).

    ```mlir
    kiln.launch @k0(%x, %w, %b, %y) stream -1 {num_inputs = 3 : i64, library =
      #kiln.library_call<"conv", shape = [1, 3, 8, 8, 4, 3, 3, 8, 8, 1, 1, 1, 1, 1,
      1, 1, 1, 1], operands = [0, 1, 2, -1, 3], activation = "relu"(0.0, 0.0)>} ...
    ```
  }];
  let options = [
    Option<"engine", "engine", "std::string", /*default=*/"\"onednn\"",
           "The library the calls run on: onednn or cuda">,
    Option<"fallbackKernels", "fallback-kernels", "bool", /*default=*/"true",
           "Keep each call's kernel (the run's fallback); false: the kernels only "
           "library calls launch become declarations">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def VerifyPlan : Pass<"kiln-verify-plan", "mlir::ModuleOp"> {
  let summary = "Check a plan's streams, events and memory";
  let description = [{
    Fails, naming both launches, when two launches or copies touch overlapping
    bytes (arena, weights or a caller's buffer), one writing, with no
    happens-before path between them; when two arena tensors in overlapping bytes
    can be live together; when a stream does not wait for the run's start or is not
    joined into stream 0 before its end; and when a slice leaves the arena.
  }];
}

//===----------------------------------------------------------------------===//
// Codegen: the host target (codegen/host)
//===----------------------------------------------------------------------===//

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

def MapToGpu : Pass<"kiln-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map kernel functions to gpu.funcs (blocks, threads, shared memory)";
  let description = [{
    The first step of the cuda and cuda-sim codegen phases. Every kernel function
    (memref arguments, linalg ops) becomes one or more `gpu.func`s in
    `gpu.module @kiln_kernels`, one per top-level linalg op (a stage), mapped by
    the first strategy that fits: tiled contraction (GEMM, batched GEMM,
    convolution as implicit GEMM), block reduction, thread per output. The
    gpu.module records the architecture (`#nvvm.target`); each `kiln.launch`
    records its stages (`#kiln.gpu_stage`: function, grid, block, whether it
    synchronizes) and, when they need kernel-internal buffers, an arena slice for
    them (`scratch`). Block reductions become
    shuffles and shared memory (gpu.all_reduce lowering).

    Before:
    ```mlir
    func.func @k0(%x: memref<1024xf32>, %y: memref<1024xf32>) attributes {kiln.kernel} {
      linalg.generic {...} ins(%x) outs(%y) { ... }
    }
    kiln.plan @main { ... kiln.launch @k0(%x, %y) stream 0 ... }
    ```
    After:
    ```mlir
    gpu.module @kiln_kernels [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
      gpu.func @k0_s0(%x: memref<1024xf32>, %y: memref<1024xf32>) kernel { ... }
    }
    kiln.plan @main { ... kiln.launch @k0(%x, %y) stream 0 {gpu_stages = [
        #kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [256, 1, 1], sync = false>]} ... }
    ```
  }];
  let options = [
    Option<"gpuArch", "gpu-arch", "std::string", /*default=*/"\"sm_80\"",
           "The GPU architecture, one of the table in codegen/cuda/GpuArch.cpp">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
                           "mlir::memref::MemRefDialect", "mlir::math::MathDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def ExpandMath : Pass<"kiln-expand-math"> {
  let summary = "Expand math without an instruction into arithmetic";
  let description = [{
    After kiln-map-to-gpu on the cuda and cuda-sim targets (on the gpu.module), and
    in the host codegen pipeline (on the kernels, so that the loops vectorize
    instead of calling libm element by element): math.ipowi becomes
    square-and-multiply; tan, sinh, cosh, asinh, acosh, atanh, powf, fpowi and
    roundf their arithmetic expansions; exp, log, erf, tanh, ... MLIR's polynomial
    approximations. What remains (f64 math, mostly) calls libdevice on cuda and
    libm on the host.

    Before:
    ```mlir
    %r = math.ipowi %b, %e : i32
    ```
    After:
    ```mlir
    %r = scf.for ... iter_args(%acc = %c1, %base = %b, %exp = %e) { ... }
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::math::MathDialect"];
}

def SimulateGpu : Pass<"kiln-gpu-to-sim", "mlir::ModuleOp"> {
  let summary = "Turn the mapped gpu.funcs into host functions that call the SIMT simulator";
  let description = [{
    The step that makes the cuda-sim target: every gpu.func of the gpu.module
    becomes a host func.func whose thread and block ids, barriers and 32-bit
    shuffles call the simulator (runtime/SimRuntime.h), and whose workgroup memory
    is one global per attribution, `@kiln_sim_shared.<kernel>.<i>` (the simulator
    runs one block at a time on a host thread). A stage
    that synchronizes but whose `#kiln.gpu_stage` says it does not is an error.

    Before:
    ```mlir
    gpu.func @k0_s0(%x: memref<8xf32>) kernel { %t = gpu.thread_id x ... }
    ```
    After:
    ```mlir
    func.func @k0_s0(%x: memref<8xf32>) { %t = call @kiln_sim_thread_id(%c0) ... }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def SimThreadLocalShared : Pass<"kiln-sim-thread-local-shared", "mlir::ModuleOp"> {
  let summary = "Make the simulator's shared-memory globals thread-local";
  let description = [{
    The last step of the cuda-sim codegen phase, on the LLVM dialect: every global
    kiln-gpu-to-sim made for shared memory (`@kiln_sim_shared.*`) becomes
    thread_local, so contexts of one model that run the same kernel on several
    host threads at once each simulate their own block's shared memory.

    Before: `llvm.mlir.global private @kiln_sim_shared.k0_s0.0() ...`
    After: `llvm.mlir.global private thread_local @kiln_sim_shared.k0_s0.0() ...`
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_PASSES_TD
