//===- FuzzModel.cpp - libFuzzer target: model bytes -> module or error ---===//
//
// Bytes as an ONNX model (binary protobuf, or with KILN_FUZZ_TEXT the ONNX text
// syntax) through the loader (parse, training-op expansion, checker, libonnx's
// inference) and the importer (MLIR, verified). Every input must end in a module
// or one clean error; a crash, a sanitizer report or a hang is a bug.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "onnx/onnx_pb.h"

#include <cstdio>
#include <cstdlib>

#ifdef KILN_FUZZ_TEXT
static const char *kName = "fuzz.onnxtxt";
#else
static const char *kName = "fuzz.onnx";
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    kiln::registerImportDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    // Diagnostics are part of a clean error, not output.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  std::string bytes(reinterpret_cast<const char *>(data), size);
  onnx::ModelProto model;
  std::string error;
  kiln::LoadOptions options;
  if (!kiln::loadOnnxModelFromMemory(bytes, kName, options, model, error)) {
    if (error.empty() || error.find('\n') != std::string::npos) {
      std::fprintf(stderr, "a load error must be one non-empty line: '%s'\n", error.c_str());
      std::abort();
    }
    return 0;
  }
  kiln::ImportOptions importOptions;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      kiln::importOnnxModel(*context, model, kName, importOptions, error);
  if (!module) {
    if (error.empty() || error.find('\n') != std::string::npos) {
      std::fprintf(stderr, "an import error must be one non-empty line: '%s'\n", error.c_str());
      std::abort();
    }
    return 0;
  }
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "the importer returned a module that does not verify\n");
    std::abort();
  }
  return 0;
}
