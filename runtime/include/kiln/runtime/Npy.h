//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1-3, C order, little-endian), the
// format `kiln run` takes inputs in and writes outputs to.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_NPY_H
#define KILN_RUNTIME_NPY_H

#include "kiln/runtime/Tensor.h"

namespace kiln::rt {

struct HostTensor {
  TensorDesc desc;
  std::vector<char> data;
};

/// Parses .npy bytes. Fails on Fortran order, big-endian or unknown dtypes, and on
/// data shorter or longer than the header declares.
Status parseNpy(const std::string &bytes, HostTensor &out);
Status readNpy(const std::string &path, HostTensor &out);

/// Serializes `tensor` as .npy version 1.0 (bfloat16 as uint16 bit patterns).
Status formatNpy(const HostTensor &tensor, std::string &bytes);
Status writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace kiln::rt

#endif // KILN_RUNTIME_NPY_H
