//===- LlvmModule.cpp - From LLVM-dialect kernels to an optimized module --===//
#include "codegen/LlvmModule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace kiln {

std::unique_ptr<llvm::Module> translateLlvmOps(Block &body, Location loc,
                                               llvm::LLVMContext &context,
                                               std::string &error) {
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(loc);
  OpBuilder b(kernels->getBodyRegion());
  for (Operation &op : body.getOperations()) {
    bool llvmOp = op.getDialect() && op.getDialect()->getNamespace() == "llvm";
    if (auto fn = dyn_cast<FunctionOpInterface>(op); fn && !llvmOp) {
      error = "kernel " + fn.getName().str() + " could not be lowered to LLVM";
      return nullptr;
    }
    if (llvmOp)
      b.clone(op);
  }
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(*kernels, context, "kiln_kernels");
  if (!module)
    error = "cannot translate the kernels to LLVM IR";
  return module;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const OptimizeOptions &options) {
  // LLVM's full unroller has no tuning option, only its command-line flag, which it
  // reads only when given: give it for this run, take it back after.
  llvm::cl::Option *fullUnroll =
      llvm::cl::getRegisteredOptions().lookup("unroll-full-max-count");
  bool capped = fullUnroll && options.fullUnrollMaxCount && !fullUnroll->getNumOccurrences() &&
                !fullUnroll->addOccurrence(0, fullUnroll->ArgStr,
                                           std::to_string(*options.fullUnrollMaxCount));
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
  if (capped)
    fullUnroll->reset();
}

} // namespace kiln
