//===- MockCublasLt.cpp - A cuBLASLt that checks and computes on the CPU --===//
//
// Built as lib/mock-cuda/libcublasLt.so.13 (KILN_CUDA_LIBRARY_PATH points the
// runtime at it): the cuBLASLt subset Kiln calls (CudaLibraries.h). Every
// descriptor is checked against cuBLASLt's documented rules, and a failed check
// returns CUBLAS_STATUS_INVALID_VALUE (or NOT_SUPPORTED) with the reason on stderr:
//   - compute type 32F or 32F_FAST_TF32 with scale type 32F; matrices all 32F, or
//     all 16F with compute 32F (not FAST_TF32, which is for 32F inputs);
//   - a layout's leading dimension at least its rows (column-major), batch count
//     at least 1;
//   - attribute values of the documented size; epilogues DEFAULT, RELU, BIAS,
//     RELU_BIAS, GELU, GELU_BIAS, the bias of the output's type (cublasLt.h) and set
//     when the epilogue reads it;
//   - op(A) m x k, op(B) k x n, C and D m x n, one batch count for all four;
//   - a workspace at least the algorithm's (the heuristic asks for 1 MiB where the
//     preference allows it), which the matmul then scribbles on: a workspace that
//     overlaps live data shows as a wrong answer.
// Memory is host memory (the mock driver's, or cuda-sim's), so it computes
// D = epilogue(alpha op(A) op(B) + beta C + bias) in double (16F operands widened,
// the result rounded once to D's type); GELU is the tanh form.
//
//===----------------------------------------------------------------------===//
#include "MockTrace.h"
#include "kiln/runtime/CudaLibraries.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace kiln::rt::culib;

namespace {

constexpr uint64_t kMagic = 0x4b494c4e4c54; // "KILNLT"
constexpr size_t kAlgoWorkspace = 1 << 20;

int invalid(const std::string &why, int status = CUBLAS_STATUS_INVALID_VALUE) {
  std::fprintf(stderr, "mock cuBLASLt: %s\n", why.c_str());
  return status;
}

} // namespace

// The opaque types CudaLibraries.h declares, defined.
namespace kiln::rt::culib {
struct cublasLtContext {
  uint64_t magic = kMagic;
};
struct cublasLtMatmulDescOpaque {
  int compute, scale;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
  int32_t biasType = -1; // -1: the output's type
};
struct cublasLtMatrixLayoutOpaque {
  int32_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct cublasLtMatmulPreferenceOpaque {
  uint64_t maxWorkspace = 0;
};
} // namespace kiln::rt::culib

namespace {

bool hasBias(uint32_t e) { return e & CUBLASLT_EPILOGUE_BIAS; }

/// Rows and columns of op(layout).
void opShape(const cublasLtMatrixLayoutOpaque *l, int32_t op, uint64_t &rows, uint64_t &cols) {
  rows = op == CUBLAS_OP_N ? l->rows : l->cols;
  cols = op == CUBLAS_OP_N ? l->cols : l->rows;
}

/// The shared checks of heuristic and matmul: shapes and batches agree.
int checkProblem(const cublasLtMatmulDescOpaque *d, const cublasLtMatrixLayoutOpaque *a,
                 const cublasLtMatrixLayoutOpaque *b, const cublasLtMatrixLayoutOpaque *c,
                 const cublasLtMatrixLayoutOpaque *dd) {
  if (!d || !a || !b || !c || !dd)
    return invalid("a null descriptor");
  uint64_t am, ak, bk, bn;
  opShape(a, d->transA, am, ak);
  opShape(b, d->transB, bk, bn);
  if (ak != bk)
    return invalid("op(A) is " + std::to_string(am) + "x" + std::to_string(ak) +
                   " but op(B) is " + std::to_string(bk) + "x" + std::to_string(bn));
  if (dd->rows != am || dd->cols != bn)
    return invalid("D is " + std::to_string(dd->rows) + "x" + std::to_string(dd->cols) +
                   ", the product " + std::to_string(am) + "x" + std::to_string(bn));
  if (c->rows != dd->rows || c->cols != dd->cols)
    return invalid("C and D differ in shape");
  if (a->batch != dd->batch || b->batch != dd->batch || c->batch != dd->batch)
    return invalid("batch counts differ");
  if (a->type != b->type || c->type != dd->type || a->type != c->type)
    return invalid("matrix types " + std::to_string(a->type) + ", " + std::to_string(b->type) +
                       ", " + std::to_string(c->type) + ", " + std::to_string(dd->type) +
                       " (the mock has all 32F or all 16F)",
                   CUBLAS_STATUS_NOT_SUPPORTED);
  if (a->type == CUDA_R_16F && d->compute != CUBLAS_COMPUTE_32F)
    return invalid("16F matrices with compute type " + std::to_string(d->compute) +
                   " (32F_FAST_TF32 is for 32F inputs)");
  if (d->biasType != -1 && d->biasType != dd->type)
    return invalid("bias type " + std::to_string(d->biasType) + " with " +
                   std::to_string(dd->type) + " output");
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

void kiln_mock_cuda_library() {}

const char *cublasLtGetStatusString(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
  if (!h)
    return invalid("cublasLtCreate: null handle pointer");
  *h = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  if (!h || h->magic != kMagic)
    return invalid("cublasLtDestroy: not a handle");
  h->magic = 0;
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32)
    return invalid("compute type " + std::to_string(compute) + " (the mock has 32F only)",
                   CUBLAS_STATUS_NOT_SUPPORTED);
  if (scale != CUDA_R_32F)
    return invalid("scale type " + std::to_string(scale) + " with compute 32F");
  *d = new cublasLtMatmulDescOpaque{compute, scale};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size) {
  if (!d || !buf)
    return invalid("cublasLtMatmulDescSetAttribute: null");
  auto need = [&](size_t n) { return size == n; };
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
  case CUBLASLT_MATMUL_DESC_TRANSB: {
    if (!need(4))
      return invalid("TRANSA/TRANSB take an int32_t");
    int32_t op;
    std::memcpy(&op, buf, 4);
    if (op != CUBLAS_OP_N && op != CUBLAS_OP_T)
      return invalid("transpose op " + std::to_string(op));
    (attr == CUBLASLT_MATMUL_DESC_TRANSA ? d->transA : d->transB) = op;
    return CUBLAS_STATUS_SUCCESS;
  }
  case CUBLASLT_MATMUL_DESC_EPILOGUE: {
    if (!need(4))
      return invalid("EPILOGUE takes a uint32_t");
    uint32_t e;
    std::memcpy(&e, buf, 4);
    for (uint32_t ok : {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_BIAS,
                        CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU,
                        CUBLASLT_EPILOGUE_GELU_BIAS})
      if (e == ok) {
        d->epilogue = e;
        return CUBLAS_STATUS_SUCCESS;
      }
    return invalid("epilogue " + std::to_string(e), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    if (!need(sizeof(void *)))
      return invalid("BIAS_POINTER takes a pointer");
    std::memcpy(&d->bias, buf, sizeof(void *));
    return CUBLAS_STATUS_SUCCESS;
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    if (!need(4))
      return invalid("BIAS_DATA_TYPE takes an int32_t");
    std::memcpy(&d->biasType, buf, 4);
    if (d->biasType != CUDA_R_32F && d->biasType != CUDA_R_16F)
      return invalid("bias type " + std::to_string(d->biasType));
    return CUBLAS_STATUS_SUCCESS;
  default:
    return invalid("matmul attribute " + std::to_string(attr) + " (not in the mock)");
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType_t type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F && type != CUDA_R_16F)
    return invalid("matrix type " + std::to_string(type) + " (the mock has 32F and 16F)",
                   CUBLAS_STATUS_NOT_SUPPORTED);
  if (rows == 0 || cols == 0 || ld < static_cast<int64_t>(rows))
    return invalid("layout " + std::to_string(rows) + "x" + std::to_string(cols) + " with ld " +
                   std::to_string(ld) + " (column-major: ld >= rows)");
  *l = new cublasLtMatrixLayoutOpaque{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size) {
  if (!l || !buf)
    return invalid("cublasLtMatrixLayoutSetAttribute: null");
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) {
    if (size != 4)
      return invalid("BATCH_COUNT takes an int32_t");
    std::memcpy(&l->batch, buf, 4);
    return l->batch >= 1 ? CUBLAS_STATUS_SUCCESS : invalid("batch count < 1");
  }
  if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) {
    if (size != 8)
      return invalid("STRIDED_BATCH_OFFSET takes an int64_t");
    std::memcpy(&l->stride, buf, 8);
    return CUBLAS_STATUS_SUCCESS;
  }
  return invalid("layout attribute " + std::to_string(attr) + " (not in the mock)");
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  *p = new cublasLtMatmulPreferenceOpaque;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size) {
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != 8 || !buf)
    return invalid("preference attribute " + std::to_string(attr) + " of " +
                   std::to_string(size) + " bytes");
  std::memcpy(&p->maxWorkspace, buf, 8);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned) {
  if (!h || h->magic != kMagic || !pref || !results || !returned)
    return invalid("cublasLtMatmulAlgoGetHeuristic: null or stale argument");
  if (requested <= 0)
    return invalid("requestedAlgoCount <= 0");
  if (int r = checkProblem(d, a, b, c, dd))
    return r;
  std::memset(&results[0], 0, sizeof results[0]);
  results[0].algo.data[0] = kMagic;
  results[0].workspaceSize = pref->maxWorkspace >= kAlgoWorkspace ? kAlgoWorkspace : 0;
  results[0].algo.data[1] = results[0].workspaceSize;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t a, const void *B,
                              cublasLtMatrixLayout_t b, const void *beta, const void *C,
                              cublasLtMatrixLayout_t c, void *D, cublasLtMatrixLayout_t dd,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSize, kiln::rt::CUstream) {
  if (!h || h->magic != kMagic)
    return invalid("cublasLtMatmul: not a handle");
  if (int r = checkProblem(d, a, b, c, dd))
    return r;
  if (!alpha || !beta || !A || !B || !C || !D)
    return invalid("cublasLtMatmul: null alpha, beta or matrix");
  size_t bytes = a->type == CUDA_R_16F ? 2 : 4;
  for (const void *p : {A, B, C, static_cast<const void *>(D)})
    if (reinterpret_cast<uintptr_t>(p) % bytes)
      return invalid("a matrix pointer not aligned to its " + std::to_string(bytes) +
                     "-byte elements");
  if (!algo || algo->data[0] != kMagic)
    return invalid("an algorithm not from cublasLtMatmulAlgoGetHeuristic");
  if (workspaceSize < algo->data[1] || (workspaceSize && !workspace))
    return invalid("workspace of " + std::to_string(workspaceSize) + " bytes, the algorithm needs " +
                   std::to_string(algo->data[1]));
  if (hasBias(d->epilogue) && !d->bias)
    return invalid("a BIAS epilogue without BIAS_POINTER");
  mockTrace("cublasLtMatmul m=" + std::to_string(dd->rows) + " n=" + std::to_string(dd->cols) +
        " k=" + std::to_string(d->transA == CUBLAS_OP_N ? a->cols : a->rows) + " batch=" +
        std::to_string(dd->batch) + " epilogue=" + std::to_string(d->epilogue) +
        " compute=" + std::to_string(d->compute) + " workspace=" + std::to_string(workspaceSize));
  // A real algorithm uses its workspace: so does this one.
  if (workspaceSize)
    std::memset(workspace, 0xA5, workspaceSize);
  float al, be;
  std::memcpy(&al, alpha, 4);
  std::memcpy(&be, beta, 4);
  // Elements as double, of the matrices' type (the bias: the output's).
  bool half = a->type == CUDA_R_16F;
  auto load = [half](const void *base, int64_t i) { return mockLoad(base, i, half); };
  uint64_t m, k, n, kk;
  opShape(a, d->transA, m, k);
  opShape(b, d->transB, kk, n);
  uint32_t act = d->epilogue & ~static_cast<uint32_t>(CUBLASLT_EPILOGUE_BIAS);
  for (int32_t batch = 0; batch < dd->batch; ++batch)
    for (uint64_t j = 0; j < n; ++j)
      for (uint64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (uint64_t p = 0; p < k; ++p) {
          double x = d->transA == CUBLAS_OP_N ? load(A, batch * a->stride + i + p * a->ld)
                                              : load(A, batch * a->stride + p + i * a->ld);
          double y = d->transB == CUBLAS_OP_N ? load(B, batch * b->stride + p + j * b->ld)
                                              : load(B, batch * b->stride + j + p * b->ld);
          acc += x * y;
        }
        double v = al * acc;
        if (be != 0)
          v += be * load(C, batch * c->stride + i + j * c->ld);
        if (hasBias(d->epilogue))
          v += load(d->bias, i);
        if (act == CUBLASLT_EPILOGUE_RELU)
          v = v > 0 ? v : 0;
        else if (act == CUBLASLT_EPILOGUE_GELU)
          v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        mockStore(D, batch * dd->stride + i + j * dd->ld, v, half);
      }
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
