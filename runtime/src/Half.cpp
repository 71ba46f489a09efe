//===- Half.cpp - IEEE half <-> float conversion for the runtime ----------===//
//
// This file implements Half.h: F16C's vcvtph2ps/vcvtps2ph on x86 CPUs that have
// it (checked once), the bit-level conversion everywhere else and for the tails.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Half.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KILN_HALF_X86 1
#endif

namespace kiln::rt {
namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float widen(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN (payload kept)
    return floatOf(sign | 0x7f800000 | mantissa << 13);
  if (exponent == 0) { // zero or subnormal: mantissa x 2^-24, exact in a float
    float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return floatOf(sign | (exponent + 112) << 23 | mantissa << 13);
}

uint16_t narrow(float f) {
  uint32_t u = bitsOf(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t magnitude = u & 0x7fffffff;
  if (magnitude >= 0x7f800000) // infinity, or NaN kept quiet
    return sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 | ((magnitude >> 13) & 0x3ff) : 0);
  if (magnitude >= 0x477ff000) // rounds past 65504
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below 2^-14: a subnormal half (or zero)
    // The value in units of 2^-24, rounded to nearest even by the float adder.
    float scaled = floatOf(magnitude) + 0.5f; // 0.5 = 2^-1: the units land in the mantissa
    return sign | static_cast<uint16_t>(bitsOf(scaled) - bitsOf(0.5f));
  }
  // Normal: drop 13 mantissa bits, rounding to nearest even.
  uint32_t odd = (magnitude >> 13) & 1;
  magnitude += 0xc8000fff + odd; // rebias (-112 << 23) and round
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

#ifdef KILN_HALF_X86
bool hasF16c() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}

__attribute__((target("avx,f16c"))) size_t widenF16c(const uint16_t *from, float *to,
                                                     size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                 reinterpret_cast<const __m128i *>(from + i))));
  return i;
}

__attribute__((target("avx,f16c"))) size_t narrowF16c(const float *from, uint16_t *to,
                                                      size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(to + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}

__attribute__((target("avx,f16c"))) size_t roundF16c(const float *from, float *to, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(from + i),
                                                             _MM_FROUND_TO_NEAREST_INT)));
  return i;
}
#endif

} // namespace

void roundThroughHalves(const float *from, float *to, size_t n) {
  size_t i = 0;
#ifdef KILN_HALF_X86
  if (hasF16c())
    i = roundF16c(from, to, n);
#endif
  for (; i < n; ++i)
    to[i] = widen(narrow(from[i]));
}

void widenHalves(const uint16_t *from, float *to, size_t n) {
  size_t i = 0;
#ifdef KILN_HALF_X86
  if (hasF16c())
    i = widenF16c(from, to, n);
#endif
  for (; i < n; ++i)
    to[i] = widen(from[i]);
}

void narrowToHalves(const float *from, uint16_t *to, size_t n) {
  size_t i = 0;
#ifdef KILN_HALF_X86
  if (hasF16c())
    i = narrowF16c(from, to, n);
#endif
  for (; i < n; ++i)
    to[i] = narrow(from[i]);
}

} // namespace kiln::rt
