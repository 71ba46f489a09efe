//===- MockCudnn.cpp - A cuDNN that checks and computes on the CPU --------===//
//
// Built as lib/mock-cuda/libcudnn.so.9 (KILN_CUDA_LIBRARY_PATH points the runtime
// at it): the legacy convolution subset Kiln calls (CudaLibraries.h). Every
// descriptor is checked against cuDNN's documented rules, a failed check returns
// CUDNN_STATUS_BAD_PARAM (or NOT_SUPPORTED) with the reason on stderr:
//   - 4-d NCHW float or half tensors and filters with positive sizes; padding >= 0,
//     strides and dilations >= 1, group count >= 1 dividing the filter count, the
//     input's channels = the filter's channels x groups;
//   - cudnnConvolutionBiasActivationForward: activation RELU, or IDENTITY only with
//     IMPLICIT_PRECOMP_GEMM; y's dims the convolution's output dims; z like y; the
//     bias 1 x K x 1 x 1; x, w, y, z and the bias all FLOAT, or all HALF (the
//     pseudo-half configuration), the convolution computed in FLOAT; a workspace at
//     least the algorithm's (GEMM asks for its im2col buffer), which the call
//     scribbles on.
// Memory is host memory (the mock driver's, or cuda-sim's): it computes
// y = act(alpha1 conv(x, w) + alpha2 z + bias) in double (half operands widened, y
// rounded once), z read before y is written (they may alias).
//
//===----------------------------------------------------------------------===//
#include "MockTrace.h"
#include "kiln/runtime/CudaLibraries.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace kiln::rt::culib;

namespace {

constexpr uint64_t kMagic = 0x4b494c4e444e4e; // "KILNDNN"

int bad(const std::string &why, int status = CUDNN_STATUS_BAD_PARAM) {
  std::fprintf(stderr, "mock cuDNN: %s\n", why.c_str());
  return status;
}

} // namespace

// The opaque types CudaLibraries.h declares, defined.
namespace kiln::rt::culib {
struct cudnnContext {
  uint64_t magic = kMagic;
};
struct cudnnTensorStruct {
  int n = 0, c = 0, h = 0, w = 0, type = -1;
};
struct cudnnFilterStruct {
  int k = 0, c = 0, h = 0, w = 0, type = -1;
};
struct cudnnConvolutionStruct {
  int padH = -1, padW = -1, strideH = 0, strideW = 0, dilH = 0, dilW = 0;
  int mode = CUDNN_CROSS_CORRELATION, groups = 1, math = CUDNN_DEFAULT_MATH,
      compute = CUDNN_DATA_FLOAT;
};
struct cudnnActivationStruct {
  int mode = -1;
};
} // namespace kiln::rt::culib

namespace {

bool set(const cudnnTensorStruct *t) { return t && t->n > 0; }

/// The output dims of x conv w, or an error.
int outputDims(const cudnnConvolutionStruct *conv, const cudnnTensorStruct *x,
               const cudnnFilterStruct *w, int dims[4]) {
  if (!conv || conv->strideH < 1 || !set(x) || !w || w->k < 1)
    return bad("an unset descriptor");
  if (w->k % conv->groups)
    return bad(std::to_string(w->k) + " filters in " + std::to_string(conv->groups) + " groups");
  if (x->c != w->c * conv->groups)
    return bad("input has " + std::to_string(x->c) + " channels, filters " +
               std::to_string(w->c) + " x " + std::to_string(conv->groups) + " groups");
  int eh = (w->h - 1) * conv->dilH + 1, ew = (w->w - 1) * conv->dilW + 1;
  dims[0] = x->n;
  dims[1] = w->k;
  dims[2] = (x->h + 2 * conv->padH - eh) / conv->strideH + 1;
  dims[3] = (x->w + 2 * conv->padW - ew) / conv->strideW + 1;
  if (dims[2] < 1 || dims[3] < 1)
    return bad("the filter is larger than the padded input");
  return CUDNN_STATUS_SUCCESS;
}

/// The workspace an algorithm needs: GEMM its im2col buffer, the rest none.
size_t workspaceFor(int algo, const cudnnTensorStruct *x, const cudnnFilterStruct *w,
                    const cudnnTensorStruct *y) {
  if (algo != 2) // CUDNN_CONVOLUTION_FWD_ALGO_GEMM
    return 0;
  return sizeof(float) * static_cast<size_t>(x->c) * w->h * w->w * y->h * y->w;
}

} // namespace

extern "C" {

void kiln_mock_cuda_library() {}

const char *cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
  case CUDNN_STATUS_SUCCESS:
    return "CUDNN_STATUS_SUCCESS";
  case CUDNN_STATUS_BAD_PARAM:
    return "CUDNN_STATUS_BAD_PARAM";
  case CUDNN_STATUS_NOT_SUPPORTED:
    return "CUDNN_STATUS_NOT_SUPPORTED";
  default:
    return "CUDNN_STATUS_UNKNOWN";
  }
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) {
  *h = new cudnnContext;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) {
  if (!h || h->magic != kMagic)
    return bad("cudnnDestroy: not a handle");
  h->magic = 0;
  delete h;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, kiln::rt::CUstream) {
  return h && h->magic == kMagic ? CUDNN_STATUS_SUCCESS : bad("cudnnSetStream: not a handle");
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *t) {
  *t = new cudnnTensorStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t t, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w) {
  if (format != CUDNN_TENSOR_NCHW || (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_HALF))
    return bad("tensor format " + std::to_string(format) + " type " + std::to_string(type) +
                   " (the mock has NCHW float and half only)",
               CUDNN_STATUS_NOT_SUPPORTED);
  if (n < 1 || c < 1 || h < 1 || w < 1)
    return bad("tensor dims must be positive");
  *t = {n, c, h, w, type};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t t) {
  delete t;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *f) {
  *f = new cudnnFilterStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t f, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  if (format != CUDNN_TENSOR_NCHW || (type != CUDNN_DATA_FLOAT && type != CUDNN_DATA_HALF))
    return bad("filter format/type (the mock has NCHW float and half only)",
               CUDNN_STATUS_NOT_SUPPORTED);
  if (k < 1 || c < 1 || h < 1 || w < 1)
    return bad("filter dims must be positive");
  *f = {k, c, h, w, type};
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t f) {
  delete f;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *c) {
  *c = new cudnnConvolutionStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t c, int padH, int padW,
                                              int u, int v, int dilH, int dilW,
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  if (padH < 0 || padW < 0 || u < 1 || v < 1 || dilH < 1 || dilW < 1)
    return bad("padding < 0, stride or dilation < 1");
  if (mode != CUDNN_CROSS_CORRELATION && mode != 0)
    return bad("convolution mode " + std::to_string(mode));
  if (compute != CUDNN_DATA_FLOAT)
    return bad("compute type " + std::to_string(compute) + " (the mock has float only)",
               CUDNN_STATUS_NOT_SUPPORTED);
  c->padH = padH;
  c->padW = padW;
  c->strideH = u;
  c->strideW = v;
  c->dilH = dilH;
  c->dilW = dilW;
  c->mode = mode;
  c->compute = compute;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t c, int groups) {
  if (groups < 1)
    return bad("group count < 1");
  c->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t c, cudnnMathType_t math) {
  if (math < 0 || math > 3)
    return bad("math type " + std::to_string(math));
  c->math = math;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t c) {
  delete c;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *a) {
  *a = new cudnnActivationStruct;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t a,
                                           cudnnActivationMode_t mode, cudnnNanPropagation_t,
                                           double) {
  if (mode < 0 || mode > 7)
    return bad("activation mode " + std::to_string(mode));
  a->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t a) {
  delete a;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(cudnnConvolutionDescriptor_t conv,
                                                    cudnnTensorDescriptor_t x,
                                                    cudnnFilterDescriptor_t w, int *n, int *c,
                                                    int *h, int *wd) {
  int dims[4];
  if (int r = outputDims(conv, x, w, dims))
    return r;
  *n = dims[0];
  *c = dims[1];
  *h = dims[2];
  *wd = dims[3];
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                     cudnnFilterDescriptor_t w,
                                                     cudnnConvolutionDescriptor_t conv,
                                                     cudnnTensorDescriptor_t y, int requested,
                                                     int *returned,
                                                     cudnnConvolutionFwdAlgoPerf_t *perf) {
  if (!h || h->magic != kMagic || !returned || !perf || requested < 1)
    return bad("cudnnGetConvolutionForwardAlgorithm_v7: bad argument");
  int dims[4];
  if (int r = outputDims(conv, x, w, dims))
    return r;
  // GEMM first (it needs a workspace), then the implicit GEMMs (none).
  const int algos[] = {2, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0};
  *returned = 0;
  for (int a : algos) {
    if (*returned == requested)
      break;
    cudnnConvolutionFwdAlgoPerf_t &p = perf[(*returned)++];
    std::memset(&p, 0, sizeof p);
    p.algo = a;
    p.status = CUDNN_STATUS_SUCCESS;
    p.memory = workspaceFor(a, x, w, y);
    p.mathType = conv->math;
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                      cudnnFilterDescriptor_t w,
                                                      cudnnConvolutionDescriptor_t conv,
                                                      cudnnTensorDescriptor_t y,
                                                      cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *size) {
  int dims[4];
  if (!h || h->magic != kMagic || !size)
    return bad("cudnnGetConvolutionForwardWorkspaceSize: bad argument");
  if (int r = outputDims(conv, x, w, dims))
    return r;
  if (algo < 0 || algo > 7)
    return bad("algorithm " + std::to_string(algo));
  *size = workspaceFor(algo, x, w, y);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x,
    cudnnFilterDescriptor_t wd, const void *w, cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void *workspace, size_t workspaceSize, const void *alpha2,
    cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t bd, const void *bias,
    cudnnActivationDescriptor_t act, cudnnTensorDescriptor_t yd, void *y) {
  if (!h || h->magic != kMagic)
    return bad("cudnnConvolutionBiasActivationForward: not a handle");
  if (!alpha1 || !alpha2 || !x || !w || !z || !bias || !y || !act)
    return bad("a null pointer or descriptor");
  int dims[4];
  if (int r = outputDims(conv, xd, wd, dims))
    return r;
  if (!set(yd) || yd->n != dims[0] || yd->c != dims[1] || yd->h != dims[2] || yd->w != dims[3])
    return bad("y is not the convolution's output shape");
  if (!set(zd) || zd->n != yd->n || zd->c != yd->c || zd->h != yd->h || zd->w != yd->w)
    return bad("z differs from y");
  if (!set(bd) || bd->n != 1 || bd->c != yd->c || bd->h != 1 || bd->w != 1)
    return bad("the bias is not 1 x K x 1 x 1");
  if (act->mode != CUDNN_ACTIVATION_RELU && act->mode != CUDNN_ACTIVATION_IDENTITY)
    return bad("activation " + std::to_string(act->mode) + " (RELU or IDENTITY only)",
               CUDNN_STATUS_NOT_SUPPORTED);
  // FLOAT_CONFIG or PSEUDO_HALF_CONFIG: one storage type for all, computed in FLOAT.
  int type = xd->type;
  if (wd->type != type || yd->type != type || zd->type != type || bd->type != type ||
      conv->compute != CUDNN_DATA_FLOAT)
    return bad("types x " + std::to_string(xd->type) + ", w " + std::to_string(wd->type) +
                   ", y " + std::to_string(yd->type) + ", z " + std::to_string(zd->type) +
                   ", bias " + std::to_string(bd->type) + ", compute " +
                   std::to_string(conv->compute) +
                   " (FLOAT_CONFIG or PSEUDO_HALF_CONFIG: all FLOAT or all HALF, computed "
                   "in FLOAT)",
               CUDNN_STATUS_NOT_SUPPORTED);
  if (act->mode == CUDNN_ACTIVATION_IDENTITY &&
      algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
    return bad("IDENTITY needs IMPLICIT_PRECOMP_GEMM", CUDNN_STATUS_NOT_SUPPORTED);
  size_t need = workspaceFor(algo, xd, wd, yd);
  if (workspaceSize < need || (need && !workspace))
    return bad("workspace of " + std::to_string(workspaceSize) + " bytes, algorithm " +
               std::to_string(algo) + " needs " + std::to_string(need));
  mockTrace("cudnnConvolutionBiasActivationForward x=" + std::to_string(xd->n) + "x" +
        std::to_string(xd->c) + "x" + std::to_string(xd->h) + "x" + std::to_string(xd->w) +
        " k=" + std::to_string(wd->k) + " groups=" + std::to_string(conv->groups) + " algo=" +
        std::to_string(algo) + " math=" + std::to_string(conv->math) +
        " activation=" + std::to_string(act->mode) +
        " workspace=" + std::to_string(workspaceSize));
  if (workspaceSize)
    std::memset(workspace, 0x5A, workspaceSize);
  float a1, a2;
  std::memcpy(&a1, alpha1, 4);
  std::memcpy(&a2, alpha2, 4);
  bool half = type == CUDNN_DATA_HALF;
  auto load = [half](const void *base, size_t i) { return mockLoad(base, i, half); };
  int groupFilters = wd->k / conv->groups;
  for (int n = 0; n < yd->n; ++n)
    for (int k = 0; k < yd->c; ++k)
      for (int oh = 0; oh < yd->h; ++oh)
        for (int ow = 0; ow < yd->w; ++ow) {
          double acc = 0;
          int g = k / groupFilters;
          for (int c = 0; c < wd->c; ++c)
            for (int r = 0; r < wd->h; ++r)
              for (int s = 0; s < wd->w; ++s) {
                int ih = oh * conv->strideH - conv->padH + r * conv->dilH;
                int iw = ow * conv->strideW - conv->padW + s * conv->dilW;
                if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w)
                  continue;
                // CUDNN_CONVOLUTION flips the filter; cross-correlation does not.
                int fr = conv->mode == 0 ? wd->h - 1 - r : r;
                int fs = conv->mode == 0 ? wd->w - 1 - s : s;
                acc += load(x, ((static_cast<size_t>(n) * xd->c + g * wd->c + c) * xd->h + ih) *
                                       xd->w +
                                   iw) *
                       load(w, ((static_cast<size_t>(k) * wd->c + c) * wd->h + fr) * wd->w + fs);
              }
          size_t at = ((static_cast<size_t>(n) * yd->c + k) * yd->h + oh) * yd->w + ow;
          double v = a1 * acc + load(bias, k);
          if (a2 != 0)
            v += a2 * load(z, at);
          if (act->mode == CUDNN_ACTIVATION_RELU && v < 0)
            v = 0;
          mockStore(y, at, v, half);
        }
  return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
