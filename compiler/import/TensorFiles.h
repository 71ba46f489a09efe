//===- TensorFiles.h - Tensors from .npy and ONNX TensorProto files -*- C++ -*-===//
//
// The tensor files a user hands Kiln (`kiln run --input`, `kiln compare`): NumPy
// .npy and ONNX TensorProto .pb. Both come from outside, so every size is checked
// against the bytes present before anything is allocated; a bad file is an error
// naming it, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_TENSORFILES_H
#define KILN_COMPILER_IMPORT_TENSORFILES_H

#include "kiln/runtime/Npy.h"

#include <string>

namespace kiln {

/// Parses a serialized ONNX TensorProto; `what` names it in errors.
bool parseTensorProto(const std::string &bytes, const std::string &what,
                      rt::HostTensor &out, std::string &err);

/// Reads a .npy (by extension) or an ONNX TensorProto .pb file.
bool readTensorFile(const std::string &path, rt::HostTensor &out, std::string &err);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFILES_H
