//===- HostLibraryTest.cpp - The host's library calls, directly -----------===//
//
// HostLibrary runs a plan's contraction calls on oneDNN. These tests call it as the
// generated code does and compare with loops written here: a strided, padded,
// grouped convolution with bias, residual (separate and in place) and Clip, and a
// batched matrix product with a transposed operand, a shared operand and a scale.
// Where oneDNN is not loaded the calls must say they did not run (the generated
// code then runs the kernel) and leave the output alone.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/HostLibrary.h"
#include "kiln/runtime/Half.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

using kiln::rt::HostLibrary;
using kiln::rt::LibraryBuffers;
using kiln::rt::LibraryCall;

namespace {

std::vector<float> values(size_t n, float scale, int seed) {
  std::vector<float> v(n);
  uint32_t x = 2463534242u + static_cast<uint32_t>(seed);
  for (float &f : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    f = scale * (static_cast<float>(x % 2001) / 1000.0f - 1.0f);
  }
  return v;
}

void requireClose(const std::vector<float> &got, const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    REQUIRE(std::fabs(got[i] - want[i]) <= 1e-4f + 1e-4f * std::fabs(want[i]));
}

} // namespace

namespace {
// N=2, C=4, 7x6 input, F=6, 3x3 taps, groups 2, stride 2x1, dilation 1x2, pads
// (1, 2, 1, 2) -> out 4x4.
const int64_t n = 2, c = 4, h = 7, w = 6, f = 6, kh = 3, kw = 3, g = 2;
const int64_t sh = 2, sw = 1, dh = 1, dw = 2, pt = 1, pl = 2, pb = 1, pr = 2;
const int64_t oh = (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1;
const int64_t ow = (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1;
const int64_t shape[] = {n, c, h, w, f, kh, kw, oh, ow, g, sh, sw, dh, dw, pt, pl, pb, pr};

/// clip(conv(x, wt) + bias + residual, -0.5, 1.5), the convolution in double.
std::vector<float> referenceConv(const std::vector<float> &x, const std::vector<float> &wt,
                                 const std::vector<float> &bias,
                                 const std::vector<float> &residual) {
  std::vector<float> want(n * f * oh * ow);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = 0;
          int64_t group = o / (f / g);
          for (int64_t ci = 0; ci < c / g; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * sh - pt + ky * dh, ix = z * sw - pl + kx * dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                  continue;
                acc += x[((b * c + group * (c / g) + ci) * h + iy) * w + ix] *
                       wt[((o * (c / g) + ci) * kh + ky) * kw + kx];
              }
          size_t i = ((b * f + o) * oh + y) * ow + z;
          want[i] = std::clamp(static_cast<float>(acc + bias[o] + residual[i]), -0.5f, 1.5f);
        }
  return want;
}

std::vector<uint16_t> halves(const std::vector<float> &v) {
  std::vector<uint16_t> h(v.size());
  kiln::rt::narrowToHalves(v.data(), h.data(), v.size());
  return h;
}

std::vector<float> widened(const std::vector<uint16_t> &h) {
  std::vector<float> v(h.size());
  kiln::rt::widenHalves(h.data(), v.data(), h.size());
  return v;
}
} // namespace

TEST_CASE("a library convolution computes the plan's epilogue", "[host-library]") {
  std::vector<float> x = values(n * c * h * w, 1.0f, 1), wt = values(f * (c / g) * kh * kw, 0.5f, 2),
                     bias = values(f, 0.3f, 3), residual = values(n * f * oh * ow, 1.0f, 4);
  std::vector<float> want = referenceConv(x, wt, bias, residual);
  LibraryCall call = {LibraryCall::Conv, shape, LibraryCall::Clip, -0.5f, 1.5f, 1.0f,
                      true, true, true};
  HostLibrary library(2);
  std::vector<float> out(want.size(), 42.0f);
  bool ran = false;
  REQUIRE(library.run(0, call, {x.data(), wt.data(), bias.data(), residual.data(), out.data()}, ran));
  if (!kiln::rt::hostLibraryAvailable()) {
    REQUIRE_FALSE(ran);
    REQUIRE(out == std::vector<float>(want.size(), 42.0f));
    REQUIRE(library.fallbackRuns() == 1);
    return;
  }
  REQUIRE(ran);
  requireClose(out, want);
  // Again (the primitive and the reordered weights are kept), then in place: the
  // output holds the residual.
  std::fill(out.begin(), out.end(), 0.0f);
  REQUIRE(library.run(0, call, {x.data(), wt.data(), bias.data(), residual.data(), out.data()}, ran));
  requireClose(out, want);
  std::vector<float> inPlace = residual;
  REQUIRE(library.run(1, call, {x.data(), wt.data(), bias.data(), inPlace.data(), inPlace.data()}, ran));
  REQUIRE(ran);
  requireClose(inPlace, want);
  REQUIRE(library.libraryRuns() == 3);
  REQUIRE(library.fallbackRuns() == 0);
}

TEST_CASE("an f16 library convolution computes in f32 and rounds once", "[host-library]") {
  // The f32 case's operands as f16; its result rounded to f16 (the call widens
  // them, oneDNN computes in f32, the output is rounded once): within one f16 ulp
  // of the double result, its summation order aside. Then the f32 input and
  // output of a model kept f32: the input rounded as it is read, the result
  // rounded and widened.
  std::vector<uint16_t> x = halves(values(n * c * h * w, 1.0f, 1)),
                        wt = halves(values(f * (c / g) * kh * kw, 0.5f, 2)),
                        bias = halves(values(f, 0.3f, 3)),
                        residual = halves(values(n * f * oh * ow, 1.0f, 4));
  std::vector<float> want = referenceConv(widened(x), widened(wt), widened(bias), widened(residual));
  auto withinAnUlp = [&](const std::vector<float> &got) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      float ulp = std::ldexp(1.0f, std::max(std::ilogb(std::max(std::fabs(want[i]), 6.1e-5f)), -14) - 10);
      INFO("element " << i << ": " << got[i] << " vs " << want[i]);
      REQUIRE(std::fabs(got[i] - want[i]) <= ulp);
    }
  };
  LibraryCall call = {LibraryCall::Conv, shape, LibraryCall::Clip, -0.5f, 1.5f, 1.0f, true, true,
                      true, LibraryCall::F16, LibraryCall::F16, LibraryCall::F16};
  HostLibrary library(2);
  std::vector<uint16_t> out(want.size(), 0x7e00);
  bool ran = false;
  REQUIRE(library.run(0, call, {x.data(), wt.data(), bias.data(), residual.data(), out.data()}, ran));
  REQUIRE(ran == kiln::rt::hostLibraryAvailable());
  if (!ran) {
    REQUIRE(out == std::vector<uint16_t>(want.size(), 0x7e00));
    return;
  }
  withinAnUlp(widened(out));
  std::vector<float> x32 = widened(x), out32(want.size(), 42.0f);
  // Nearly half an f16 ulp away from x: the call must round it back to read x.
  for (float &v : x32)
    v += std::copysign(0.45f, v) *
         std::ldexp(1.0f, std::max(std::ilogb(std::max(std::fabs(v), 6.1e-5f)), -14) - 10);
  LibraryCall mixed = call;
  mixed.inputType = mixed.outputType = LibraryCall::F32;
  REQUIRE(library.run(1, mixed, {x32.data(), wt.data(), bias.data(), residual.data(), out32.data()}, ran));
  REQUIRE(ran);
  REQUIRE(halves(out32) == out);
  REQUIRE(widened(halves(out32)) == out32);
}

TEST_CASE("a library matrix product: batched, transposed, shared, scaled", "[host-library]") {
  // A [3, 5, 4] batched, B stored [6, 4] (transposed) and shared: out = 0.25 * A B.
  const int64_t batch = 3, m = 5, k = 4, nn = 6;
  const int64_t shape[] = {batch, m, nn, k, 0, 1, 1, 0};
  std::vector<float> a = values(batch * m * k, 1.0f, 5), b = values(nn * k, 1.0f, 6);
  std::vector<float> want(batch * m * nn);
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < k; ++t)
          acc += a[(s * m + i) * k + t] * b[j * k + t];
        want[(s * m + i) * nn + j] = 0.25f * static_cast<float>(acc);
      }
  LibraryCall call = {LibraryCall::MatMul, shape, LibraryCall::None, 0.0f, 0.0f, 0.25f,
                      false, false, false};
  HostLibrary library(1);
  std::vector<float> out(want.size(), 0.0f);
  bool ran = false;
  REQUIRE(library.run(0, call, {a.data(), b.data(), nullptr, nullptr, out.data()}, ran));
  REQUIRE(ran == kiln::rt::hostLibraryAvailable());
  if (ran)
    requireClose(out, want);
}

TEST_CASE("a library call outside the plan is an error", "[host-library]") {
  const int64_t shape[] = {1, 1, 1, 1, 0, 0, 0, 0};
  LibraryCall call = {LibraryCall::MatMul, shape, LibraryCall::None, 0.0f, 0.0f, 1.0f,
                      false, false, false};
  HostLibrary library(1);
  float a = 1, b = 2, out = 0;
  bool ran = true;
  kiln::rt::Status s = library.run(3, call, {&a, &b, nullptr, nullptr, &out}, ran);
  REQUIRE_FALSE(s);
  REQUIRE_FALSE(ran);
  REQUIRE(s.message() == "library call 3 is not in the plan");
}
