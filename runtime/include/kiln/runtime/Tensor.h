//===- Tensor.h - Element types, shapes and status values ------*- C++ -*-===//
//
// The vocabulary shared by generated runtimes, `kiln run` and applications: an
// element type enum (ONNX's codes), a tensor descriptor, and Status, the error value
// every runtime call returns (the runtime never throws or exits).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_TENSOR_H
#define KILN_RUNTIME_TENSOR_H

#include "kiln/runtime/model_abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

/// Element types: the C ABI's codes (model_abi.h), ONNX's TensorProto.DataType.
enum class DType : int32_t {
  F32 = KILN_F32, U8 = KILN_U8, I8 = KILN_I8, U16 = KILN_U16, I16 = KILN_I16,
  I32 = KILN_I32, I64 = KILN_I64, Bool = KILN_BOOL, F16 = KILN_F16, F64 = KILN_F64,
  U32 = KILN_U32, U64 = KILN_U64, BF16 = KILN_BF16,
};

/// Bytes per element; 0 for an unknown code.
size_t dtypeSize(DType type);
/// "f32", "i64", ...; "?" for an unknown code.
const char *dtypeName(DType type);

struct TensorDesc {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  /// Number of elements, or -1 when a dimension is negative or the count overflows.
  int64_t numElements() const;
  /// Size in bytes, or -1 as numElements.
  int64_t numBytes() const;
};

/// Success, or an error with a code (the C ABI's kiln_status) and a message.
/// Cheap to return; never thrown.
class Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message, kiln_status code = KILN_ERROR_RUN) {
    Status s;
    s.status = code == KILN_OK ? KILN_ERROR_RUN : code;
    s.text = std::move(message);
    return s;
  }
  bool isOk() const { return status == KILN_OK; }
  explicit operator bool() const { return status == KILN_OK; }
  kiln_status code() const { return status; }
  const std::string &message() const { return text; }

private:
  kiln_status status = KILN_OK;
  std::string text;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_TENSOR_H
