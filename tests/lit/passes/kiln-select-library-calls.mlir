// The plan of an MLP (MatMul + bias + Relu in one kernel) built with Kiln's kernels
// only, then kiln-select-library-calls alone: the kernel becomes a library call with
// the bias and Relu as its epilogue; a kernel computing anything else stays one.
// RUN: kiln compile %S/../e2e/Inputs/mlp.onnxtxt --contractions kiln --compile-to plan -o %t.mlir
// RUN: kiln-opt --kiln-select-library-calls %t.mlir | FileCheck %s
// RUN: kiln compile %S/../e2e/Inputs/chain.onnxtxt --contractions kiln --compile-to plan -o %t2.mlir
// RUN: kiln-opt --kiln-select-library-calls %t2.mlir | FileCheck %s --check-prefix=NONE
// CHECK: kiln.launch @k0({{.*}}library = #kiln.library_call<"matmul", shape = [1, 2, 2, 3, 0, 0, 0, 0], operands = [0, 1, 2, -1, 3], activation = "relu"
// NONE-NOT: library_call
// The cuda targets' engine (GpuTarget.cpp's cudaLibraryEngine) takes what cuBLASLt
// and cuDNN fuse: the conv + Relu, not the depthwise conv's Clip nor GELU's erf
// form; an unknown activation is an error.
// RUN: %python %S/../e2e/Inputs/make_contractions.py %t3.onnx
// RUN: kiln compile %t3.onnx --contractions kiln --compile-to plan -o %t3.mlir
// RUN: kiln-opt --kiln-select-library-calls="uniform-element-type=true matmul-activations=none,relu,gelu_tanh conv-activations=none,relu symmetric-padding=true" %t3.mlir | FileCheck %s --check-prefix=CUDA
// RUN: not kiln-opt --kiln-select-library-calls="matmul-activations=relu,swish" %t3.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// CUDA: kiln.launch @k0({{.*}}library = #kiln.library_call<"conv"{{.*}}activation = "relu"
// CUDA: kiln.launch @k1(
// CUDA-NOT: library
// CUDA-SAME: num_inputs = 3
// CUDA: kiln.launch @k5(
// CUDA-NOT: library
// CUDA-SAME: num_inputs = 3
// CUDA: kiln.launch @k8({{.*}}activation = "gelu_tanh"
// BAD: unknown activation 'swish' (none, relu, clip, gelu_erf, gelu_tanh)
// f16 (the same model at --precision fp16): the contractions read f16 into f32
// accumulators. oneDNN's engine (the defaults) takes the 7 it took at f32, the first conv rounding
// its f32 input to f16 as it reads it, the last two matmuls widening their f16
// results into f32 outputs; the cuda targets' engine the two whose every operand is f16 that
// it took at f32 (the residual conv, the Gemm).
// RUN: kiln compile %t3.onnx --precision fp16 --no-precision-check --contractions kiln --compile-to plan -o %t4.mlir
// RUN: kiln-opt --kiln-select-library-calls %t4.mlir | FileCheck %s --check-prefix=F16
// RUN: kiln-opt --kiln-select-library-calls="uniform-element-type=true matmul-activations=none,relu,gelu_tanh conv-activations=none,relu symmetric-padding=true" %t4.mlir | FileCheck %s --check-prefix=F16-CUDA
// F16-COUNT-7: library_call
// F16-NOT: library_call
// F16-CUDA: kiln.launch @k0(
// F16-CUDA-NOT: library
// F16-CUDA-SAME: memref<1x8x10x10xf32>
// F16-CUDA: kiln.launch @k2({{.*}}library_call<"conv"
// F16-CUDA: kiln.launch @k4({{.*}}library_call<"matmul"
// F16-CUDA-NOT: library_call
// fallback-kernels=false: a kernel that only library calls launch keeps its
// signature, no body; the others keep theirs.
// RUN: kiln-opt --kiln-select-library-calls=fallback-kernels=false %t3.mlir | FileCheck %s --check-prefix=DECL
// DECL: func.func private @k0(memref<1x8x10x10xf32>
// DECL-NOT: linalg.generic
// DECL: func.func @k3(%arg0
