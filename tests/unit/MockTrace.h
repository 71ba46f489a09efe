//===- MockTrace.h - The mock CUDA libraries' shared trace -------*- C++ -*-===//
//
// The mock cuBLASLt and cuDNN append what they ran to $KILN_MOCK_CUDA_TRACE, the
// file the mock driver traces to, so one trace shows launches and library calls in
// order.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_MOCKTRACE_H
#define KILN_TESTS_UNIT_MOCKTRACE_H

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

#endif // KILN_TESTS_UNIT_MOCKTRACE_H
