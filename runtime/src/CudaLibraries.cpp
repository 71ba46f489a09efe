//===- CudaLibraries.cpp - cuBLASLt and cuDNN, loaded at run time --------===//
//
// This file implements the cuda library calls (CudaLibraries.h): the search and
// dlopen of cuBLASLt and cuDNN, and a context's calls on them.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/CudaLibraries.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln::rt {
using namespace culib;

CudaLibrarySearch CudaLibrarySearch::fromEnvironment() {
  CudaLibrarySearch s;
  if (const char *p = std::getenv("KILN_CUDA_LIBRARY_PATH"))
    s.libraryPath = p;
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *p = std::getenv(var); p && *p)
      s.pythonPrefixes.push_back(p);
  return s;
}

std::vector<std::string> cudaLibraryCandidates(const std::vector<std::string> &files,
                                               const CudaLibrarySearch &search) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= search.libraryPath.size()) {
    size_t end = search.libraryPath.find(':', start);
    if (end == std::string::npos)
      end = search.libraryPath.size();
    if (end > start)
      dirs.push_back(search.libraryPath.substr(start, end - start));
    start = end + 1;
  }
  // A Python environment's NVIDIA wheels: lib/python3.*/site-packages/nvidia/...
  for (const std::string &prefix : search.pythonPrefixes) {
    std::vector<std::string> sitePackages;
    if (DIR *d = opendir((prefix + "/lib").c_str())) {
      while (dirent *e = readdir(d))
        if (std::strncmp(e->d_name, "python3", 7) == 0)
          sitePackages.push_back(prefix + "/lib/" + e->d_name + "/site-packages");
      closedir(d);
    }
    std::sort(sitePackages.begin(), sitePackages.end());
    for (const std::string &sp : sitePackages)
      for (const char *package : {"cublas", "cudnn", "cu13"})
        dirs.push_back(sp + "/nvidia/" + package + "/lib");
  }
  std::vector<std::string> candidates;
  for (const std::string &dir : dirs)
    for (const std::string &file : files)
      candidates.push_back(dir + "/" + file);
  candidates.insert(candidates.end(), files.begin(), files.end());
  return candidates;
}

namespace {

/// Opens the first candidate that loads, is (or is not) a mock as asked, and
/// has every symbol `bind` asks for; `missing` says why none did.
template <typename Api, typename Bind>
bool openLibrary(const char *what, const std::vector<std::string> &files, bool mock,
                 Api &api, std::string &path, std::string &missing, Bind bind) {
  std::vector<std::string> candidates =
      cudaLibraryCandidates(files, CudaLibrarySearch::fromEnvironment());
  std::string notes;
  for (const std::string &candidate : candidates) {
    void *lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      continue;
    bool isMock = dlsym(lib, "kiln_mock_cuda_library") != nullptr;
    if (isMock != mock) {
      notes += std::string(notes.empty() ? "" : "; ") + candidate +
               (isMock ? " is Kiln's mock (pairs only with the mock driver or cuda-sim)"
                       : " is a real library (cuda-sim and the mock driver need Kiln's mock)");
      dlclose(lib);
      continue;
    }
    std::string absent;
    auto sym = [&](auto &slot, const char *name) {
      void *s = dlsym(lib, name);
      if (!s && absent.empty())
        absent = name;
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(s);
    };
    bind(api, sym);
    if (!absent.empty()) {
      notes += std::string(notes.empty() ? "" : "; ") + candidate + " has no " + absent;
      dlclose(lib);
      continue;
    }
    path = candidate;
    return true;
  }
  missing = std::string("no ") + what + " found (tried";
  for (const std::string &f : files)
    missing += " " + f;
  missing += " in $KILN_CUDA_LIBRARY_PATH, a Python environment's nvidia wheels and the "
             "system's library path" +
             (notes.empty() ? std::string(")") : "; " + notes + ")");
  return false;
}

struct LoadedSet {
  CublasLtApi cublasLt{};
  CudnnApi cudnn{};
  CudaLibrarySet set;
};

LoadedSet *loadSet(bool mock) {
  auto *l = new LoadedSet; // lives as long as the process (libraries stay loaded)
  if (openLibrary("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12"}, mock, l->cublasLt,
                  l->set.cublasLtPath, l->set.cublasLtMissing, [](CublasLtApi &a, auto &&sym) {
                    sym(a.cublasLtCreate, "cublasLtCreate");
                    sym(a.cublasLtDestroy, "cublasLtDestroy");
                    sym(a.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate");
                    sym(a.cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy");
                    sym(a.cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
                    sym(a.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
                    sym(a.cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
                    sym(a.cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
                    sym(a.cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
                    sym(a.cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
                    sym(a.cublasLtMatmulPreferenceSetAttribute,
                        "cublasLtMatmulPreferenceSetAttribute");
                    sym(a.cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
                    sym(a.cublasLtMatmul, "cublasLtMatmul");
                    sym(a.cublasLtGetStatusString, "cublasLtGetStatusString");
                  }))
    l->set.cublasLt = &l->cublasLt;
  if (openLibrary("cuDNN", {"libcudnn.so.9"}, mock, l->cudnn, l->set.cudnnPath,
                  l->set.cudnnMissing, [](CudnnApi &a, auto &&sym) {
                    sym(a.cudnnCreate, "cudnnCreate");
                    sym(a.cudnnDestroy, "cudnnDestroy");
                    sym(a.cudnnSetStream, "cudnnSetStream");
                    sym(a.cudnnGetErrorString, "cudnnGetErrorString");
                    sym(a.cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor");
                    sym(a.cudnnSetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
                    sym(a.cudnnDestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
                    sym(a.cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor");
                    sym(a.cudnnSetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
                    sym(a.cudnnDestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
                    sym(a.cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
                    sym(a.cudnnSetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
                    sym(a.cudnnSetConvolutionGroupCount, "cudnnSetConvolutionGroupCount");
                    sym(a.cudnnSetConvolutionMathType, "cudnnSetConvolutionMathType");
                    sym(a.cudnnDestroyConvolutionDescriptor,
                        "cudnnDestroyConvolutionDescriptor");
                    sym(a.cudnnCreateActivationDescriptor, "cudnnCreateActivationDescriptor");
                    sym(a.cudnnSetActivationDescriptor, "cudnnSetActivationDescriptor");
                    sym(a.cudnnDestroyActivationDescriptor, "cudnnDestroyActivationDescriptor");
                    sym(a.cudnnGetConvolution2dForwardOutputDim,
                        "cudnnGetConvolution2dForwardOutputDim");
                    sym(a.cudnnGetConvolutionForwardAlgorithm_v7,
                        "cudnnGetConvolutionForwardAlgorithm_v7");
                    sym(a.cudnnGetConvolutionForwardWorkspaceSize,
                        "cudnnGetConvolutionForwardWorkspaceSize");
                    sym(a.cudnnConvolutionBiasActivationForward,
                        "cudnnConvolutionBiasActivationForward");
                  }))
    l->set.cudnn = &l->cudnn;
  return l;
}

} // namespace

const CudaLibrarySet &loadCudaLibraries(bool mock) {
  static LoadedSet *real = nullptr, *mocks = nullptr;
  static std::once_flag realOnce, mockOnce;
  if (mock) {
    std::call_once(mockOnce, [] { mocks = loadSet(true); });
    return mocks->set;
  }
  std::call_once(realOnce, [] { real = loadSet(false); });
  return real->set;
}

std::string cudaLibrariesStatus(bool mock) {
  const CudaLibrarySet &l = loadCudaLibraries(mock);
  std::string s = l.cublasLt ? "matrix products on cuBLASLt (" + l.cublasLtPath + ")"
                             : "matrix products on Kiln's kernels (" + l.cublasLtMissing + ")";
  s += l.cudnn ? ", convolutions on cuDNN (" + l.cudnnPath + ")"
               : ", convolutions on Kiln's kernels (" + l.cudnnMissing + ")";
  return s;
}

/// One call's descriptors and algorithm, made on its first run.
struct CudaLibraryCalls::Slot {
  const CudaLibrarySet *libs = nullptr;
  bool prepared = false, supported = false;
  // cuBLASLt
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t algoWorkspace = 0;
  uint64_t alignment = 0; // of the pointers the algorithm was chosen for
  // cuDNN
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  cudnnConvolutionFwdAlgo_t convAlgo = 0;
  size_t convWorkspace = 0;

  ~Slot() {
    if (libs && libs->cublasLt) {
      const CublasLtApi &L = *libs->cublasLt;
      if (desc)
        L.cublasLtMatmulDescDestroy(desc);
      for (cublasLtMatrixLayout_t l : {a, b, c, d})
        if (l)
          L.cublasLtMatrixLayoutDestroy(l);
    }
    if (libs && libs->cudnn) {
      const CudnnApi &D = *libs->cudnn;
      for (cudnnTensorDescriptor_t t : {x, y, bias})
        if (t)
          D.cudnnDestroyTensorDescriptor(t);
      if (w)
        D.cudnnDestroyFilterDescriptor(w);
      if (conv)
        D.cudnnDestroyConvolutionDescriptor(conv);
      if (act)
        D.cudnnDestroyActivationDescriptor(act);
    }
  }
};

CudaLibraryCalls::CudaLibraryCalls(int numCalls, bool mock, bool allowTf32)
    : libs_(loadCudaLibraries(mock)), allowTf32_(allowTf32) {
  for (int i = 0; i < numCalls; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->libs = &libs_;
  }
  // Handles now (cudnnCreate allocates on the device: not inside a graph capture).
  if (numCalls && libs_.cublasLt && libs_.cublasLt->cublasLtCreate(&cublasLt_) != 0)
    cublasLt_ = nullptr;
  if (numCalls && libs_.cudnn && libs_.cudnn->cudnnCreate(&cudnn_) != 0)
    cudnn_ = nullptr;
}

CudaLibraryCalls::~CudaLibraryCalls() {
  slots_.clear();
  if (cublasLt_)
    libs_.cublasLt->cublasLtDestroy(cublasLt_);
  if (cudnn_)
    libs_.cudnn->cudnnDestroy(cudnn_);
}

Status CudaLibraryCalls::run(int index, const LibraryCall &call, const CUdeviceptr buffers[5],
                             CUdeviceptr zeros, CUstream stream, CUdeviceptr workspace,
                             uint64_t workspaceBytes, bool &ran) {
  ran = false;
  if (index < 0 || index >= static_cast<int>(slots_.size()))
    return Status::error("library call " + std::to_string(index) + " out of range");
  Slot &slot = *slots_[index];
  Status s = Status::ok();
  // f32, or f16 throughout (f16 storage, f32 compute); the kernel runs the rest
  // (kiln-select-library-calls gives cuda no other).
  if (call.inputType != call.dtype || call.outputType != call.dtype)
    ;
  else if (call.kind == LibraryCall::MatMul && cublasLt_)
    s = runMatmul(slot, call, buffers, stream, workspace, workspaceBytes, ran);
  else if (call.kind == LibraryCall::Conv && cudnn_)
    s = runConv(slot, call, buffers, zeros, stream, workspace, workspaceBytes, ran);
  ++(ran ? libraryRuns_ : fallbackRuns_);
  return s;
}

namespace {

uint64_t alignmentOf(const CUdeviceptr *p, int n) {
  uint64_t bits = 0;
  for (int i = 0; i < n; ++i)
    bits = bits << 4 | (p[i] & 15);
  return bits;
}

} // namespace

Status CudaLibraryCalls::runMatmul(Slot &slot, const LibraryCall &call, const CUdeviceptr b[5],
                                   CUstream stream, CUdeviceptr workspace,
                                   uint64_t workspaceBytes, bool &ran) {
  const CublasLtApi &L = *libs_.cublasLt;
  const int64_t *s = call.shape;
  int64_t batch = s[0], M = s[1], N = s[2], K = s[3];
  bool transA = s[4], transB = s[5], batchedA = s[6], batchedB = s[7];
  auto fail = [&](cublasStatus_t r, const char *what) {
    return Status::error(std::string("cuBLASLt ") + what + ": " + L.cublasLtGetStatusString(r) +
                             " (status " + std::to_string(r) + ")",
                         KILN_ERROR_DEVICE);
  };
#define KILN_LT(call, what)                                                                \
  do {                                                                                     \
    cublasStatus_t r_ = (call);                                                            \
    if (r_ == CUBLAS_STATUS_NOT_SUPPORTED)                                                 \
      return Status::ok();                                                                 \
    if (r_ != CUBLAS_STATUS_SUCCESS)                                                       \
      return fail(r_, what);                                                               \
  } while (0)
  // Row-major out[M, N] = A[M, K] B[K, N] is column-major out^T[N, M] = B^T A^T:
  // cuBLASLt's A is Kiln's B and its B is Kiln's A; the bias runs along its rows (N).
  if (!slot.prepared) {
    slot.prepared = true;
    if (call.activation != LibraryCall::None && call.activation != LibraryCall::Relu &&
        call.activation != LibraryCall::GeluTanh)
      return Status::ok();
    // f32 in f32 (TF32 only if allowed); f16 computes in f32 too, on tensor cores.
    bool half = call.dtype == LibraryCall::F16;
    int32_t type = half ? CUDA_R_16F : CUDA_R_32F;
    KILN_LT(L.cublasLtMatmulDescCreate(&slot.desc,
                                       allowTf32_ && !half ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                           : CUBLAS_COMPUTE_32F,
                                       CUDA_R_32F),
            "cublasLtMatmulDescCreate");
    int32_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    uint32_t epilogue = call.activation == LibraryCall::Relu       ? CUBLASLT_EPILOGUE_RELU
                        : call.activation == LibraryCall::GeluTanh ? CUBLASLT_EPILOGUE_GELU
                                                                   : CUBLASLT_EPILOGUE_DEFAULT;
    if (call.hasBias)
      epilogue = epilogue == CUBLASLT_EPILOGUE_DEFAULT ? CUBLASLT_EPILOGUE_BIAS
                                                      : epilogue | CUBLASLT_EPILOGUE_BIAS;
    int32_t biasType = type; // the output's (cublasLt.h)
    KILN_LT(L.cublasLtMatmulDescSetAttribute(slot.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA,
                                             sizeof opA),
            "setting TRANSA");
    KILN_LT(L.cublasLtMatmulDescSetAttribute(slot.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB,
                                             sizeof opB),
            "setting TRANSB");
    KILN_LT(L.cublasLtMatmulDescSetAttribute(slot.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                             &epilogue, sizeof epilogue),
            "setting the epilogue");
    if (call.hasBias)
      KILN_LT(L.cublasLtMatmulDescSetAttribute(slot.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                               &biasType, sizeof biasType),
              "setting the bias type");
    // Stored row-major, seen column-major: [rows, cols] row-major is cols x rows.
    auto layout = [&](cublasLtMatrixLayout_t &l, int64_t rows, int64_t cols, int64_t stride) {
      cublasStatus_t r = L.cublasLtMatrixLayoutCreate(&l, type, cols, rows, cols);
      int32_t count = static_cast<int32_t>(batch);
      if (r == CUBLAS_STATUS_SUCCESS && batch > 1)
        r = L.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                               sizeof count);
      if (r == CUBLAS_STATUS_SUCCESS && batch > 1)
        r = L.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &stride, sizeof stride);
      return r;
    };
    // Kiln's B: [K, N] (or [N, K] transposed); Kiln's A: [M, K] (or [K, M]).
    KILN_LT(layout(slot.a, transB ? N : K, transB ? K : N, batchedB ? K * N : 0),
            "describing B");
    KILN_LT(layout(slot.b, transA ? K : M, transA ? M : K, batchedA ? M * K : 0),
            "describing A");
    KILN_LT(layout(slot.c, M, N, M * N), "describing the residual");
    KILN_LT(layout(slot.d, M, N, M * N), "describing the output");
    slot.supported = true;
  }
  if (!slot.supported)
    return Status::ok();
  if (call.hasBias) {
    const void *bias = reinterpret_cast<const void *>(b[2]);
    KILN_LT(L.cublasLtMatmulDescSetAttribute(slot.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                             &bias, sizeof bias),
            "setting the bias");
  }
  // The algorithm, for these pointers' alignment and this workspace (once).
  uint64_t alignment = alignmentOf(b, 5) << 1 | 1;
  if (alignment != slot.alignment) {
    cublasLtMatmulPreference_t pref = nullptr;
    KILN_LT(L.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    uint64_t limit = workspaceBytes;
    cublasStatus_t r = L.cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (r == CUBLAS_STATUS_SUCCESS)
      r = L.cublasLtMatmulAlgoGetHeuristic(cublasLt_, slot.desc, slot.a, slot.b, slot.c, slot.d,
                                           pref, 1, &result, &found);
    L.cublasLtMatmulPreferenceDestroy(pref);
    KILN_LT(r, "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS ||
        result.workspaceSize > workspaceBytes) {
      slot.supported = false;
      return Status::ok();
    }
    slot.algo = result.algo;
    slot.algoWorkspace = result.workspaceSize;
    slot.alignment = alignment;
  }
  float alpha = call.scale, beta = call.hasResidual ? 1.0f : 0.0f;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  KILN_LT(L.cublasLtMatmul(cublasLt_, slot.desc, &alpha, ptr(b[1]), slot.a, ptr(b[0]), slot.b,
                           &beta, ptr(call.hasResidual ? b[3] : b[4]), slot.c, ptr(b[4]), slot.d,
                           &slot.algo, ptr(workspace), slot.algoWorkspace, stream),
          "cublasLtMatmul");
#undef KILN_LT
  ran = true;
  return Status::ok();
}

Status CudaLibraryCalls::runConv(Slot &slot, const LibraryCall &call, const CUdeviceptr b[5],
                                 CUdeviceptr zeros, CUstream stream, CUdeviceptr workspace,
                                 uint64_t workspaceBytes, bool &ran) {
  const CudnnApi &D = *libs_.cudnn;
  auto fail = [&](cudnnStatus_t r, const char *what) {
    return Status::error(std::string("cuDNN ") + what + ": " + D.cudnnGetErrorString(r) +
                             " (status " + std::to_string(r) + ")",
                         KILN_ERROR_DEVICE);
  };
#define KILN_DNN(call, what)                                                               \
  do {                                                                                     \
    cudnnStatus_t r_ = (call);                                                             \
    if (r_ == CUDNN_STATUS_NOT_SUPPORTED)                                                  \
      return Status::ok();                                                                 \
    if (r_ != CUDNN_STATUS_SUCCESS)                                                        \
      return fail(r_, what);                                                               \
  } while (0)
  const int64_t *s = call.shape;
  int n = s[0], c = s[1], h = s[2], w = s[3], f = s[4], kh = s[5], kw = s[6], oh = s[7],
      ow = s[8], groups = s[9];
  if (!slot.prepared) {
    slot.prepared = true;
    // cuDNN pads both sides alike: the bottom and right may pad less (windows never
    // reach it), never more; Relu is its only fused activation besides none.
    if (s[16] > s[14] || s[17] > s[15] ||
        (call.activation != LibraryCall::None && call.activation != LibraryCall::Relu))
      return Status::ok();
    KILN_DNN(D.cudnnCreateTensorDescriptor(&slot.x), "cudnnCreateTensorDescriptor");
    KILN_DNN(D.cudnnCreateTensorDescriptor(&slot.y), "cudnnCreateTensorDescriptor");
    KILN_DNN(D.cudnnCreateTensorDescriptor(&slot.bias), "cudnnCreateTensorDescriptor");
    KILN_DNN(D.cudnnCreateFilterDescriptor(&slot.w), "cudnnCreateFilterDescriptor");
    KILN_DNN(D.cudnnCreateConvolutionDescriptor(&slot.conv), "cudnnCreateConvolutionDescriptor");
    KILN_DNN(D.cudnnCreateActivationDescriptor(&slot.act), "cudnnCreateActivationDescriptor");
    // f16: cuDNN's pseudo-half configuration (every tensor and the bias f16, the
    // convolution computed in f32).
    bool half = call.dtype == LibraryCall::F16;
    int type = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    KILN_DNN(D.cudnnSetTensor4dDescriptor(slot.x, CUDNN_TENSOR_NCHW, type, n, c, h, w),
             "describing the input");
    KILN_DNN(D.cudnnSetTensor4dDescriptor(slot.y, CUDNN_TENSOR_NCHW, type, n, f, oh, ow),
             "describing the output");
    KILN_DNN(D.cudnnSetTensor4dDescriptor(slot.bias, CUDNN_TENSOR_NCHW, type, 1, f, 1, 1),
             "describing the bias");
    KILN_DNN(D.cudnnSetFilter4dDescriptor(slot.w, type, CUDNN_TENSOR_NCHW, f, c / groups, kh,
                                          kw),
             "describing the weights");
    KILN_DNN(D.cudnnSetConvolution2dDescriptor(slot.conv, s[14], s[15], s[10], s[11], s[12],
                                               s[13], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "describing the convolution");
    KILN_DNN(D.cudnnSetConvolutionGroupCount(slot.conv, groups), "setting the groups");
    // f32 stays f32 (no TF32 tensor-core math) unless --allow-tf32; f16 on tensor
    // cores.
    KILN_DNN(D.cudnnSetConvolutionMathType(slot.conv, half         ? CUDNN_TENSOR_OP_MATH
                                                      : allowTf32_ ? CUDNN_DEFAULT_MATH
                                                                   : CUDNN_FMA_MATH),
             "setting the math type");
    bool relu = call.activation == LibraryCall::Relu;
    KILN_DNN(D.cudnnSetActivationDescriptor(slot.act,
                                            relu ? CUDNN_ACTIVATION_RELU
                                                 : CUDNN_ACTIVATION_IDENTITY,
                                            CUDNN_NOT_PROPAGATE_NAN, 0.0),
             "describing the activation");
    int dims[4];
    KILN_DNN(D.cudnnGetConvolution2dForwardOutputDim(slot.conv, slot.x, slot.w, &dims[0],
                                                     &dims[1], &dims[2], &dims[3]),
             "cudnnGetConvolution2dForwardOutputDim");
    if (dims[0] != n || dims[1] != f || dims[2] != oh || dims[3] != ow)
      return Status::ok();
    // The fastest algorithm the workspace allows; identity (no Relu) runs only on
    // IMPLICIT_PRECOMP_GEMM.
    bool found = false;
    if (relu) {
      cudnnConvolutionFwdAlgoPerf_t perf[8];
      int count = 0;
      KILN_DNN(D.cudnnGetConvolutionForwardAlgorithm_v7(cudnn_, slot.x, slot.w, slot.conv,
                                                        slot.y, 8, &count, perf),
               "cudnnGetConvolutionForwardAlgorithm_v7");
      for (int i = 0; i < count && !found; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspaceBytes) {
          slot.convAlgo = perf[i].algo;
          found = true;
        }
    } else {
      slot.convAlgo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      found = true;
    }
    if (!found)
      return Status::ok();
    KILN_DNN(D.cudnnGetConvolutionForwardWorkspaceSize(cudnn_, slot.x, slot.w, slot.conv, slot.y,
                                                       slot.convAlgo, &slot.convWorkspace),
             "cudnnGetConvolutionForwardWorkspaceSize");
    if (slot.convWorkspace > workspaceBytes)
      return Status::ok();
    slot.supported = true;
  }
  if (!slot.supported)
    return Status::ok();
  KILN_DNN(D.cudnnSetStream(cudnn_, stream), "cudnnSetStream");
  float alpha1 = call.scale, alpha2 = call.hasResidual ? 1.0f : 0.0f;
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  KILN_DNN(D.cudnnConvolutionBiasActivationForward(
               cudnn_, &alpha1, slot.x, ptr(b[0]), slot.w, ptr(b[1]), slot.conv, slot.convAlgo,
               ptr(workspace), slot.convWorkspace, &alpha2, slot.y,
               ptr(call.hasResidual ? b[3] : b[4]), slot.bias, ptr(call.hasBias ? b[2] : zeros),
               slot.act, slot.y, ptr(b[4])),
           "cudnnConvolutionBiasActivationForward");
#undef KILN_DNN
  ran = true;
  return Status::ok();
}

Status SimCudaLibrary::run(int index, const LibraryCall &call, const LibraryBuffers &buffers,
                           bool &ran) {
  std::lock_guard<std::mutex> lock(mutex_);
  constexpr uint64_t kWorkspace = 4 << 20;
  if (workspace_.empty())
    workspace_.resize(kWorkspace + 256);
  if (call.kind == LibraryCall::Conv && zeros_.size() < static_cast<size_t>(call.shape[4]))
    zeros_.assign(call.shape[4], 0.0f);
  auto dev = [](const void *p) { return reinterpret_cast<CUdeviceptr>(p); };
  CUdeviceptr b[5] = {dev(buffers.input), dev(buffers.weights), dev(buffers.bias),
                      dev(buffers.residual), dev(buffers.output)};
  CUdeviceptr ws = (dev(workspace_.data()) + 255) & ~CUdeviceptr(255);
  return calls_.run(index, call, b, dev(zeros_.data()), nullptr, ws, kWorkspace, ran);
}

} // namespace kiln::rt
