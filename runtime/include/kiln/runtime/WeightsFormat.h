//===- WeightsFormat.h - The model.weights file format ----------*- C++ -*-===//
//
// The one definition of the weights file that the compiler writes and the runtime
// reads (header-only, no dependencies, so that both sides include it):
//
//   bytes 0-7    "KILNWTS1"
//   bytes 8-15   u64 payload bytes (little-endian, as the host writes it)
//   bytes 16-23  u64 FNV-1a-64 checksum of the payload
//   bytes 24-63  zero
//   then the payload: the constants at the offsets memory planning gave them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_WEIGHTSFORMAT_H
#define KILN_RUNTIME_WEIGHTSFORMAT_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kiln::rt {

constexpr char kWeightsMagic[8] = {'K', 'I', 'L', 'N', 'W', 'T', 'S', '1'};
constexpr size_t kWeightsHeaderBytes = 64;

/// FNV-1a, 64 bits: the payload's checksum.
inline uint64_t fnv1a64(const void *data, size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

struct WeightsHeader {
  uint64_t payloadBytes = 0;
  uint64_t checksum = 0;
};

/// Writes the kWeightsHeaderBytes of a header into `out`.
inline void encodeWeightsHeader(const WeightsHeader &header, char *out) {
  std::memset(out, 0, kWeightsHeaderBytes);
  std::memcpy(out, kWeightsMagic, sizeof kWeightsMagic);
  std::memcpy(out + 8, &header.payloadBytes, 8);
  std::memcpy(out + 16, &header.checksum, 8);
}

/// Reads a header from kWeightsHeaderBytes at `in`; false when the magic is wrong.
inline bool decodeWeightsHeader(const char *in, WeightsHeader &header) {
  if (std::memcmp(in, kWeightsMagic, sizeof kWeightsMagic) != 0)
    return false;
  std::memcpy(&header.payloadBytes, in + 8, 8);
  std::memcpy(&header.checksum, in + 16, 8);
  return true;
}

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTSFORMAT_H
