// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-decompose | FileCheck %s

// DequantizeLinear: (int32(x) - int32(zp)) * scale.
// CHECK-LABEL: func.func @dequantize
// CHECK-NOT: onnx.DequantizeLinear
// CHECK: %[[X:.*]] = "onnx.Cast"(%arg0) <{to = 6 : i64}> : (tensor<4xui8>) -> tensor<4xi32>
// CHECK: %[[Z:.*]] = "onnx.Cast"(%arg2) <{to = 6 : i64}> : (tensor<ui8>) -> tensor<i32>
// CHECK: %[[D:.*]] = "onnx.Sub"(%[[X]], %[[Z]]) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK: %[[F:.*]] = "onnx.Cast"(%[[D]]) <{to = 1 : i64}> : (tensor<4xi32>) -> tensor<4xf32>
// CHECK: %[[Y:.*]] = "onnx.Mul"(%[[F]], %arg1) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: return %[[Y]]
func.func @dequantize(%x: tensor<4xui8>, %s: tensor<f32>, %zp: tensor<ui8>) -> tensor<4xf32> {
  %y = "onnx.DequantizeLinear"(%x, %s, %zp) <{axis = 1 : i64}> : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// QuantizeLinear along axis 1: the per-channel scale and zero point are reshaped
// to broadcast (3 -> 3x1x1); round half to even, saturate to int8.
// CHECK-LABEL: func.func @quantize_axis
// CHECK: %[[S:.*]] = "onnx.Reshape"(%arg1, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<3xf32>, tensor<3xi64>) -> tensor<3x1x1xf32>
// CHECK: %[[Q:.*]] = "onnx.Div"(%arg0, %[[S]]) : (tensor<2x3x4x5xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x5xf32>
// CHECK: "onnx.Round"(%[[Q]])
// CHECK: "onnx.Reshape"(%arg2, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<3xi8>, tensor<3xi64>) -> tensor<3x1x1xi8>
// CHECK: "onnx.Add"
// CHECK: "onnx.Constant"() <{value = dense<-1.280000e+02> : tensor<f32>}>
// CHECK: "onnx.Max"
// CHECK: "onnx.Constant"() <{value = dense<1.270000e+02> : tensor<f32>}>
// CHECK: "onnx.Min"
// CHECK: "onnx.Cast"(%{{.*}}) <{to = 3 : i64}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xi8>
func.func @quantize_axis(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %zp: tensor<3xi8>) -> tensor<2x3x4x5xi8> {
  %y = "onnx.QuantizeLinear"(%x, %s, %zp) <{axis = 1 : i64}> : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3x4x5xi8>
  return %y : tensor<2x3x4x5xi8>
}

// -----

// MatMulInteger: an int32 MatMul of the zero-point-shifted operands; a per-row
// zero point of A becomes a column (4 -> 4x1).
// CHECK-LABEL: func.func @matmul_integer
// CHECK: "onnx.Reshape"(%arg2, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<4xui8>, tensor<2xi64>) -> tensor<4x1xui8>
// CHECK: "onnx.MatMul"(%{{.*}}, %{{.*}}) : (tensor<4x3xi32>, tensor<3x2xi32>) -> tensor<4x2xi32>
func.func @matmul_integer(%a: tensor<4x3xui8>, %b: tensor<3x2xui8>, %za: tensor<4xui8>) -> tensor<4x2xi32> {
  %none = onnx.NoValue
  %y = "onnx.MatMulInteger"(%a, %b, %za, %none) : (tensor<4x3xui8>, tensor<3x2xui8>, tensor<4xui8>, none) -> tensor<4x2xi32>
  return %y : tensor<4x2xi32>
}

// -----

func.func @blocked(%x: tensor<4x6xf32>, %s: tensor<4x3xf32>) -> tensor<4x6xui8> {
  %none = onnx.NoValue
  // expected-error @+1 {{blocked quantization (block_size) is not supported}}
  %y = "onnx.QuantizeLinear"(%x, %s, %none) <{axis = 1 : i64, block_size = 2 : i64}> : (tensor<4x6xf32>, tensor<4x3xf32>, none) -> tensor<4x6xui8>
  return %y : tensor<4x6xui8>
}

// -----

// RNN, reverse: one input projection for all steps, then the time loop as a Scan
// whose body is one step (a recurrence MatMul and Tanh), scanning the projections
// from the last step and stacking Y in time order; Y_h is the final state.
// CHECK-LABEL: func.func @rnn_reverse
// CHECK-NOT: onnx.RNN
// CHECK: %[[XW:.*]] = "onnx.MatMul"(%arg0, %{{.*}}) : (tensor<2x1x3xf32>, tensor<3x4xf32>) -> tensor<2x1x4xf32>
// CHECK: %[[H0:.*]] = "onnx.Constant"() <{value = dense<0.000000e+00> : tensor<1x4xf32>}>
// CHECK: %[[SCAN:.*]]:2 = "onnx.Scan"(%[[H0]], %[[XW]]) <{num_scan_inputs = 1 : i64, scan_input_axes = [0], scan_input_directions = [1], scan_output_axes = [0], scan_output_directions = [1]}> ({
// CHECK-NEXT: ^bb0(%[[H:.*]]: tensor<1x4xf32>, %[[XT:.*]]: tensor<1x4xf32>):
// CHECK-NEXT: %[[HR:.*]] = "onnx.MatMul"(%[[H]], %{{.*}}) : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[PRE:.*]] = "onnx.Add"(%[[XT]], %[[HR]])
// CHECK-NEXT: %[[HN:.*]] = "onnx.Tanh"(%[[PRE]])
// CHECK-NEXT: onnx.Yield %[[HN]], %[[HN]]
// CHECK-NEXT: }) : (tensor<1x4xf32>, tensor<2x1x4xf32>) -> (tensor<1x4xf32>, tensor<2x1x4xf32>)
// CHECK: "onnx.Reshape"(%[[SCAN]]#1, %{{.*}}) {{.*}} -> tensor<2x1x1x4xf32>
// CHECK: "onnx.Reshape"(%[[SCAN]]#0, %{{.*}}) {{.*}} -> tensor<1x1x4xf32>
func.func @rnn_reverse(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>) {
  %none = onnx.NoValue
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{direction = "reverse", hidden_size = 4 : i64, layout = 0 : i64}> : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %y, %yh : tensor<2x1x1x4xf32>, tensor<1x1x4xf32>
}

// -----

// Constant weights are laid out at compile time: W and R of the direction arrive
// transposed as new constants (no Transpose runs), and the bias's pick, an op of
// constants, is folded.
// CHECK-LABEL: func.func @rnn_constant_weights
// CHECK-NOT: onnx.Transpose
// CHECK-DAG: %[[WT:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>}>
// CHECK-DAG: %[[RT:.*]] = "onnx.Constant"() <{value = dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}>
// CHECK: "onnx.MatMul"(%arg0, %[[WT]]) : (tensor<2x1x3xf32>, tensor<3x2xf32>) -> tensor<2x1x2xf32>
// CHECK: %[[B:.*]] = "onnx.Constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}>
// CHECK-NOT: "onnx.Gather"
// CHECK: "onnx.Scan"
// CHECK: "onnx.MatMul"(%{{.*}}, %[[RT]]) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
// CHECK-NOT: onnx.Transpose
func.func @rnn_constant_weights(%x: tensor<2x1x3xf32>) -> tensor<1x1x2xf32> {
  %none = onnx.NoValue
  %w = "onnx.Constant"() <{value = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %r = "onnx.Constant"() <{value = dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %b = "onnx.Constant"() <{value = dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %y, %yh = "onnx.RNN"(%x, %w, %r, %b, %none, %none) <{hidden_size = 2 : i64}> : (tensor<2x1x3xf32>, tensor<1x2x3xf32>, tensor<1x2x2xf32>, tensor<1x4xf32>, none, none) -> (none, tensor<1x1x2xf32>)
  return %yh : tensor<1x1x2xf32>
}

// -----

// LSTM with input_forget: the forget gate is 1 - the input gate (as ONNX Runtime
// computes it); the forget gate's weights are not read.
// CHECK-LABEL: func.func @lstm_input_forget
// CHECK: "onnx.Scan"
// CHECK: %[[PRE:.*]] = "onnx.Add"
// CHECK: %[[I:.*]] = "onnx.Slice"(%[[PRE]]
// CHECK: %[[IV:.*]] = "onnx.Sigmoid"(%[[I]])
// CHECK: %[[FV:.*]] = "onnx.Sub"(%{{.*}}, %[[IV]]) : (tensor<f32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK: "onnx.Mul"(%[[FV]], %arg
func.func @lstm_input_forget(%x: tensor<1x1x2xf32>, %w: tensor<1x12x2xf32>, %r: tensor<1x12x3xf32>) -> tensor<1x1x3xf32> {
  %none = onnx.NoValue
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %none, %none, %none, %none, %none) <{hidden_size = 3 : i64, input_forget = 1 : i64}> : (tensor<1x1x2xf32>, tensor<1x12x2xf32>, tensor<1x12x3xf32>, none, none, none, none, none) -> (none, tensor<1x1x3xf32>, none)
  return %yh : tensor<1x1x3xf32>
}

// -----

// Weights whose shapes X, hidden_size and direction contradict are an error naming
// the operand (not a crash).
func.func @rnn_bad_weights(%x: tensor<5x2x3xf32>, %w: tensor<1x8x3xf32>, %r: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{RNN's W is 'tensor<1x8x3xf32>', not [1,2,3] (from X, hidden_size and direction)}}
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{hidden_size = 2 : i64}> : (tensor<5x2x3xf32>, tensor<1x8x3xf32>, tensor<1x2x2xf32>, none, none, none) -> (none, tensor<1x2x2xf32>)
  return %yh : tensor<1x2x2xf32>
}

// -----

// An If decided at run time whose branches compute next to nothing (at most 4096
// elements): both branches run, Where selects (cheaper than a host branch).
// CHECK-LABEL: func.func @runtime_if_small
// CHECK-NOT: onnx.If
// CHECK-NOT: kiln.if
// CHECK-DAG: %[[T:.*]] = "onnx.Neg"(%arg1)
// CHECK-DAG: %[[E:.*]] = "onnx.Abs"(%arg1)
// CHECK: %[[C:.*]] = "onnx.Reshape"(%arg0, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<1xi1>, tensor<0xi64>) -> tensor<i1>
// CHECK: %[[R:.*]] = "onnx.Where"(%[[C]], %[[T]], %[[E]]) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[R]]
func.func @runtime_if_small(%c: tensor<1xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "onnx.If"(%c) ({
    %a = "onnx.Abs"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %a : tensor<3xf32>
  }, {
    %n = "onnx.Neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    onnx.Yield %n : tensor<3xf32>
  }) : (tensor<1xi1>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// An If decided at run time whose branches compute more than 4096 elements: each
// branch becomes a private function of what the
// branches capture (%x, %d; the constant is cloned into the branch that reads it),
// and kiln.if picks one on the host. A nested If is outlined first, from inside
// its branch. (The op's regions print else_branch first.)
// CHECK-LABEL: func.func @runtime_if
// CHECK-NOT: onnx.If
// CHECK: %[[C:.*]] = "onnx.Reshape"(%arg0, %{{.*}}) <{allowzero = 0 : i64}> : (tensor<1xi1>, tensor<0xi64>) -> tensor<i1>
// CHECK: %[[R:.*]] = kiln.if %[[C]] then @runtime_if_if1_then else @runtime_if_if1_else(%arg2, %arg1) : tensor<i1>, (tensor<i1>, tensor<8192xf32>) -> tensor<8192xf32>
// CHECK: return %[[R]]
// CHECK-DAG: func.func private @runtime_if_if1_else(%{{.*}}: tensor<i1>, %{{.*}}: tensor<8192xf32>) -> tensor<8192xf32> {
// CHECK-DAG: func.func private @runtime_if_if1_then(%{{.*}}: tensor<i1>, %{{.*}}: tensor<8192xf32>) -> tensor<8192xf32> {
// CHECK-DAG: func.func private @runtime_if_if0_else(%{{.*}}: tensor<8192xf32>) -> tensor<8192xf32> {
// CHECK-DAG: func.func private @runtime_if_if0_then(%{{.*}}: tensor<8192xf32>) -> tensor<8192xf32> {
// CHECK-DAG: %[[N:.*]] = "onnx.Neg"
// CHECK-DAG: "onnx.Abs"
// CHECK-DAG: %[[K:.*]] = "onnx.Constant"() <{value = dense<2.000000e+00> : tensor<8192xf32>}>
// CHECK-DAG: "onnx.Mul"(%{{.*}}, %[[K]])
// CHECK-DAG: kiln.if %{{.*}} then @runtime_if_if0_then else @runtime_if_if0_else(%{{.*}}) : tensor<i1>, (tensor<8192xf32>) -> tensor<8192xf32>
func.func @runtime_if(%c: tensor<1xi1>, %x: tensor<8192xf32>, %d: tensor<i1>) -> tensor<8192xf32> {
  %two = "onnx.Constant"() <{value = dense<2.0> : tensor<8192xf32>}> : () -> tensor<8192xf32>
  %r = "onnx.If"(%c) ({
    %n = "onnx.Neg"(%x) : (tensor<8192xf32>) -> tensor<8192xf32>
    onnx.Yield %n : tensor<8192xf32>
  }, {
    %i = "onnx.If"(%d) ({
      %a = "onnx.Abs"(%x) : (tensor<8192xf32>) -> tensor<8192xf32>
      onnx.Yield %a : tensor<8192xf32>
    }, {
      %m = "onnx.Mul"(%x, %two) : (tensor<8192xf32>, tensor<8192xf32>) -> tensor<8192xf32>
      onnx.Yield %m : tensor<8192xf32>
    }) : (tensor<i1>) -> tensor<8192xf32>
    onnx.Yield %i : tensor<8192xf32>
  }) : (tensor<1xi1>) -> tensor<8192xf32>
  return %r : tensor<8192xf32>
}

// -----

// Branches that give different shapes for a result: no one plan fits both.
func.func @runtime_if_shapes(%c: tensor<i1>, %x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{If decided at run time: result 0 is 'tensor<4xf32>' from then_branch and 'tensor<3xf32>' from else_branch; Kiln needs one static type for both}}
  %r = "onnx.If"(%c) ({
    onnx.Yield %x : tensor<3xf32>
  }, {
    onnx.Yield %y : tensor<4xf32>
  }) : (tensor<i1>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// STFT with a constant frame step and a window: frames gathered by constant
// indices (3 frames of 4 from 8 samples, step 2), windowed, then the DFT's MatMuls.
// CHECK-LABEL: func.func @stft
// CHECK-NOT: onnx.STFT
// CHECK-NOT: onnx.DFT
// CHECK: "onnx.Constant"() <{value = dense<{{\[\[}}0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7]]> : tensor<3x4xi64>}>
// CHECK: "onnx.Gather"({{.*}}) <{axis = 1 : i64}> : (tensor<1x8x1xf32>, tensor<3x4xi64>) -> tensor<1x3x4x1xf32>
// CHECK: "onnx.Mul"
// CHECK: "onnx.MatMul"({{.*}}) : (tensor<1x3x4xf32>, tensor<4x3xf32>) -> tensor<1x3x3xf32>
func.func @stft(%x: tensor<1x8x1xf32>, %w: tensor<4xf32>) -> tensor<1x3x3x2xf32> {
  %none = onnx.NoValue
  %step = "onnx.Constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
  %y = "onnx.STFT"(%x, %step, %w, %none) <{onesided = 1 : i64}> : (tensor<1x8x1xf32>, tensor<i64>, tensor<4xf32>, none) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// -----

func.func @stft_runtime_step(%x: tensor<1x8x1xf32>, %step: tensor<i64>, %w: tensor<4xf32>) -> tensor<1x3x3x2xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{STFT needs a constant frame_step and frame length}}
  %y = "onnx.STFT"(%x, %step, %w, %none) <{onesided = 1 : i64}> : (tensor<1x8x1xf32>, tensor<i64>, tensor<4xf32>, none) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// -----

func.func @dft_runtime_length(%x: tensor<1x8x1xf32>, %n: tensor<i64>) -> tensor<1x8x2xf32> {
  // expected-error @+1 {{DFT's dft_length must be a constant (freeze it with --input-value)}}
  %y = "onnx.DFT"(%x, %n) <{axis = 1 : i64, inverse = 0 : i64, onesided = 0 : i64}> : (tensor<1x8x1xf32>, tensor<i64>) -> tensor<1x8x2xf32>
  return %y : tensor<1x8x2xf32>
}

// -----

func.func @rnn_unknown_activation(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x1x4xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{activation 'gelu' of RNN is not supported}}
  %y, %yh = "onnx.RNN"(%x, %w, %r, %none, %none, %none) <{activations = ["Gelu"], hidden_size = 4 : i64}> : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, none, none, none) -> (none, tensor<1x1x4xf32>)
  return %yh : tensor<1x1x4xf32>
}

// -----

func.func @maxunpool_output_too_small(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x3x3xf32> {
  %none = onnx.NoValue
  // expected-error @+1 {{MaxUnpool's output_shape is smaller than the unpooled shape}}
  %y = "onnx.MaxUnpool"(%x, %i, %none) <{kernel_shape = [2, 2], strides = [2, 2]}> : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, none) -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// TfIdfVectorizer: unigrams (5, 7) counted once, the bigram (5, 7) at skips 0 and
// 1 (windows of 5 and 4): each window compared with the pool column by column,
// And-ed, summed over the windows; constant matrices map the counts to the
// outputs with their TFIDF weights.
// CHECK-LABEL: func.func @tfidf
// CHECK-NOT: onnx.TfIdfVectorizer
// CHECK: %[[U:.*]] = "onnx.Equal"(%{{.*}}, %{{.*}}) : (tensor<2x6x1xi32>, tensor<2xi32>) -> tensor<2x6x2xi1>
// CHECK: "onnx.ReduceSum"(%{{.*}}, %{{.*}}) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<2x6x2xf32>, tensor<1xi64>) -> tensor<2x2xf32>
// CHECK: dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 2.000000e+00, 0.000000e+00]]>
// CHECK: "onnx.And"(%{{.*}}, %{{.*}}) : (tensor<2x5x1xi1>, tensor<2x5x1xi1>) -> tensor<2x5x1xi1>
// CHECK: "onnx.And"(%{{.*}}, %{{.*}}) : (tensor<2x4x1xi1>, tensor<2x4x1xi1>) -> tensor<2x4x1xi1>
// CHECK: dense<{{\[\[}}0.000000e+00, 0.000000e+00, 4.000000e+00]]>
// CHECK: %[[Y:.*]] = "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[Y]]
func.func @tfidf(%x: tensor<2x6xi32>) -> tensor<2x3xf32> {
  %y = "onnx.TfIdfVectorizer"(%x) <{mode = "TFIDF", min_gram_length = 1 : i64, max_gram_length = 2 : i64, max_skip_count = 1 : i64, ngram_counts = [0, 2], ngram_indexes = [0, 1, 2], pool_int64s = [5, 7, 5, 7], weights = [1.0 : f32, 2.0 : f32, 4.0 : f32]}> : (tensor<2x6xi32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @tfidf_bad_counts(%x: tensor<6xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{TfIdfVectorizer's ngram_counts do not partition pool_int64s}}
  %y = "onnx.TfIdfVectorizer"(%x) <{mode = "TF", min_gram_length = 2 : i64, max_gram_length = 2 : i64, max_skip_count = 0 : i64, ngram_counts = [0, 1], ngram_indexes = [0, 1], pool_int64s = [5, 7, 9, 11]}> : (tensor<6xi64>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// BatchNormalization in training mode: batch mean and population variance over
// axes 0 and 2; running statistics input * momentum + batch * (1 - momentum).
// CHECK-LABEL: func.func @bn_training
// CHECK: %[[M:.*]] = "onnx.ReduceMean"(%arg0, %{{.*}}) <{keepdims = 1 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<1x3x1xf32>
// CHECK: %[[C:.*]] = "onnx.Sub"(%arg0, %[[M]])
// CHECK: %[[SQ:.*]] = "onnx.Mul"(%[[C]], %[[C]])
// CHECK: %[[V:.*]] = "onnx.ReduceMean"(%[[SQ]], %{{.*}})
// CHECK: "onnx.Sqrt"
// CHECK: %[[Y:.*]] = "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[RM:.*]] = "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: "onnx.Reshape"(%[[V]], %{{.*}})
// CHECK: %[[RV:.*]] = "onnx.Add"(%{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[Y]], %[[RM]], %[[RV]]
func.func @bn_training(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) <{epsilon = 1.0e-2 : f32, momentum = 0.5 : f32, training_mode = 1 : i64}> : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y, %rm, %rv : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

func.func @bn_training_rank1(%x: tensor<3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{training-mode BatchNormalization needs a float input of rank >= 2}}
  %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) <{epsilon = 1.0e-2 : f32, momentum = 0.5 : f32, training_mode = 1 : i64}> : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y : tensor<3xf32>
}

// -----

// ReduceSum without keepdims, axes at run time, 3x2x2 -> 3x2: axis 1 or axis 2.
// Both reductions run; Where takes axis 1's when every run-time axis (made
// non-negative) is 1, else axis 2's.
// CHECK-LABEL: func.func @reduce_runtime_axes
// CHECK: %[[NEG:.*]] = "onnx.Less"(%arg1
// CHECK: %[[WRAP:.*]] = "onnx.Add"(%arg1
// CHECK: %[[AX:.*]] = "onnx.Where"(%[[NEG]], %[[WRAP]], %arg1)
// CHECK: %[[R2:.*]] = "onnx.ReduceSum"(%arg0, %{{.*}}) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
// CHECK: %[[R1:.*]] = "onnx.ReduceSum"(%arg0, %{{.*}}) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
// CHECK: %[[HIT:.*]] = "onnx.Equal"(%[[AX]]
// CHECK: %[[N:.*]] = "onnx.Cast"(%[[HIT]]) <{to = 7 : i64}> : (tensor<1xi1>) -> tensor<1xi64>
// CHECK: %[[ALL:.*]] = "onnx.ReduceMin"(%[[N]]
// CHECK: %[[IS:.*]] = "onnx.Equal"(%[[ALL]]
// CHECK: %[[Y:.*]] = "onnx.Where"(%[[IS]], %[[R1]], %[[R2]])
// CHECK: return %[[Y]]
func.func @reduce_runtime_axes(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %y = "onnx.ReduceSum"(%x, %axes) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Shapes that decide the axes (3x4x2 -> 3x2: axis 1) are left to the lowering.
// CHECK-LABEL: func.func @reduce_runtime_axes_decided
// CHECK-NEXT: "onnx.ReduceSum"(%arg0, %arg1)
func.func @reduce_runtime_axes_decided(%x: tensor<3x4x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %y = "onnx.ReduceSum"(%x, %axes) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<3x4x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// Compress with the output size declared (2 of 3 rows): the j-th selected row is
// the i with condition[i] and j true entries before it.
// CHECK-LABEL: func.func @compress_declared
// CHECK-NOT: onnx.Compress
// CHECK: %[[ONES:.*]] = "onnx.Cast"(%arg1) <{to = 7 : i64}> : (tensor<3xi1>) -> tensor<3xi64>
// CHECK: %[[BEFORE:.*]] = "onnx.CumSum"(%[[ONES]], %{{.*}}) <{exclusive = 1 : i64, reverse = 0 : i64}>
// CHECK: "onnx.Equal"({{.*}}) : (tensor<1x3xi64>, tensor<2x1xi64>) -> tensor<2x3xi1>
// CHECK: "onnx.And"({{.*}}) : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
// CHECK: %[[POS:.*]] = "onnx.ReduceSum"({{.*}}) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2xi64>
// CHECK: %[[Y:.*]] = "onnx.Gather"(%arg0, %[[POS]]) <{axis = 0 : i64}> : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK: return %[[Y]]
func.func @compress_declared(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<2x2xf32> {
  %y = "onnx.Compress"(%x, %c) <{axis = 0 : i64}> : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// NonZero with 3 declared hits in a 2x2 input: flat positions unravelled by
// division and remainder, one row per dimension.
// CHECK-LABEL: func.func @nonzero_declared
// CHECK: "onnx.Equal"
// CHECK: "onnx.Not"
// CHECK: "onnx.CumSum"
// CHECK: %[[POS:.*]] = "onnx.ReduceSum"({{.*}}) -> tensor<3xi64>
// CHECK: "onnx.Div"(%[[POS]]
// CHECK: "onnx.Mod"
// CHECK: "onnx.Div"(%[[POS]]
// CHECK: "onnx.Mod"
// CHECK: %[[Y:.*]] = "onnx.Concat"({{.*}}) <{axis = 0 : i64}> : (tensor<1x3xi64>, tensor<1x3xi64>) -> tensor<2x3xi64>
// CHECK: return %[[Y]]
func.func @nonzero_declared(%x: tensor<2x2xf32>) -> tensor<2x3xi64> {
  %y = "onnx.NonZero"(%x) : (tensor<2x2xf32>) -> tensor<2x3xi64>
  return %y : tensor<2x3xi64>
}

// -----

// NonZero whose size nobody declares is left alone (kiln-infer-shapes reports it).
// CHECK-LABEL: func.func @nonzero_unknown
// CHECK: "onnx.NonZero"
func.func @nonzero_unknown(%x: tensor<2x2xf32>) -> tensor<2x?xi64> {
  %y = "onnx.NonZero"(%x) : (tensor<2x2xf32>) -> tensor<2x?xi64>
  return %y : tensor<2x?xi64>
}

// -----

// Unique, sorted, 3 distinct of 4 declared: the equality table of the 4 values,
// first occurrences (no equal value before), their rank among the distinct
// values, Y gathered in rank order, inverse indices and counts from the table.
// CHECK-LABEL: func.func @unique_sorted_declared
// CHECK-NOT: onnx.Unique
// CHECK: "onnx.Equal"({{.*}}) : (tensor<4x1x1xf32>, tensor<1x4x1xf32>) -> tensor<4x4x1xi1>
// CHECK: %[[EQ:.*]] = "onnx.ReduceMin"({{.*}}) -> tensor<4x4xi64>
// CHECK: "onnx.Less"({{.*}}) : (tensor<1x4x1xf32>, tensor<4x1x1xf32>) -> tensor<4x4x1xi1>
// CHECK: "onnx.CumSum"({{.*}}) <{exclusive = 1 : i64, reverse = 0 : i64}>
// CHECK: %[[IDX:.*]] = "onnx.ReduceSum"({{.*}}) -> tensor<3xi64>
// CHECK: %[[Y:.*]] = "onnx.Gather"(%{{.*}}, %[[IDX]]) <{axis = 0 : i64}> : (tensor<4xf32>, tensor<3xi64>) -> tensor<3xf32>
// CHECK: %[[HITS:.*]] = "onnx.Gather"(%[[EQ]], %[[IDX]]) <{axis = 1 : i64}> : (tensor<4x4xi64>, tensor<3xi64>) -> tensor<4x3xi64>
// CHECK: %[[INV:.*]] = "onnx.ReduceSum"({{.*}}) -> tensor<4xi64>
// CHECK: %[[CNT:.*]] = "onnx.ReduceSum"(%[[HITS]], %{{.*}}) <{keepdims = 0 : i64, noop_with_empty_axes = 0 : i64}> : (tensor<4x3xi64>, tensor<1xi64>) -> tensor<3xi64>
// CHECK: return %[[Y]], %[[IDX]], %[[INV]], %[[CNT]]
func.func @unique_sorted_declared(%x: tensor<4xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>) {
  %y:4 = "onnx.Unique"(%x) <{sorted = 1 : i64}> : (tensor<4xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>)
  return %y#0, %y#1, %y#2, %y#3 : tensor<3xf32>, tensor<3xi64>, tensor<4xi64>, tensor<3xi64>
}

// -----

// NonMaxSuppression, 2 of 3 boxes x 2 classes declared: corners ordered, each
// class's boxes in score order (TopK) with their corners, areas and validity, then
// the greedy selection as a Scan over that order carrying the kept boxes and
// their count (box q against every box: IoU over the threshold, boxes of no area
// suppress nothing), then the kept boxes as (batch, class, box) rows.
// CHECK-LABEL: func.func @nms_declared
// CHECK-NOT: onnx.NonMaxSuppression
// CHECK-COUNT-2: "onnx.Min"({{.*}}) : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[SCORES:.*]], %[[ORDER:.*]] = "onnx.TopK"(%arg1, %{{.*}}) <{axis = 2 : i64, largest = 1 : i64, sorted = 1 : i64}> : (tensor<1x2x3xf32>, tensor<1xi64>) -> (tensor<1x2x3xf32>, tensor<1x2x3xi64>)
// CHECK-COUNT-5: "onnx.GatherElements"(%{{.*}}, %[[ORDER]]) <{axis = 2 : i64}> : (tensor<1x2x3xf32>, tensor<1x2x3xi64>) -> tensor<1x2x3xf32>
// CHECK: %[[VALID:.*]] = "onnx.Greater"(%[[SCORES]], {{.*}}) : (tensor<1x2x3xf32>, tensor<1x1x1xf32>) -> tensor<1x2x3xi1>
// CHECK: %[[SCAN:.*]]:3 = "onnx.Scan"({{.*}}, %[[VALID]], %{{.*}}) <{num_scan_inputs = 7 : i64, scan_input_axes = [2, 2, 2, 2, 2, 2, 0], {{.*}}scan_output_axes = [2]
// CHECK: ^bb0(%[[KEPT:.*]]: tensor<1x2x3xi1>, %[[COUNT:.*]]: tensor<1x2xi64>, {{.*}}, %[[VQ:.*]]: tensor<1x2xi1>, %[[Q:.*]]: tensor<i64>):
// CHECK: %[[IOU:.*]] = "onnx.Div"({{.*}}) : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
// CHECK: "onnx.Greater"(%[[IOU]], {{.*}}) : (tensor<1x2x3xf32>, tensor<1x1x1xf32>) -> tensor<1x2x3xi1>
// CHECK: "onnx.And"(%[[KEPT]], {{.*}}) : (tensor<1x2x3xi1>, tensor<1x2x3xi1>) -> tensor<1x2x3xi1>
// CHECK: "onnx.ReduceMax"({{.*}}) <{keepdims = 0 : i64{{.*}}}> : (tensor<1x2x3xi64>, tensor<1xi64>) -> tensor<1x2xi64>
// CHECK: "onnx.Less"(%[[COUNT]], {{.*}}) : (tensor<1x2xi64>, tensor<1x1xi64>) -> tensor<1x2xi1>
// CHECK: %[[KEEP:.*]] = "onnx.And"(%[[VQ]], {{.*}}) : (tensor<1x2xi1>, tensor<1x2xi1>) -> tensor<1x2xi1>
// CHECK: "onnx.Equal"(%{{.*}}, %[[Q]]) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
// CHECK: onnx.Yield {{.*}}, {{.*}}, %[[KEEP]] : tensor<1x2x3xi1>, tensor<1x2xi64>, tensor<1x2xi1>
// CHECK: "onnx.Reshape"(%[[SCAN]]#2, {{.*}}) -> tensor<6xi1>
// CHECK: "onnx.CumSum"
// CHECK: "onnx.Gather"({{.*}}) <{axis = 0 : i64}> : (tensor<6xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK: %[[Y:.*]] = "onnx.Concat"({{.*}}) <{axis = 1 : i64}> : (tensor<2x1xi64>, tensor<2x1xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
// CHECK: return %[[Y]]
func.func @nms_declared(%b: tensor<1x3x4xf32>, %s: tensor<1x2x3xf32>, %m: tensor<1xi64>, %iou: tensor<1xf32>, %st: tensor<1xf32>) -> tensor<2x3xi64> {
  %y = "onnx.NonMaxSuppression"(%b, %s, %m, %iou, %st) : (tensor<1x3x4xf32>, tensor<1x2x3xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3xi64>
  return %y : tensor<2x3xi64>
}

// -----

// A selection table (declared rows x boxes of all classes) past 2^24 entries is
// refused by name.
func.func @nms_too_many(%b: tensor<1x4097x4xf32>, %s: tensor<1x1x4097xf32>, %m: tensor<1xi64>) -> tensor<4097x3xi64> {
  // expected-error @+2 {{NonMaxSuppression selecting 4097 of 4097 boxes is too large for Kiln's selection table}}
  %none = onnx.NoValue
  %y = "onnx.NonMaxSuppression"(%b, %s, %m, %none, %none) : (tensor<1x4097x4xf32>, tensor<1x1x4097xf32>, tensor<1xi64>, none, none) -> tensor<4097x3xi64>
  return %y : tensor<4097x3xi64>
}

// -----

// Mismatched boxes and scores are an error naming both.
func.func @nms_mismatch(%b: tensor<1x5x4xf32>, %s: tensor<1x1x6xf32>) -> tensor<3x3xi64> {
  // expected-error @+2 {{NonMaxSuppression takes boxes [B, N, 4] and scores [B, C, N] into [M, 3]; got 'tensor<1x5x4xf32>', 'tensor<1x1x6xf32>' into 'tensor<3x3xi64>'}}
  %none = onnx.NoValue
  %y = "onnx.NonMaxSuppression"(%b, %s, %none, %none, %none) : (tensor<1x5x4xf32>, tensor<1x1x6xf32>, none, none, none) -> tensor<3x3xi64>
  return %y : tensor<3x3xi64>
}

// -----

// More selected boxes declared than batches x classes x boxes: an error.
func.func @nms_too_many_selected(%b: tensor<1x2x4xf32>, %s: tensor<1x1x2xf32>) -> tensor<3x3xi64> {
  %none = onnx.NoValue
  // expected-error @+1 {{NonMaxSuppression declares 3 selected boxes of 2}}
  %y = "onnx.NonMaxSuppression"(%b, %s, %none, %none, %none) : (tensor<1x2x4xf32>, tensor<1x1x2xf32>, none, none, none) -> tensor<3x3xi64>
  return %y : tensor<3x3xi64>
}
