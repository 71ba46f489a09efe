//===- CudaLibrariesTest.cpp - cuBLASLt/cuDNN search, calls and fallback --===//
#include "kiln/runtime/CudaLibraries.h"
#include "kiln/runtime/Half.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

using namespace kiln::rt;

namespace {

/// The mock libraries are the ones found (unless a test's environment says not).
void useMockLibraries() { setenv("KILN_CUDA_LIBRARY_PATH", KILN_MOCK_CUDA_LIBRARIES, 0); }

/// out[b][m][n] = sum_k A[b][m][k] B[b][k][n] (A, B row-major, maybe transposed).
std::vector<float> referenceMatmul(const std::vector<float> &a, const std::vector<float> &b,
                                   int batch, int M, int N, int K, bool transA, bool transB,
                                   bool batchedB) {
  std::vector<float> out(static_cast<size_t>(batch) * M * N);
  for (int p = 0; p < batch; ++p)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int k = 0; k < K; ++k) {
          float x = transA ? a[p * M * K + k * M + i] : a[p * M * K + i * K + k];
          size_t bo = batchedB ? static_cast<size_t>(p) * K * N : 0;
          float y = transB ? b[bo + j * K + k] : b[bo + k * N + j];
          acc += static_cast<double>(x) * y;
        }
        out[(p * M + i) * N + j] = static_cast<float>(acc);
      }
  return out;
}

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(static_cast<float>(i) * 0.37f) * scale;
  return v;
}

} // namespace

TEST_CASE("cuda libraries are searched in the documented order", "[cuda-library]") {
  namespace fs = std::filesystem;
  fs::path venv = fs::temp_directory_path() / "kiln-venv-test";
  fs::create_directories(venv / "lib/python3.11/site-packages");
  CudaLibrarySearch search;
  search.libraryPath = "/a::/b";
  search.pythonPrefixes = {venv.string()};
  std::vector<std::string> c =
      cudaLibraryCandidates({"libcublasLt.so.13", "libcublasLt.so.12"}, search);
  std::string sp = (venv / "lib/python3.11/site-packages/nvidia").string();
  std::vector<std::string> expected = {
      "/a/libcublasLt.so.13", "/a/libcublasLt.so.12", "/b/libcublasLt.so.13",
      "/b/libcublasLt.so.12", sp + "/cublas/lib/libcublasLt.so.13",
      sp + "/cublas/lib/libcublasLt.so.12", sp + "/cudnn/lib/libcublasLt.so.13",
      sp + "/cudnn/lib/libcublasLt.so.12", sp + "/cu13/lib/libcublasLt.so.13",
      sp + "/cu13/lib/libcublasLt.so.12", "libcublasLt.so.13", "libcublasLt.so.12"};
  CHECK(c == expected);
  fs::remove_all(venv);
  // Nothing set: only the system's search.
  CHECK(cudaLibraryCandidates({"libcudnn.so.9"}, CudaLibrarySearch{}) ==
        std::vector<std::string>{"libcudnn.so.9"});
}

TEST_CASE("mock libraries pair with the mock only", "[cuda-library]") {
  useMockLibraries();
  const CudaLibrarySet &mock = loadCudaLibraries(true);
  REQUIRE(mock.cublasLt);
  REQUIRE(mock.cudnn);
  CHECK(mock.cublasLtPath == std::string(KILN_MOCK_CUDA_LIBRARIES) + "/libcublasLt.so.13");
  CHECK(mock.cudnnPath == std::string(KILN_MOCK_CUDA_LIBRARIES) + "/libcudnn.so.9");
  // For a real device the mock in the path is passed over, and says so if nothing else is found.
  const CudaLibrarySet &real = loadCudaLibraries(false);
  CHECK(real.cublasLtPath.find(KILN_MOCK_CUDA_LIBRARIES) == std::string::npos);
  if (!real.cublasLt)
    CHECK(real.cublasLtMissing.find("is Kiln's mock") != std::string::npos);
  CHECK(cudaLibrariesStatus(true).find("on cuBLASLt (") != std::string::npos);
}

TEST_CASE("matrix products run on the mock cuBLASLt with their epilogue", "[cuda-library]") {
  useMockLibraries();
  SimCudaLibrary library(2);
  // Batched, A transposed, B shared: out = relu(0.5 * A^T B + bias + residual).
  const int batch = 3, M = 5, N = 7, K = 4;
  std::vector<float> a = ramp(batch * M * K, 1.0f), b = ramp(K * N, 0.8f),
                     bias = ramp(N, 0.3f), residual = ramp(batch * M * N, 0.2f),
                     out(batch * M * N, -99.0f);
  int64_t shape[] = {batch, M, N, K, 1, 0, 1, 0};
  LibraryCall call{LibraryCall::MatMul, shape, LibraryCall::Relu, 0, 0, 0.5f, true, true, true};
  bool ran = false;
  REQUIRE(library.run(0, call, {a.data(), b.data(), bias.data(), residual.data(), out.data()}, ran));
  REQUIRE(ran);
  std::vector<float> ref = referenceMatmul(a, b, batch, M, N, K, true, false, false);
  for (size_t i = 0; i < out.size(); ++i) {
    float want = std::max(0.0f, 0.5f * ref[i] + bias[i % N] + residual[i]);
    REQUIRE(out[i] == Approx(want).margin(1e-5));
  }
  // B transposed and batched, GELU (tanh form), no bias, in place over the residual.
  int64_t shape2[] = {batch, M, N, K, 0, 1, 1, 1};
  std::vector<float> b2 = ramp(batch * N * K, 0.5f), inout = residual;
  LibraryCall gelu{LibraryCall::MatMul, shape2, LibraryCall::GeluTanh, 0, 0, 1.0f, false, true,
                   false};
  REQUIRE(library.run(1, gelu, {a.data(), b2.data(), nullptr, inout.data(), inout.data()}, ran));
  REQUIRE(ran);
  ref = referenceMatmul(a, b2, batch, M, N, K, false, true, true);
  for (size_t i = 0; i < out.size(); ++i) {
    double v = ref[i] + residual[i];
    double want = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    REQUIRE(inout[i] == Approx(want).margin(1e-5));
  }
}

TEST_CASE("convolutions run on the mock cuDNN; what it cannot fuse falls back",
          "[cuda-library]") {
  useMockLibraries();
  SimCudaLibrary library(3);
  // Grouped, strided, padded: N=1, C=4, 6x6, F=6, 3x3, groups 2, stride 2, pad 1.
  const int C = 4, H = 6, W = 6, F = 6, KH = 3, KW = 3, G = 2, OH = 3, OW = 3;
  int64_t shape[] = {1, C, H, W, F, KH, KW, OH, OW, G, 2, 2, 1, 1, 1, 1, 0, 0};
  std::vector<float> x = ramp(C * H * W, 1.0f), w = ramp(F * (C / G) * KH * KW, 0.4f),
                     out(F * OH * OW, -99.0f);
  LibraryCall call{LibraryCall::Conv, shape, LibraryCall::None, 0, 0, 1.0f, false, false, true};
  bool ran = false;
  REQUIRE(library.run(0, call, {x.data(), w.data(), nullptr, nullptr, out.data()}, ran));
  REQUIRE(ran);
  for (int f = 0; f < F; ++f)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        double acc = 0;
        int g = f / (F / G);
        for (int c = 0; c < C / G; ++c)
          for (int r = 0; r < KH; ++r)
            for (int s = 0; s < KW; ++s) {
              int ih = oh * 2 - 1 + r, iw = ow * 2 - 1 + s;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                acc += x[((g * (C / G) + c) * H + ih) * W + iw] *
                       w[((f * (C / G) + c) * KH + r) * KW + s];
            }
        REQUIRE(out[(f * OH + oh) * OW + ow] == Approx(acc).margin(1e-5));
      }
  // Clip (Relu6) is not one of cuDNN's fused activations: the kernel runs it.
  LibraryCall clip = call;
  clip.activation = LibraryCall::Clip;
  clip.beta = 6;
  REQUIRE(library.run(1, clip, {x.data(), w.data(), nullptr, nullptr, out.data()}, ran));
  CHECK_FALSE(ran);
  // Padding more at the bottom than the top: cuDNN pads both sides alike.
  int64_t uneven[] = {1, C, H, W, F, KH, KW, OH, OW, G, 2, 2, 1, 1, 0, 0, 1, 1};
  LibraryCall lopsided = call;
  lopsided.shape = uneven;
  REQUIRE(library.run(2, lopsided, {x.data(), w.data(), nullptr, nullptr, out.data()}, ran));
  CHECK_FALSE(ran);
}

// Run alone with no library to find (ctest unit-runtime-no-cuda-libraries).
TEST_CASE("without cuBLASLt and cuDNN every call falls back", "[.cuda-libraries-missing]") {
  const CudaLibrarySet &mock = loadCudaLibraries(true);
  CHECK_FALSE(mock.cublasLt);
  CHECK_FALSE(mock.cudnn);
  CHECK(mock.cublasLtMissing.find("no cuBLASLt found") != std::string::npos);
  CHECK(cudaLibrariesStatus(true).find("matrix products on Kiln's kernels") != std::string::npos);
  SimCudaLibrary library(1);
  int64_t shape[] = {1, 2, 2, 2, 0, 0, 0, 0};
  std::vector<float> a(4, 1), b(4, 1), out(4, 0);
  LibraryCall call{LibraryCall::MatMul, shape, LibraryCall::None, 0, 0, 1.0f, false, false, true};
  bool ran = true;
  REQUIRE(library.run(0, call, {a.data(), b.data(), nullptr, nullptr, out.data()}, ran));
  CHECK_FALSE(ran);
}

TEST_CASE("f16 calls run on the mocks in f16 storage, f32 compute", "[cuda-library]") {
  useMockLibraries();
  SimCudaLibrary library(3);
  auto halves = [](const std::vector<float> &v) {
    std::vector<uint16_t> h(v.size());
    narrowToHalves(v.data(), h.data(), v.size());
    return h;
  };
  auto widened = [](const std::vector<uint16_t> &h) {
    std::vector<float> v(h.size());
    widenHalves(h.data(), v.data(), h.size());
    return v;
  };
  // The result rounded once: within half an f16 ulp of the double reference.
  auto withinHalfAnUlp = [](float got, double want) {
    double ulp = std::ldexp(1.0, std::max(std::ilogb(std::max(std::fabs(want), 6.1e-5)), -14) - 10);
    return std::fabs(got - want) <= 0.5 * ulp + 1e-7;
  };
  // out = relu(A B^T + bias + residual), f16 throughout.
  const int M = 5, N = 7, K = 12;
  std::vector<uint16_t> a = halves(ramp(M * K, 1.0f)), b = halves(ramp(N * K, 0.8f)),
                        bias = halves(ramp(N, 0.3f)), residual = halves(ramp(M * N, 0.2f)),
                        out(M * N, 0x7e00);
  int64_t shape[] = {1, M, N, K, 0, 1, 0, 0};
  LibraryCall call{LibraryCall::MatMul, shape, LibraryCall::Relu, 0, 0, 1.0f, true, true, true,
                   LibraryCall::F16, LibraryCall::F16, LibraryCall::F16};
  bool ran = false;
  REQUIRE(library.run(0, call, {a.data(), b.data(), bias.data(), residual.data(), out.data()}, ran));
  REQUIRE(ran);
  std::vector<float> ref = referenceMatmul(widened(a), widened(b), 1, M, N, K, false, true, false);
  std::vector<float> got = widened(out), wb = widened(bias), wr = widened(residual);
  for (size_t i = 0; i < got.size(); ++i)
    REQUIRE(withinHalfAnUlp(got[i], std::max(0.0, double(ref[i]) + wb[i % N] + wr[i])));
  // A 3x3 convolution with bias, f16 throughout.
  const int C = 3, H = 5, W = 5, F = 4;
  int64_t cshape[] = {1, C, H, W, F, 3, 3, H, W, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<uint16_t> x = halves(ramp(C * H * W, 1.0f)), w = halves(ramp(F * C * 9, 0.4f)),
                        cb = halves(ramp(F, 0.5f)), y(F * H * W, 0x7e00);
  LibraryCall conv{LibraryCall::Conv, cshape, LibraryCall::None, 0, 0, 1.0f, true, false, true,
                   LibraryCall::F16, LibraryCall::F16, LibraryCall::F16};
  REQUIRE(library.run(1, conv, {x.data(), w.data(), cb.data(), nullptr, y.data()}, ran));
  REQUIRE(ran);
  std::vector<float> wx = widened(x), ww = widened(w), wcb = widened(cb), wy = widened(y);
  for (int f = 0; f < F; ++f)
    for (int oh = 0; oh < H; ++oh)
      for (int ow = 0; ow < W; ++ow) {
        double acc = wcb[f];
        for (int c = 0; c < C; ++c)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              int ih = oh - 1 + r, iw = ow - 1 + s;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                acc += double(wx[(c * H + ih) * W + iw]) * ww[((f * C + c) * 3 + r) * 3 + s];
            }
        REQUIRE(withinHalfAnUlp(wy[(f * H + oh) * W + ow], acc));
      }
  // An f16 call with an f32 input is not cuda's: it says it did not run.
  LibraryCall mixed = conv;
  mixed.inputType = LibraryCall::F32;
  std::vector<float> x32 = wx;
  REQUIRE(library.run(2, mixed, {x32.data(), w.data(), cb.data(), nullptr, y.data()}, ran));
  REQUIRE_FALSE(ran);
}
