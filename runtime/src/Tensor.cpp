//===- Tensor.cpp - Element types and tensor descriptors ------------------===//
//
// This file implements element type sizes and names and tensor descriptors
// (Tensor.h).
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Tensor.h"

#include <limits>

namespace kiln::rt {

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::U8: case DType::I8: case DType::Bool: return 1;
  case DType::U16: case DType::I16: case DType::F16: case DType::BF16: return 2;
  case DType::F32: case DType::I32: case DType::U32: return 4;
  case DType::I64: case DType::U64: case DType::F64: return 8;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F32: return "f32";
  case DType::U8: return "u8";
  case DType::I8: return "i8";
  case DType::U16: return "u16";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::Bool: return "bool";
  case DType::F16: return "f16";
  case DType::F64: return "f64";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  case DType::BF16: return "bf16";
  }
  return "?";
}

int64_t TensorDesc::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > std::numeric_limits<int64_t>::max() / d))
      return -1;
    n *= d;
  }
  return n;
}

int64_t TensorDesc::numBytes() const {
  int64_t n = numElements();
  int64_t size = static_cast<int64_t>(dtypeSize(dtype));
  if (n < 0 || size == 0 || (n != 0 && n > std::numeric_limits<int64_t>::max() / size))
    return -1;
  return n * size;
}

} // namespace kiln::rt
