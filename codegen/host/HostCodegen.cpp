//===- HostCodegen.cpp - The host target ----------------------------------===//
//
// This file implements the host codegen phase and object emission. Kernels are
// lowered linalg -> loops -> cf -> LLVM dialect; math functions without an LLVM
// intrinsic become libm calls (the model library links -lm). The object holds one
// external C function per kernel, each taking one pointer per buffer.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostCodegen.h"
#include "codegen/LlvmModule.h"
#include "codegen/Passes.h"
#include "codegen/host/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace kiln {

void buildHostCodegenPipeline(OpPassManager &pm, bool parallel) {
  // Math as arithmetic first: its expansions (integer pow's loop) lower with the
  // kernels' own loops.
  pm.addPass(createExpandMath());
  pm.nest<func::FuncOp>().addPass(createHostLoopOrder());
  if (parallel) {
    pm.nest<func::FuncOp>().addPass(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createHostParallel());
  } else {
    pm.nest<func::FuncOp>().addPass(createConvertLinalgToLoopsPass());
  }
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createLowerAffinePass());
  funcs.addPass(createConvertSCFToCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createExpandHostBf16());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Vector ops come only from cuda-sim (the tensor-core kernels' fragments).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

bool emitHostObject(ModuleOp module, const std::string &path,
                    const std::string &symbolPrefix, const std::string &cpu,
                    std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  // Forcing f16 loops to vectorize (OptimizeOptions::vectorizeHalfLoops) is a hint:
  // where LLVM cannot, its "loop not vectorized" warning says nothing to a user.
  // Errors and other warnings go to stderr as LLVM's default handler writes them.
  llvmContext.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *) {
        if (info->getKind() == llvm::DK_OptimizationFailure ||
            info->getSeverity() == llvm::DS_Remark || info->getSeverity() == llvm::DS_Note)
          return;
        llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
        llvm::errs() << (info->getSeverity() == llvm::DS_Error ? "error: " : "warning: ");
        info->print(printer);
        llvm::errs() << "\n";
      },
      nullptr);
  std::unique_ptr<llvm::Module> llvmModule =
      translateLlvmOps(*module.getBody(), module.getLoc(), llvmContext, error);
  if (!llvmModule)
    return false;
  // A named model's kernels (and any other symbol it defines for the generated
  // code to link) carry its prefix.
  if (!symbolPrefix.empty()) {
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration() && f.hasExternalLinkage())
        f.setName(symbolPrefix + f.getName());
    for (llvm::GlobalVariable &g : llvmModule->globals())
      if (!g.isDeclaration() && g.hasExternalLinkage())
        g.setName(symbolPrefix + g.getName());
  }
  // "native": this CPU with the features it has, not those its model name implies
  // (a virtual machine may hide AVX-512 from a CPU that has it).
  std::string cpuName = cpu, features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") + std::string(enabled ? "+" : "-") +
                  feature.str();
  }
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(
      llvm::sys::getDefaultTargetTriple(), cpuName, features, llvm::Reloc::PIC_, error);
  if (!machine)
    return false;
  setTarget(*llvmModule, *machine);
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  OptimizeOptions optimize;
  optimize.fullUnrollMaxCount = 4;
  optimize.strengthReduce = false;
  optimize.vectorizeHalfLoops = machine->getTargetTriple().isX86() &&
                                machine->getMCSubtargetInfo()->checkFeatures("+f16c");
#ifdef KILN_SANITIZE_THREAD
  optimize.threadSanitizer = true;
#endif
  return compileModule(*llvmModule, *machine, optimize, llvm::CodeGenFileType::ObjectFile,
                       out, error);
}

} // namespace kiln
