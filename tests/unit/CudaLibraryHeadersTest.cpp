//===- CudaLibraryHeadersTest.cpp - Kiln's cuBLASLt/cuDNN subset vs the SDK -===//
//
// Built where the toolkit's cublasLt.h and cudnn.h exist. Kiln declares the
// subset of cuBLASLt and cuDNN it calls (CudaLibraries.h) so that nothing CUDA is
// needed to build; this file holds those declarations to the real headers: every
// enum value Kiln uses, the layout of every struct it shares with the library,
// and every entry point's signature parameter by parameter (each pointer a
// pointer, each integer or enum of the same size, each float a float). A
// mismatch fails the build of the runtime's tests.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/CudaLibraries.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <type_traits>

namespace culib = kiln::rt::culib;

namespace {

template <size_t N> struct IntOfSize {};

/// A type as the ABI passes it: pointers alike, integers and enums by size.
template <typename T, typename = void> struct Canon {
  using type = T;
};
template <typename T> struct Canon<T *> {
  using type = void *;
};
template <typename T>
struct Canon<T, std::enable_if_t<std::is_integral_v<T> || std::is_enum_v<T>>> {
  using type = IntOfSize<sizeof(T)>;
};

template <typename F> struct CanonFn;
template <typename R, typename... A> struct CanonFn<R (*)(A...)> {
  using type = typename Canon<R>::type (*)(typename Canon<A>::type...);
};

template <typename Real, typename Ours>
constexpr bool sameAbi = std::is_same_v<typename CanonFn<Real>::type, typename CanonFn<Ours>::type>;

} // namespace

#define KILN_SAME_FN(api, name)                                                            \
  static_assert(sameAbi<decltype(&::name), decltype(culib::api::name)>,                     \
                #name ": Kiln's declaration differs from the SDK's")
#define KILN_SAME_VALUE(name)                                                              \
  static_assert(static_cast<long>(culib::name) == static_cast<long>(::name),                \
                #name ": Kiln's value differs from the SDK's")
#define KILN_SAME_FIELD(ours, theirs, field)                                               \
  static_assert(offsetof(culib::ours, field) == offsetof(::theirs, field),                  \
                #ours "." #field ": offset differs from the SDK's")

// cuBLASLt
KILN_SAME_FN(CublasLtApi, cublasLtCreate);
KILN_SAME_FN(CublasLtApi, cublasLtDestroy);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulDescCreate);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulDescDestroy);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulDescSetAttribute);
KILN_SAME_FN(CublasLtApi, cublasLtMatrixLayoutCreate);
KILN_SAME_FN(CublasLtApi, cublasLtMatrixLayoutDestroy);
KILN_SAME_FN(CublasLtApi, cublasLtMatrixLayoutSetAttribute);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulPreferenceCreate);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulPreferenceDestroy);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulPreferenceSetAttribute);
KILN_SAME_FN(CublasLtApi, cublasLtMatmulAlgoGetHeuristic);
KILN_SAME_FN(CublasLtApi, cublasLtMatmul);
KILN_SAME_FN(CublasLtApi, cublasLtGetStatusString);
KILN_SAME_VALUE(CUBLAS_STATUS_SUCCESS);
KILN_SAME_VALUE(CUBLAS_STATUS_INVALID_VALUE);
KILN_SAME_VALUE(CUBLAS_STATUS_NOT_SUPPORTED);
KILN_SAME_VALUE(CUBLAS_OP_N);
KILN_SAME_VALUE(CUBLAS_OP_T);
KILN_SAME_VALUE(CUBLAS_COMPUTE_32F);
KILN_SAME_VALUE(CUBLAS_COMPUTE_32F_FAST_TF32);
KILN_SAME_VALUE(CUDA_R_32F);
KILN_SAME_VALUE(CUDA_R_16F);
KILN_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSA);
KILN_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSB);
KILN_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE);
KILN_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_POINTER);
KILN_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
KILN_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
KILN_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
KILN_SAME_VALUE(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_DEFAULT);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_RELU);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_BIAS);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_RELU_BIAS);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_GELU);
KILN_SAME_VALUE(CUBLASLT_EPILOGUE_GELU_BIAS);
static_assert(sizeof(culib::cublasLtMatmulAlgo_t) == sizeof(::cublasLtMatmulAlgo_t));
static_assert(sizeof(culib::cublasLtMatmulHeuristicResult_t) ==
              sizeof(::cublasLtMatmulHeuristicResult_t));
KILN_SAME_FIELD(cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, workspaceSize);
KILN_SAME_FIELD(cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, state);
KILN_SAME_FIELD(cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, wavesCount);

// cuDNN (the legacy API is deprecated in cuDNN 9, still exported by libcudnn.so.9).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
KILN_SAME_FN(CudnnApi, cudnnCreate);
KILN_SAME_FN(CudnnApi, cudnnDestroy);
KILN_SAME_FN(CudnnApi, cudnnSetStream);
KILN_SAME_FN(CudnnApi, cudnnGetErrorString);
KILN_SAME_FN(CudnnApi, cudnnCreateTensorDescriptor);
KILN_SAME_FN(CudnnApi, cudnnSetTensor4dDescriptor);
KILN_SAME_FN(CudnnApi, cudnnDestroyTensorDescriptor);
KILN_SAME_FN(CudnnApi, cudnnCreateFilterDescriptor);
KILN_SAME_FN(CudnnApi, cudnnSetFilter4dDescriptor);
KILN_SAME_FN(CudnnApi, cudnnDestroyFilterDescriptor);
KILN_SAME_FN(CudnnApi, cudnnCreateConvolutionDescriptor);
KILN_SAME_FN(CudnnApi, cudnnSetConvolution2dDescriptor);
KILN_SAME_FN(CudnnApi, cudnnSetConvolutionGroupCount);
KILN_SAME_FN(CudnnApi, cudnnSetConvolutionMathType);
KILN_SAME_FN(CudnnApi, cudnnDestroyConvolutionDescriptor);
KILN_SAME_FN(CudnnApi, cudnnCreateActivationDescriptor);
KILN_SAME_FN(CudnnApi, cudnnSetActivationDescriptor);
KILN_SAME_FN(CudnnApi, cudnnDestroyActivationDescriptor);
KILN_SAME_FN(CudnnApi, cudnnGetConvolution2dForwardOutputDim);
KILN_SAME_FN(CudnnApi, cudnnGetConvolutionForwardAlgorithm_v7);
KILN_SAME_FN(CudnnApi, cudnnGetConvolutionForwardWorkspaceSize);
KILN_SAME_FN(CudnnApi, cudnnConvolutionBiasActivationForward);
KILN_SAME_VALUE(CUDNN_STATUS_SUCCESS);
KILN_SAME_VALUE(CUDNN_STATUS_BAD_PARAM);
KILN_SAME_VALUE(CUDNN_STATUS_NOT_SUPPORTED);
KILN_SAME_VALUE(CUDNN_TENSOR_NCHW);
KILN_SAME_VALUE(CUDNN_DATA_FLOAT);
KILN_SAME_VALUE(CUDNN_DATA_HALF);
KILN_SAME_VALUE(CUDNN_CROSS_CORRELATION);
KILN_SAME_VALUE(CUDNN_DEFAULT_MATH);
KILN_SAME_VALUE(CUDNN_TENSOR_OP_MATH);
KILN_SAME_VALUE(CUDNN_FMA_MATH);
KILN_SAME_VALUE(CUDNN_ACTIVATION_RELU);
KILN_SAME_VALUE(CUDNN_ACTIVATION_IDENTITY);
KILN_SAME_VALUE(CUDNN_NOT_PROPAGATE_NAN);
KILN_SAME_VALUE(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
static_assert(sizeof(culib::cudnnConvolutionFwdAlgoPerf_t) ==
              sizeof(::cudnnConvolutionFwdAlgoPerf_t));
KILN_SAME_FIELD(cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, status);
KILN_SAME_FIELD(cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, memory);
KILN_SAME_FIELD(cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, mathType);
#pragma GCC diagnostic pop

TEST_CASE("Kiln's cuBLASLt and cuDNN declarations match the toolkit's headers",
          "[cuda-library]") {
  // The static_asserts above are the check; this records where the headers were.
  INFO("cuDNN " << CUDNN_MAJOR << "." << CUDNN_MINOR << ", cuBLASLt " << CUBLAS_VER_MAJOR);
  CHECK(CUDNN_MAJOR == 9);
  CHECK(CUBLAS_VER_MAJOR >= 12);
}
