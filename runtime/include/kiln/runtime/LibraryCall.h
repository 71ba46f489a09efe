//===- LibraryCall.h - A contraction a library runs ------------*- C++ -*-===//
//
// What a plan's library call (#kiln.library_call) computes, as the generated code
// hands it to a target's library: a convolution or matrix product with its scale,
// bias, residual and activation. The host runs it on oneDNN (HostLibrary.h), cuda
// and cuda-sim on cuDNN and cuBLASLt (CudaLibraries.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_LIBRARYCALL_H
#define KILN_RUNTIME_LIBRARYCALL_H

#include <cstdint>

namespace kiln::rt {

/// One library call as the plan describes it (#kiln.library_call).
struct LibraryCall {
  enum Kind : int32_t { Conv, MatMul };
  enum Activation : int32_t { None, Relu, Clip, GeluErf, GeluTanh };
  /// Element types. An F16 call accumulates and runs its epilogue in f32.
  enum DataType : int32_t { F32, F16 };
  Kind kind;
  /// conv: N, C, H, W, F, KH, KW, OH, OW, groups, stride h, w, dilation h, w,
  /// pad top, left, bottom, right; matmul: batch, M, N, K, transpose A,
  /// transpose B, A batched, B batched.
  const int64_t *shape;
  Activation activation;
  float alpha, beta; // Clip's bounds
  float scale;       // of the accumulator, before the rest (1: none)
  bool hasBias, hasResidual;
  /// The weights are the model's (constant while it lives): reordered once into
  /// the library's preferred layout.
  bool constantWeights;
  /// The weights', bias's and residual's type: the call's. An F16 call's input
  /// and output may be F32 (a model input or output kept f32): the input is
  /// rounded to f16 as it is read, the f16 result written widened.
  DataType dtype, inputType, outputType;
};

/// One call's buffers (bias and residual null when the call has none).
struct LibraryBuffers {
  const void *input, *weights, *bias, *residual;
  void *output;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_LIBRARYCALL_H
