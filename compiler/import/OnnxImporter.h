//===- OnnxImporter.h - ONNX model -> onnx dialect ---------------*- C++ -*-===//
//
// The import phase: a checked, shape-inferred ModelProto (see ModelLoader.h) becomes
// a module holding `func.func @main_graph` in the onnx dialect.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNXIMPORTER_H
#define KILN_COMPILER_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace kiln {

struct ImportOptions {
  /// Constants of more bytes than this become dense resources (printed once, at
  /// the end of the module, and elided by `kiln import` unless asked for).
  int64_t resourceThresholdBytes = 256;
  /// Such resources point into the ModelProto's raw data instead of holding a
  /// copy (where it is aligned): the caller keeps the ModelProto alive as long as
  /// the MLIRContext.
  bool borrowRawData = false;
};

/// Imports `model` (already loaded and checked). `fileName` names the model in
/// locations and errors. On failure returns null and sets `error` to one line.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext &context, const ::onnx::ModelProto &model,
                const std::string &fileName, const ImportOptions &options,
                std::string &error);

/// Registers the dialects the imported IR uses (func, onnx).
void registerImportDialects(mlir::DialectRegistry &registry);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNXIMPORTER_H
