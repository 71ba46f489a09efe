//===- Passes.td - The graph phase's passes -*- tablegen -*-===//
//
// The graph phase's passes: rewrites with ONNX meaning on the onnx dialect.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_PASSES_TD
#define KILN_PASSES_GRAPH_PASSES_TD

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

#endif // KILN_PASSES_GRAPH_PASSES_TD
