//===- MockTrace.h - What the mock CUDA libraries share -----------*- C++ -*-===//
//
// The mock cuBLASLt and cuDNN append what they ran to $KILN_MOCK_CUDA_TRACE, the
// file the mock driver traces to, so one trace shows launches and library calls in
// order; and they read and write f32 or f16 elements alike.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_MOCKTRACE_H
#define KILN_TESTS_UNIT_MOCKTRACE_H

#include "kiln/runtime/Half.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

/// Appends `line` to $KILN_MOCK_CUDA_TRACE, if set.
inline void mockTrace(const std::string &line) {
  if (const char *path = std::getenv("KILN_MOCK_CUDA_TRACE"))
    if (FILE *f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
}

/// Element `i` of an f32 (or, `half`, f16) array, as double.
inline double mockLoad(const void *base, size_t i, bool half) {
  if (!half)
    return static_cast<const float *>(base)[i];
  float f;
  kiln::rt::widenHalves(static_cast<const uint16_t *>(base) + i, &f, 1);
  return f;
}

/// Stores `v` as element `i` of an f32 (or, `half`, f16) array, rounded once to
/// float first (the f32 a library's compute type holds).
inline void mockStore(void *base, size_t i, double v, bool half) {
  float f = static_cast<float>(v);
  if (half)
    kiln::rt::narrowToHalves(&f, static_cast<uint16_t *>(base) + i, 1);
  else
    static_cast<float *>(base)[i] = f;
}

#endif // KILN_TESTS_UNIT_MOCKTRACE_H
