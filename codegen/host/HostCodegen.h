//===- HostCodegen.h - The host target ------------------------*- C++ -*-===//
//
// The host target lowers every outlined kernel function to loops, then to the LLVM
// dialect (bare-pointer calling convention: one pointer per buffer), and compiles
// them in-process to a native object file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_HOSTCODEGEN_H
#define KILN_CODEGEN_HOST_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace kiln {

/// Kernels (bufferized func.func over memrefs) -> LLVM dialect. The kiln.plan is
/// left alone. With `parallel`, kernels' outermost parallel loops run on the
/// runtime's thread pool (kiln-host-parallel).
void buildHostCodegenPipeline(mlir::OpPassManager &pm, bool parallel);

/// Translates the module's LLVM-dialect functions to LLVM IR, optimizes at -O3 for
/// `cpu` ("native" for this machine) and writes an object file.
bool emitHostObject(mlir::ModuleOp module, const std::string &path,
                    const std::string &symbolPrefix,
                    const std::string &cpu, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTCODEGEN_H
