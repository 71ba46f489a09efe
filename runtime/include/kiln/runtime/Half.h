//===- Half.h - IEEE half <-> float conversion for the runtime -*- C++ -*-===//
//
// Converting arrays of f16 (IEEE binary16, as bits) to f32 and back, rounding to
// nearest even, with infinities, NaNs and subnormals kept: with F16C where the CPU
// has it (8 at a time), in portable code otherwise. HostLibrary uses it to run f16
// contractions on a library that computes in f32.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HALF_H
#define KILN_RUNTIME_HALF_H

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

/// `to[i]` = `from[i]` as a float (exact), for i < n.
void widenHalves(const uint16_t *from, float *to, size_t n);

/// `to[i]` = `from[i]` rounded to the nearest half (ties to even; past 65504
/// infinity), for i < n.
void narrowToHalves(const float *from, uint16_t *to, size_t n);

/// `to[i]` = `from[i]` rounded to the nearest half, as a float (`to` may be
/// `from`).
void roundThroughHalves(const float *from, float *to, size_t n);

} // namespace kiln::rt

#endif // KILN_RUNTIME_HALF_H
