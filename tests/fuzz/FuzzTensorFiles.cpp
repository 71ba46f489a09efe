//===- FuzzTensorFiles.cpp - libFuzzer target: .npy and .pb tensor readers ===//
//
// The first byte picks the reader (even: .npy, odd: ONNX TensorProto), the rest is
// the file. A tensor read must be self-consistent (its bytes match dtype x shape);
// anything else must be a clean error.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/TensorFiles.h"
#include "kiln/runtime/Npy.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  kiln::rt::HostTensor tensor;
  bool ok;
  std::string error;
  if (data[0] % 2 == 0) {
    kiln::rt::Status s = kiln::rt::parseNpy(bytes, tensor);
    ok = s.isOk();
    error = s.message();
  } else {
    ok = kiln::parseTensorProto(bytes, "fuzz.pb", tensor, error);
  }
  if (!ok) {
    if (error.empty()) {
      std::fprintf(stderr, "a failed read without a message\n");
      std::abort();
    }
    return 0;
  }
  int64_t n = tensor.desc.numBytes();
  if (n < 0 || static_cast<uint64_t>(n) != tensor.data.size()) {
    std::fprintf(stderr, "a tensor read whose data (%zu bytes) is not its dtype x shape\n",
                 tensor.data.size());
    std::abort();
  }
  return 0;
}
