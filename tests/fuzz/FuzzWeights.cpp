//===- FuzzWeights.cpp - libFuzzer target: the weights-file loader --------===//
//
// Bytes as a weights image (header and payload) checked against the payload size
// and checksum a model expects (the first 16 bytes of the input, so that the fuzzer
// can also match them). A load must fail cleanly unless the image is exactly the
// expected one.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/ModelSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16)
    return 0;
  uint64_t expectedBytes, expectedChecksum;
  std::memcpy(&expectedBytes, data, 8);
  std::memcpy(&expectedChecksum, data + 8, 8);
  // A copy of exactly the image's bytes, so that ASan sees any read past it.
  std::string image(reinterpret_cast<const char *>(data) + 16, size - 16);
  kiln::rt::AlignedBuffer out;
  kiln::rt::Status s = kiln::rt::loadWeightsImage(image.data(), image.size(), "fuzz.weights",
                                                  expectedBytes, expectedChecksum, out);
  if (!s && s.message().empty()) {
    std::fprintf(stderr, "a failed load without a message\n");
    std::abort();
  }
  return 0;
}
