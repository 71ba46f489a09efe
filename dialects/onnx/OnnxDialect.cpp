//===- OnnxDialect.cpp - The onnx dialect ---------------------------------===//
//
// This file implements the onnx dialect's registration. The op definitions live in
// generated shards (see CMakeLists.txt); hand-written verifiers in OnnxVerifiers.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"

using namespace mlir;
using namespace kiln::onnx;

#include "dialects/onnx/OnnxDialect.cpp.inc"
#include "dialects/onnx/OnnxInterfaces.cpp.inc"

void OnnxDialect::initialize() { registerOnnxDialectOperations(this); }
