//===- ModelSupport.h - What generated model code calls --------*- C++ -*-===//
//
// What the C ABI (ModelAbi.cpp) and the targets' hooks share: loading the weights
// file (WeightsFormat.h), aligned host buffers and the argument checks of a run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_MODELSUPPORT_H
#define KILN_RUNTIME_MODELSUPPORT_H

#include "kiln/runtime/Tensor.h"
#include "kiln/runtime/WeightsFormat.h"
#include "kiln/runtime/model_abi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

/// A 64-byte aligned host buffer.
struct AlignedBuffer {
  struct Free {
    void operator()(void *p) const;
  };
  std::unique_ptr<char, Free> data;
  size_t size = 0;
  Status allocate(size_t bytes);
};

/// Reads `path` into `out`, checking magic, size (must equal `expectedBytes`) and
/// checksum (must equal `expectedChecksum`).
Status loadWeights(const std::string &path, uint64_t expectedBytes,
                   uint64_t expectedChecksum, AlignedBuffer &out);

/// The same for a weights image in memory (`size` bytes: header and payload), e.g. one
/// built into the model with `kiln compile --embed-weights`; `what` names it in errors.
Status loadWeightsImage(const char *image, uint64_t size, const std::string &what,
                        uint64_t expectedBytes, uint64_t expectedChecksum, AlignedBuffer &out);

/// Checks one tensor against what the model expects (dtype, rank, shape, data);
/// `label` names it in the message.
Status checkTensor(const std::string &label, const kiln_tensor &given,
                   const kiln_tensor_info &expected);

/// Checks `given` against `expected` (count, dtypes, ranks, shapes, non-null data).
Status checkTensors(const char *what, const kiln_tensor *given, int32_t count,
                    const kiln_tensor_info *expected, int32_t expectedCount);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MODELSUPPORT_H
