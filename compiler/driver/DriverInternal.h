//===- DriverInternal.h - What the driver's files share ---------*- C++ -*-===//
//
// Internal to compiler/driver: model loading (Driver.cpp), `kiln compare`'s ONNX
// rewrites (CompareRewrites.cpp) and IR printing (PrintIR.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_DRIVERINTERNAL_H
#define KILN_COMPILER_DRIVER_DRIVERINTERNAL_H

#include "compiler/driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"

#include <string>

namespace onnx {
class ModelProto;
class GraphProto;
} // namespace onnx

namespace kiln {

/// Reads, checks and shape-infers the model, with its inputs pinned, and applies
/// `kiln compare`'s rewrites.
bool loadModel(const ModelInput &input, onnx::ModelProto &model, std::string &error);

/// `kiln compare`'s rewrites of a loaded model (ModelInput::exposeAllTensors and
/// ::injectFault), at the ONNX level so that every target sees the same graph.
bool rewriteForCompare(const ModelInput &input, onnx::ModelProto &model,
                       std::string &error);

/// Prints `module` to `path` ("" or "-": stdout), with or without the weights'
/// bytes.
bool printModule(mlir::ModuleOp module, const std::string &path, bool printWeights,
                 const mlir::OpPrintingFlags &flags, std::string &error);

/// The nodes of `graph`, its subgraphs' included.
int64_t countNodes(const onnx::GraphProto &graph);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DRIVERINTERNAL_H
