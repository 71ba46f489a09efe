//===- LlvmModule.h - From LLVM-dialect kernels to an optimized module -*- C++ -*-===//
//
// What the host and cuda targets share once their kernels are in the LLVM dialect:
// translation to LLVM IR and LLVM's -O3 pipeline for the target machine.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_LLVMMODULE_H
#define KILN_CODEGEN_LLVMMODULE_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Location.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// Translates the LLVM-dialect ops of `body` (copied into a module of their own, so
/// that the plan and anything else stays behind) to LLVM IR. A function that did
/// not reach the LLVM dialect is an error naming the kernel.
std::unique_ptr<llvm::Module> translateLlvmOps(mlir::Block &body, mlir::Location loc,
                                               llvm::LLVMContext &context,
                                               std::string &error);

struct OptimizeOptions {
  /// Loops with more iterations than this are not fully unrolled (LLVM's default:
  /// by size alone). The host caps it: fully unrolling the batch and head loops
  /// around already vectorized bodies multiplied code size and compile time (GPT-2
  /// reduced at batch 8: 1.1 MB, 11 s) and bought no speed.
  std::optional<unsigned> fullUnrollMaxCount;
};

/// Runs LLVM's standard -O3 module pipeline, tuned for `machine` (host CPU or NVPTX).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const OptimizeOptions &options = {});

} // namespace kiln

#endif // KILN_CODEGEN_LLVMMODULE_H
