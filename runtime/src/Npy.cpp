//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// This file implements a strict .npy reader and writer. The header is a Python
// dict literal; only the three keys NumPy writes are accepted.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln::rt {
namespace {

struct DescrEntry {
  const char *descr;
  DType dtype;
};
const DescrEntry kDescrs[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
    {"|i1", DType::I8},  {"<i2", DType::I16}, {"<i4", DType::I32},
    {"<i8", DType::I64}, {"|u1", DType::U8},  {"<u2", DType::U16},
    {"<u4", DType::U32}, {"<u8", DType::U64}, {"|b1", DType::Bool},
};

/// Returns the text after `key`'s colon in the header dict, or npos.
size_t findValue(const std::string &header, const std::string &key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return std::string::npos;
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    return std::string::npos;
  return header.find_first_not_of(' ', colon + 1);
}

} // namespace

Status parseNpy(const std::string &bytes, HostTensor &out) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return Status::error("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return Status::error("truncated .npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return Status::error("unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return Status::error("truncated .npy header");
  std::string header = bytes.substr(headerStart, headerLen);

  size_t d = findValue(header, "descr");
  if (d == std::string::npos || header[d] != '\'')
    return Status::error(".npy header has no descr");
  std::string descr = header.substr(d + 1, header.find('\'', d + 1) - d - 1);
  if (descr == "<b1" || descr == "b1")
    descr = "|b1";
  if (descr == "<i1")
    descr = "|i1";
  if (descr == "<u1")
    descr = "|u1";
  bool known = false;
  for (const DescrEntry &e : kDescrs)
    if (descr == e.descr) {
      out.desc.dtype = e.dtype;
      known = true;
    }
  if (!known)
    return Status::error("unsupported .npy dtype '" + descr + "'");

  size_t f = findValue(header, "fortran_order");
  if (f == std::string::npos)
    return Status::error(".npy header has no fortran_order");
  if (header.compare(f, 4, "True") == 0)
    return Status::error("Fortran-order .npy files are not supported");

  size_t s = findValue(header, "shape");
  if (s == std::string::npos || header[s] != '(')
    return Status::error(".npy header has no shape");
  size_t close = header.find(')', s);
  if (close == std::string::npos)
    return Status::error(".npy shape is not closed");
  out.desc.shape.clear();
  std::string dims = header.substr(s + 1, close - s - 1);
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos)
      continue;
    item = item.substr(b, item.find_last_not_of(' ') - b + 1);
    if (item.empty() || item.size() > 18 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return Status::error(".npy shape entry '" + item + "' is not a size");
    out.desc.shape.push_back(std::stoll(item));
  }
  int64_t n = out.desc.numBytes();
  if (n < 0)
    return Status::error(".npy shape overflows");
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != static_cast<uint64_t>(n))
    return Status::error(".npy data has " + std::to_string(bytes.size() - dataStart) +
                         " bytes, the header declares " + std::to_string(n));
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(dataStart), bytes.end());
  return Status::ok();
}

Status readNpy(const std::string &path, HostTensor &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  Status s = parseNpy(bytes, out);
  return s ? s : Status::error(path + ": " + s.message());
}

Status formatNpy(const HostTensor &tensor, std::string &bytes) {
  const char *descr = nullptr;
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == tensor.desc.dtype)
      descr = e.descr;
  if (tensor.desc.dtype == DType::BF16)
    descr = "<u2"; // NumPy has no bfloat16: its bit patterns, as ONNX tests store them
  if (!descr)
    return Status::error(std::string("no .npy dtype for ") +
                         dtypeName(tensor.desc.dtype));
  int64_t n = tensor.desc.numBytes();
  if (n < 0 || static_cast<uint64_t>(n) != tensor.data.size())
    return Status::error("tensor data size does not match its shape");
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.desc.shape.size(); ++i)
    header += std::to_string(tensor.desc.shape[i]) + ",";
  if (tensor.desc.shape.size() > 1)
    header.pop_back();
  header += "), }";
  // Pad so the data starts 64-byte aligned; the header ends with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535)
    return Status::error("shape too long for a .npy v1 header");
  bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(tensor.data.begin(), tensor.data.end());
  return Status::ok();
}

Status writeNpy(const std::string &path, const HostTensor &tensor) {
  std::string bytes;
  Status s = formatNpy(tensor, bytes);
  if (!s)
    return s;
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out)
    return Status::error(path + ": cannot write");
  return Status::ok();
}

} // namespace kiln::rt
