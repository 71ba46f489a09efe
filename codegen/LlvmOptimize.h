//===- LlvmOptimize.h - LLVM's -O3 for both targets ------------*- C++ -*-===//
#ifndef KILN_CODEGEN_LLVMOPTIMIZE_H
#define KILN_CODEGEN_LLVMOPTIMIZE_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// Runs LLVM's standard -O3 module pipeline, tuned for `machine` (host CPU or NVPTX).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

} // namespace kiln

#endif // KILN_CODEGEN_LLVMOPTIMIZE_H
