//===- ModelSupport.cpp - What generated model code calls -----------------===//
//
// This file implements what generated model code calls (ModelSupport.h): weights
// loading from a file or an embedded image (WeightsFormat.h), aligned buffers and the
// argument checks of kiln_model_run.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/ModelSupport.h"

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kiln::rt {

void AlignedBuffer::Free::operator()(void *p) const { std::free(p); }

Status AlignedBuffer::allocate(size_t bytes) {
  if (bytes > SIZE_MAX - 63)
    return Status::error("cannot allocate " + std::to_string(bytes) + " bytes", KILN_ERROR_MEMORY);
  size_t rounded = (bytes + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    return Status::error("cannot allocate " + std::to_string(bytes) + " bytes", KILN_ERROR_MEMORY);
  std::memset(p, 0, rounded ? rounded : 64);
  data.reset(static_cast<char *>(p));
  size = bytes;
  return Status::ok();
}

/// Checks a weights header against the model; the payload's checksum in `checksum`.
static Status loadError(std::string message) {
  return Status::error(std::move(message), KILN_ERROR_LOAD);
}

static Status checkWeightsHeader(const char *header, const std::string &what,
                                 uint64_t expectedBytes, uint64_t &checksum) {
  WeightsHeader decoded;
  if (!decodeWeightsHeader(header, decoded)) {
    int version = weightsFormatVersion(header);
    if (version >= 0)
      return loadError(what + ": written by another Kiln version (weights format " +
                           std::to_string(version) + "; this runtime reads " +
                           kWeightsMagic[7] + ")");
    return loadError(what + ": not a Kiln weights file");
  }
  uint64_t bytes = decoded.payloadBytes;
  checksum = decoded.checksum;
  if (bytes != expectedBytes)
    return loadError(what + ": holds " + std::to_string(bytes) +
                         " bytes of weights, the model needs " +
                         std::to_string(expectedBytes) + " (from another model?)");
  return Status::ok();
}

static Status checkWeightsPayload(const AlignedBuffer &out, uint64_t bytes, uint64_t checksum,
                                  uint64_t expectedChecksum, const std::string &what) {
  if (checksum != expectedChecksum || weightsChecksum(out.data.get(), bytes) != checksum)
    return loadError(what + ": weights checksum mismatch (corrupt or from another model)");
  return Status::ok();
}

// Both loaders check the header and the size present before allocating the
// payload: a truncated, foreign or corrupt file never costs the model's size in
// memory, and the allocation is never larger than the bytes that back it.
Status loadWeights(const std::string &path, uint64_t expectedBytes,
                   uint64_t expectedChecksum, AlignedBuffer &out) {
  if (expectedBytes == 0)
    return out.allocate(0);
  if (path.empty())
    return loadError("no weights file given (a model compiled with --embed-weights "
                         "needs none)");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return loadError(path + ": cannot open the weights file");
  std::streamoff fileSize = in.tellg();
  in.seekg(0);
  char header[kWeightsHeaderBytes];
  if (fileSize < static_cast<std::streamoff>(kWeightsHeaderBytes) ||
      !in.read(header, sizeof header))
    return loadError(path + ": not a Kiln weights file");
  uint64_t checksum;
  if (Status s = checkWeightsHeader(header, path, expectedBytes, checksum); !s)
    return s;
  if (static_cast<uint64_t>(fileSize) - kWeightsHeaderBytes < expectedBytes)
    return loadError(path + ": truncated weights file");
  if (Status s = out.allocate(expectedBytes); !s)
    return s;
  if (!in.read(out.data.get(), static_cast<std::streamsize>(expectedBytes)))
    return loadError(path + ": truncated weights file");
  return checkWeightsPayload(out, expectedBytes, checksum, expectedChecksum, path);
}

Status loadWeightsImage(const char *image, uint64_t size, const std::string &what,
                        uint64_t expectedBytes, uint64_t expectedChecksum, AlignedBuffer &out) {
  if (expectedBytes == 0)
    return out.allocate(0);
  uint64_t checksum;
  if (size < kWeightsHeaderBytes)
    return loadError(what + ": not a Kiln weights file");
  if (Status s = checkWeightsHeader(image, what, expectedBytes, checksum); !s)
    return s;
  if (size - kWeightsHeaderBytes < expectedBytes)
    return loadError(what + ": truncated weights image");
  if (Status s = out.allocate(expectedBytes); !s)
    return s;
  std::memcpy(out.data.get(), image + kWeightsHeaderBytes, expectedBytes);
  return checkWeightsPayload(out, expectedBytes, checksum, expectedChecksum, what);
}

static std::string shapeText(int32_t rank, const int64_t *shape) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

Status checkTensor(const std::string &label, const kiln_tensor &t,
                   const kiln_tensor_info &e) {
  if (t.dtype != e.dtype)
    return Status::error(label + " has dtype " + dtypeName(static_cast<DType>(t.dtype)) +
                             ", expected " + dtypeName(static_cast<DType>(e.dtype)),
                         KILN_ERROR_MISMATCH);
  bool same = t.rank == e.rank && (t.rank == 0 || t.shape);
  for (int32_t d = 0; same && d < t.rank; ++d)
    same = t.shape[d] == e.shape[d];
  if (!same)
    return Status::error(label + " has shape " +
                             (t.shape || t.rank == 0 ? shapeText(t.rank, t.shape) : "(null)") +
                             ", expected " + shapeText(e.rank, e.shape),
                         KILN_ERROR_MISMATCH);
  if (!t.data) {
    int64_t n = 1;
    for (int32_t d = 0; d < e.rank; ++d)
      n *= e.shape[d];
    if (n != 0)
      return Status::error(label + " has no data", KILN_ERROR_ARGUMENT);
  }
  return Status::ok();
}

Status checkTensors(const char *what, const kiln_tensor *given, int32_t count,
                    const kiln_tensor_info *expected, int32_t expectedCount) {
  if (count != expectedCount)
    return Status::error(std::string("expected ") + std::to_string(expectedCount) + " " +
                             what + "s, got " + std::to_string(count),
                         KILN_ERROR_MISMATCH);
  if (count > 0 && !given)
    return Status::error(std::string(what) + "s are null", KILN_ERROR_ARGUMENT);
  for (int32_t i = 0; i < count; ++i) {
    Status s = checkTensor(std::string(what) + " '" + expected[i].name + "'", given[i],
                           expected[i]);
    if (!s)
      return s;
  }
  return Status::ok();
}

} // namespace kiln::rt
