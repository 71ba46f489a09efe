//===- HalfTest.cpp - f16 <-> f32 conversion (runtime/Half.h) --------------===//
//
// Every half widens exactly and narrows back to itself; narrowing rounds to the
// nearest half, ties to even, as a reference that searches the halves computes
// (subnormals, the overflow threshold and NaN included). Arrays of 8 or more take
// F16C's path where the CPU has it, shorter ones and the tails the portable
// one: both are checked.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Half.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using kiln::rt::narrowToHalves;
using kiln::rt::roundThroughHalves;
using kiln::rt::widenHalves;

namespace {

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// The value of half `h`, computed in double from its fields.
double valueOf(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = exponent == 0 ? std::ldexp(mantissa, -24)
                           : std::ldexp(1024 + mantissa, exponent - 25);
  return (h & 0x8000) ? -v : v;
}

/// The nearest half to finite `f`, ties to even: a search of the positive halves
/// (ordered by their bits).
uint16_t referenceNarrow(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) // halfway to 2^16 and past: infinity
    return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;
  while (lo < hi) { // the largest half <= a
    uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (valueOf(mid) <= a)
      lo = mid;
    else
      hi = static_cast<uint16_t>(mid - 1);
  }
  uint16_t below = lo;
  if (below == 0x7bff || valueOf(below) == a)
    return sign | below;
  double down = a - valueOf(below), up = valueOf(below + 1) - a;
  uint16_t nearest = down < up ? below : up < down ? below + 1 : (below & 1 ? below + 1 : below);
  return sign | nearest;
}

std::vector<uint16_t> narrowed(const std::vector<float> &from, bool portable) {
  std::vector<uint16_t> to(from.size());
  if (portable)
    for (size_t i = 0; i < from.size(); ++i)
      narrowToHalves(&from[i], &to[i], 1);
  else
    narrowToHalves(from.data(), to.data(), from.size());
  return to;
}

} // namespace

TEST_CASE("every half widens exactly and narrows back", "[half]") {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<uint16_t>(i);
  for (bool portable : {false, true}) {
    std::vector<float> wide(all.size());
    if (portable)
      for (size_t i = 0; i < all.size(); ++i)
        widenHalves(&all[i], &wide[i], 1);
    else
      widenHalves(all.data(), wide.data(), all.size());
    std::vector<uint16_t> back = narrowed(wide, portable);
    for (size_t i = 0; i < all.size(); ++i) {
      uint16_t h = all[i];
      bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
      INFO("half 0x" << std::hex << h << (portable ? " portable" : " vector"));
      if (nan) {
        REQUIRE(std::isnan(wide[i]));
        REQUIRE((back[i] & 0x7c00) == 0x7c00);
        REQUIRE((back[i] & 0x3ff) != 0);
        continue;
      }
      if ((h & 0x7fff) == 0x7c00)
        REQUIRE(std::isinf(wide[i]));
      else
        REQUIRE(static_cast<double>(wide[i]) == valueOf(h));
      REQUIRE(back[i] == h);
    }
  }
}

TEST_CASE("floats narrow to the nearest half, ties to even", "[half]") {
  std::vector<float> floats;
  // Every float exponent near f16's range, with mantissas that are exact halves,
  // ties, just below and above ties, and pseudo-random ones.
  uint32_t x = 88172645u;
  for (uint32_t exponent = 90; exponent <= 145; ++exponent)
    for (uint32_t low : {0u, 0x1000u, 0x0fffu, 0x1001u, 0x2000u, 0x3000u, 0x7fffffu}) {
      for (int k = 0; k < 24; ++k) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        uint32_t mantissa = ((x & 0x7fe000u) | low) & 0x7fffffu;
        floats.push_back(floatOf(exponent << 23 | mantissa));
        floats.push_back(-floats.back());
      }
    }
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e10f, 5.9604645e-8f,
                  2.9802322e-8f, 2.9802326e-8f, 8.940697e-8f})
    floats.push_back(f);
  for (bool portable : {false, true}) {
    std::vector<uint16_t> got = narrowed(floats, portable);
    for (size_t i = 0; i < floats.size(); ++i) {
      INFO("float " << floats[i] << (portable ? " portable" : " vector"));
      REQUIRE(got[i] == referenceNarrow(floats[i]));
    }
  }
  std::vector<float> rounded(floats.size());
  roundThroughHalves(floats.data(), rounded.data(), floats.size());
  std::vector<uint16_t> halves = narrowed(floats, false);
  for (size_t i = 0; i < floats.size(); ++i) {
    float want;
    widenHalves(&halves[i], &want, 1);
    REQUIRE(std::memcmp(&rounded[i], &want, 4) == 0);
  }
  // Infinity and NaN.
  std::vector<float> special = {INFINITY, -INFINITY, NAN};
  std::vector<uint16_t> s = narrowed(special, true);
  REQUIRE(s[0] == 0x7c00);
  REQUIRE(s[1] == 0xfc00);
  REQUIRE(((s[2] & 0x7c00) == 0x7c00 && (s[2] & 0x3ff) != 0));
}
