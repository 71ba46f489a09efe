//===- CudaLibraries.h - cuBLASLt and cuDNN, loaded at run time -*- C++ -*-===//
//
// The cuda target runs a plan's library calls (LibraryCall.h) on NVIDIA's
// libraries: matrix products on cuBLASLt (epilogue bias, Relu or GELU, residual as
// beta * C), convolutions on cuDNN (convolution-bias-activation: bias, residual as
// alpha2 * z, Relu). Like the driver they are loaded with dlopen, so nothing CUDA
// is needed to build: the subset Kiln calls is declared below (names as in
// cublasLt.h and cudnn.h; tests/unit/CudaLibraryHeadersTest.cpp checks them against
// the toolkit's headers where those exist).
//
// Search order, per library (cudaLibraryCandidates): each directory of
// $KILN_CUDA_LIBRARY_PATH; a Python environment's wheels ($VIRTUAL_ENV, then
// $CONDA_PREFIX: lib/python3*/site-packages/nvidia/{cublas,cudnn,cu13}/lib); then
// the system's (the bare file name, through ld.so). cuBLASLt: libcublasLt.so.13,
// then .so.12; cuDNN: libcudnn.so.9.
//
// A library Kiln's tests build (tests/unit/MockCublasLt.cpp, MockCudnn.cpp) exports
// kiln_mock_cuda_library: it validates every descriptor and computes on the CPU. A
// mock pairs only with the mock driver, or with cuda-sim (host pointers); a real
// library only with the real driver. Where a library is missing, a context runs
// those calls on Kiln's own kernels (every artifact has both) and
// cudaLibrariesStatus() says why.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_CUDALIBRARIES_H
#define KILN_RUNTIME_CUDALIBRARIES_H

#include "kiln/runtime/CudaRuntime.h"
#include "kiln/runtime/LibraryCall.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {
namespace culib {

// cuBLASLt (cublasLt.h, cublas_api.h, library_types.h).
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext *;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque *;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque *;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque *;
using cublasComputeType_t = int;
using cudaDataType_t = int;
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatrixLayoutAttribute_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
enum : int {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36,
};

/// The cuBLASLt entry points Kiln calls.
struct CublasLtApi {
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t *);
  cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t);
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                                             cudaDataType_t);
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t,
                                                   cublasLtMatmulDescAttributes_t,
                                                   const void *, size_t);
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *, cudaDataType_t,
                                               uint64_t, uint64_t, int64_t);
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t,
                                                     cublasLtMatrixLayoutAttribute_t,
                                                     const void *, size_t);
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t,
                                                         cublasLtMatmulPreferenceAttributes_t,
                                                         const void *, size_t);
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
      cublasLtMatmulHeuristicResult_t[], int *);
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                   const void *, cublasLtMatrixLayout_t, const void *,
                                   cublasLtMatrixLayout_t, const void *, const void *,
                                   cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                   const cublasLtMatmulAlgo_t *, void *, size_t, CUstream);
  const char *(*cublasLtGetStatusString)(cublasStatus_t);
};

// cuDNN 9's legacy convolution API (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h).
using cudnnStatus_t = int;
using cudnnHandle_t = struct cudnnContext *;
using cudnnTensorDescriptor_t = struct cudnnTensorStruct *;
using cudnnFilterDescriptor_t = struct cudnnFilterStruct *;
using cudnnConvolutionDescriptor_t = struct cudnnConvolutionStruct *;
using cudnnActivationDescriptor_t = struct cudnnActivationStruct *;
using cudnnTensorFormat_t = int;
using cudnnDataType_t = int;
using cudnnConvolutionMode_t = int;
using cudnnMathType_t = int;
using cudnnActivationMode_t = int;
using cudnnNanPropagation_t = int;
using cudnnConvolutionFwdAlgo_t = int;
using cudnnDeterminism_t = int;
struct cudnnConvolutionFwdAlgoPerf_t {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  cudnnDeterminism_t determinism;
  cudnnMathType_t mathType;
  int reserved[3];
};
enum : int {
  CUDNN_STATUS_SUCCESS = 0,
  CUDNN_STATUS_BAD_PARAM = 2000,
  CUDNN_STATUS_NOT_SUPPORTED = 3000,
  CUDNN_TENSOR_NCHW = 0,
  CUDNN_DATA_FLOAT = 0,
  CUDNN_DATA_HALF = 2,
  CUDNN_CROSS_CORRELATION = 1,
  CUDNN_DEFAULT_MATH = 0,
  CUDNN_TENSOR_OP_MATH = 1,
  CUDNN_FMA_MATH = 3,
  CUDNN_ACTIVATION_RELU = 1,
  CUDNN_ACTIVATION_IDENTITY = 5,
  CUDNN_NOT_PROPAGATE_NAN = 0,
  CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1,
};

/// The cuDNN entry points Kiln calls.
struct CudnnApi {
  cudnnStatus_t (*cudnnCreate)(cudnnHandle_t *);
  cudnnStatus_t (*cudnnDestroy)(cudnnHandle_t);
  cudnnStatus_t (*cudnnSetStream)(cudnnHandle_t, CUstream);
  const char *(*cudnnGetErrorString)(cudnnStatus_t);
  cudnnStatus_t (*cudnnCreateTensorDescriptor)(cudnnTensorDescriptor_t *);
  cudnnStatus_t (*cudnnSetTensor4dDescriptor)(cudnnTensorDescriptor_t, cudnnTensorFormat_t,
                                              cudnnDataType_t, int, int, int, int);
  cudnnStatus_t (*cudnnDestroyTensorDescriptor)(cudnnTensorDescriptor_t);
  cudnnStatus_t (*cudnnCreateFilterDescriptor)(cudnnFilterDescriptor_t *);
  cudnnStatus_t (*cudnnSetFilter4dDescriptor)(cudnnFilterDescriptor_t, cudnnDataType_t,
                                              cudnnTensorFormat_t, int, int, int, int);
  cudnnStatus_t (*cudnnDestroyFilterDescriptor)(cudnnFilterDescriptor_t);
  cudnnStatus_t (*cudnnCreateConvolutionDescriptor)(cudnnConvolutionDescriptor_t *);
  cudnnStatus_t (*cudnnSetConvolution2dDescriptor)(cudnnConvolutionDescriptor_t, int, int,
                                                   int, int, int, int,
                                                   cudnnConvolutionMode_t, cudnnDataType_t);
  cudnnStatus_t (*cudnnSetConvolutionGroupCount)(cudnnConvolutionDescriptor_t, int);
  cudnnStatus_t (*cudnnSetConvolutionMathType)(cudnnConvolutionDescriptor_t, cudnnMathType_t);
  cudnnStatus_t (*cudnnDestroyConvolutionDescriptor)(cudnnConvolutionDescriptor_t);
  cudnnStatus_t (*cudnnCreateActivationDescriptor)(cudnnActivationDescriptor_t *);
  cudnnStatus_t (*cudnnSetActivationDescriptor)(cudnnActivationDescriptor_t,
                                                cudnnActivationMode_t, cudnnNanPropagation_t,
                                                double);
  cudnnStatus_t (*cudnnDestroyActivationDescriptor)(cudnnActivationDescriptor_t);
  cudnnStatus_t (*cudnnGetConvolution2dForwardOutputDim)(cudnnConvolutionDescriptor_t,
                                                         cudnnTensorDescriptor_t,
                                                         cudnnFilterDescriptor_t, int *, int *,
                                                         int *, int *);
  cudnnStatus_t (*cudnnGetConvolutionForwardAlgorithm_v7)(
      cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int *,
      cudnnConvolutionFwdAlgoPerf_t *);
  cudnnStatus_t (*cudnnGetConvolutionForwardWorkspaceSize)(
      cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
      cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgo_t,
      size_t *);
  cudnnStatus_t (*cudnnConvolutionBiasActivationForward)(
      cudnnHandle_t, const void *, cudnnTensorDescriptor_t, const void *,
      cudnnFilterDescriptor_t, const void *, cudnnConvolutionDescriptor_t,
      cudnnConvolutionFwdAlgo_t, void *, size_t, const void *, cudnnTensorDescriptor_t,
      const void *, cudnnTensorDescriptor_t, const void *, cudnnActivationDescriptor_t,
      cudnnTensorDescriptor_t, void *);
};

} // namespace culib

/// Where a library is looked for (see the top of this file).
struct CudaLibrarySearch {
  std::string libraryPath; // $KILN_CUDA_LIBRARY_PATH, ':'-separated
  std::vector<std::string> pythonPrefixes; // $VIRTUAL_ENV, $CONDA_PREFIX
  /// The process's environment.
  static CudaLibrarySearch fromEnvironment();
};

/// The paths to try, in order, for a library whose files are `files` (newest
/// first): every directory's files, then the bare names.
std::vector<std::string> cudaLibraryCandidates(const std::vector<std::string> &files,
                                               const CudaLibrarySearch &search);

/// cuBLASLt and cuDNN as loaded once per process for real devices (`mock` false:
/// the real driver) or for the mock driver and cuda-sim (`mock` true).
struct CudaLibrarySet {
  const culib::CublasLtApi *cublasLt = nullptr;
  const culib::CudnnApi *cudnn = nullptr;
  std::string cublasLtPath, cudnnPath;          // the files loaded
  std::string cublasLtMissing, cudnnMissing;    // why not, where not
};
const CudaLibrarySet &loadCudaLibraries(bool mock);

/// One line for a user: where cuda library calls run ("cuBLASLt (path), cuDNN
/// (path)", or which library is missing and why).
std::string cudaLibrariesStatus(bool mock);

/// A context's library calls on cuBLASLt and cuDNN. Handles are created with the
/// context; each call's descriptors and algorithm on its first run (heuristics,
/// no GPU work: capturable into a CUDA graph) and kept. `Device` pointers are the
/// device's, or host pointers for cuda-sim.
class CudaLibraryCalls {
public:
  /// `mock`: use the mock libraries (the mock driver, cuda-sim). `allowTf32`: f32
  /// calls may compute in TF32 (cuBLASLt COMPUTE_32F_FAST_TF32, cuDNN default math).
  CudaLibraryCalls(int numCalls, bool mock, bool allowTf32 = false);
  ~CudaLibraryCalls();
  CudaLibraryCalls(const CudaLibraryCalls &) = delete;
  CudaLibraryCalls &operator=(const CudaLibraryCalls &) = delete;

  /// Runs call `index` on `stream` with `workspace` (`workspaceBytes` of it), its
  /// buffers input, weights, bias, residual, output (0 where absent) and `zeros`
  /// (at least as many zero floats as any bias-less convolution has channels).
  /// `ran` is false when the library cannot run it: the caller runs its kernels.
  Status run(int index, const LibraryCall &call, const CUdeviceptr buffers[5],
             CUdeviceptr zeros, CUstream stream, CUdeviceptr workspace,
             uint64_t workspaceBytes, bool &ran);

  /// How many calls ran on a library and how many fell back, since creation.
  int64_t libraryRuns() const { return libraryRuns_; }
  int64_t fallbackRuns() const { return fallbackRuns_; }

private:
  struct Slot;
  Status runMatmul(Slot &slot, const LibraryCall &call, const CUdeviceptr b[5],
                   CUstream stream, CUdeviceptr workspace, uint64_t workspaceBytes,
                   bool &ran);
  Status runConv(Slot &slot, const LibraryCall &call, const CUdeviceptr b[5],
                 CUdeviceptr zeros, CUstream stream, CUdeviceptr workspace,
                 uint64_t workspaceBytes, bool &ran);

  const CudaLibrarySet &libs_;
  bool allowTf32_;
  culib::cublasLtHandle_t cublasLt_ = nullptr;
  culib::cudnnHandle_t cudnn_ = nullptr;
  std::vector<std::unique_ptr<Slot>> slots_;
  int64_t libraryRuns_ = 0, fallbackRuns_ = 0;
};

/// cuda-sim's library calls: CudaLibraryCalls on the mock libraries with host
/// memory (a workspace and zeros of its own), the interface of HostLibrary.
class SimCudaLibrary {
public:
  explicit SimCudaLibrary(int numCalls) : calls_(numCalls, /*mock=*/true) {}
  Status run(int index, const LibraryCall &call, const LibraryBuffers &buffers, bool &ran);

private:
  std::mutex mutex_; // plan streams are threads here; the mock runs one call at once
  CudaLibraryCalls calls_;
  std::vector<char> workspace_;
  std::vector<float> zeros_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_CUDALIBRARIES_H
