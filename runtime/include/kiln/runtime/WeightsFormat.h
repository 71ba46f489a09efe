//===- WeightsFormat.h - The model.weights file format ----------*- C++ -*-===//
//
// The one definition of the weights file that the compiler writes and the runtime
// reads (header-only, no dependencies, so that both sides include it):
//
//   bytes 0-7    "KILNWTS2" (version 2: the word-wise checksum below)
//   bytes 8-15   u64 payload bytes (little-endian, as the host writes it)
//   bytes 16-23  u64 checksum of the payload (weightsChecksum)
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

constexpr char kWeightsMagic[8] = {'K', 'I', 'L', 'N', 'W', 'T', 'S', '2'};
constexpr size_t kWeightsHeaderBytes = 64;

/// The payload's checksum: FNV-1a-style over little-endian 64-bit words in four
/// interleaved lanes (independent multiply chains: a few GB/s, where byte-wise
/// FNV-1a took 0.6 s for BERT's 434 MB at every compile and every load), the tail
/// bytes into lane 0, the lanes folded with the size at the end. Incremental: the
/// compiler feeds it the weights as it writes them.
class WeightsChecksum {
public:
  void update(const void *data, size_t size) {
    const auto *p = static_cast<const unsigned char *>(data);
    total += size;
    while (size > 0 && pending > 0) { // complete a partial word
      word[pending++] = *p++;
      --size;
      if (pending == 8) {
        mix(word);
        pending = 0;
      }
    }
    for (; size >= 8; p += 8, size -= 8)
      mix(p);
    for (; size > 0; --size)
      word[pending++] = *p++;
  }
  uint64_t finish() const {
    uint64_t l[4] = {lane[0], lane[1], lane[2], lane[3]};
    for (size_t b = 0; b < pending; ++b)
      l[0] = (l[0] ^ word[b]) * kPrime;
    uint64_t h = static_cast<uint64_t>(total);
    for (uint64_t x : l)
      h = (h ^ x) * kPrime;
    return h;
  }

private:
  static constexpr uint64_t kPrime = 1099511628211ull;
  void mix(const unsigned char *p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t &l = lane[words++ & 3];
    l = (l ^ w) * kPrime;
  }
  uint64_t lane[4] = {1469598103934665603ull, 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
                      0x165667b19e3779f9ull};
  unsigned char word[8] = {};
  size_t pending = 0, words = 0, total = 0;
};

inline uint64_t weightsChecksum(const void *data, size_t size) {
  WeightsChecksum c;
  c.update(data, size);
  return c.finish();
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

/// The format version of a weights header from any Kiln ("KILNWTS" and a digit),
/// or -1 when `in` is not one.
inline int weightsFormatVersion(const char *in) {
  if (std::memcmp(in, kWeightsMagic, sizeof kWeightsMagic - 1) != 0 || in[7] < '0' ||
      in[7] > '9')
    return -1;
  return in[7] - '0';
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
