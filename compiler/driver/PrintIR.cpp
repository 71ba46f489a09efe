//===- PrintIR.cpp - Printing a phase's IR --------------------------------===//
//
// This file implements printModule (DriverInternal.h): what `kiln import` and
// `kiln compile --compile-to=PHASE` print.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/DriverInternal.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace kiln {

/// Prints `module` with the bytes of its dense resources left out. MLIR 19's
/// elideLargeResourceString still renders every blob as hex before dropping it,
/// which costs seconds on large models; instead the blobs are swapped out for the
/// duration of the print and the (then empty) resource section is cut.
static void printWithoutWeights(mlir::ModuleOp module, const mlir::OpPrintingFlags &flags,
                         llvm::raw_ostream &os) {
  std::vector<std::pair<mlir::AsmResourceBlob *, mlir::AsmResourceBlob>> saved;
  uint64_t bytes = 0;
  llvm::DenseSet<mlir::AsmResourceBlob *> seen;
  module.walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute attr : op->getAttrs()) {
      auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(attr.getValue());
      if (!resource)
        continue;
      mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob || !seen.insert(blob).second)
        continue;
      bytes += blob->getData().size();
      saved.emplace_back(blob, std::move(*blob));
      *blob = mlir::AsmResourceBlob();
    }
  });
  std::string text;
  llvm::raw_string_ostream textOs(text);
  module->print(textOs, flags);
  for (auto &[blob, original] : saved)
    *blob = std::move(original);
  size_t resources = text.find("\n{-#\n");
  if (resources != std::string::npos)
    text.resize(resources);
  os << text << "\n";
  if (!saved.empty())
    os << "// " << saved.size() << " weight tensors ("
       << llvm::format("%.2f", bytes / 1048576.0)
       << " MiB) elided; --print-weights prints them\n";
}

/// Prints `module` to `path` ("" or "-": stdout), with or without weights.
bool printModule(mlir::ModuleOp module, const std::string &path, bool printWeights,
                 const mlir::OpPrintingFlags &flags, std::string &error) {
  std::error_code ec;
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (!path.empty() && path != "-") {
    file = std::make_unique<llvm::raw_fd_ostream>(path, ec);
    if (ec) {
      error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
  }
  llvm::raw_ostream &os = file ? *file : llvm::outs();
  if (printWeights) {
    module->print(os, flags);
    os << "\n";
  } else {
    printWithoutWeights(module, flags, os);
  }
  return true;
}

} // namespace kiln
