//===- TensorFiles.cpp - Tensors from .npy and ONNX TensorProto files -----===//
#include "compiler/import/TensorFiles.h"
#include "kiln/runtime/Npy.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln {

bool parseTensorProto(const std::string &bytes, const std::string &what,
                      rt::HostTensor &out, std::string &err) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) {
    err = what + ": not an ONNX TensorProto";
    return false;
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    err = what + ": a tensor with external data (give its values in the file)";
    return false;
  }
  out.desc.dtype = static_cast<rt::DType>(t.data_type());
  size_t elem = rt::dtypeSize(out.desc.dtype);
  if (elem == 0) {
    err = what + ": unsupported element type " + std::to_string(t.data_type());
    return false;
  }
  out.desc.shape.assign(t.dims().begin(), t.dims().end());
  // numElements is -1 for a negative dimension or a count past int64.
  int64_t n = out.desc.numElements();
  if (n < 0 || static_cast<uint64_t>(n) > UINT64_MAX / elem) {
    err = what + ": invalid dimensions";
    return false;
  }
  // Sizes are checked against the data present before anything is allocated.
  uint64_t size = static_cast<uint64_t>(n) * elem;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != size) {
      err = what + ": raw data size does not match its dimensions";
      return false;
    }
    out.data.assign(t.raw_data().begin(), t.raw_data().end());
    return true;
  }
  auto copy = [&](const auto &field) {
    if (static_cast<uint64_t>(field.size()) != static_cast<uint64_t>(n)) {
      err = what + ": holds " + std::to_string(field.size()) + " values, " +
            std::to_string(n) + " expected";
      return false;
    }
    out.data.assign(size, 0);
    for (int64_t i = 0; i < n; ++i) {
      auto v = field.Get(static_cast<int>(i));
      std::memcpy(out.data.data() + i * elem, &v, elem);
    }
    return true;
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT: return copy(t.float_data());
  case onnx::TensorProto::DOUBLE: return copy(t.double_data());
  case onnx::TensorProto::INT64: return copy(t.int64_data());
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: return copy(t.uint64_data());
  default: return copy(t.int32_data());
  }
}

bool readTensorFile(const std::string &path, rt::HostTensor &out, std::string &err) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    rt::Status s = rt::readNpy(path, out);
    if (!s)
      err = s.message();
    return s.isOk();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = path + ": cannot open the file for reading";
    return false;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return parseTensorProto(bytes.str(), path, out, err);
}

} // namespace kiln
