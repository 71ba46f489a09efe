//===- CudaCodegen.cpp - The cuda target ----------------------------------===//
//
// This file implements the cuda codegen pipeline and PTX emission. After
// kiln-map-to-gpu, the gpu.module is lowered with upstream passes (affine/scf to
// cf, strided metadata, gpu + arith + memref + math to NVVM/LLVM with the bare
// pointer calling convention). emitPtx copies the module's LLVM-dialect contents
// into a module of their own, translates them to LLVM IR, links libdevice only if
// a function still needs it, runs the -O3 pipeline and the NVPTX backend.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/host/HostCodegen.h"

#include "codegen/LlvmModule.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

namespace {
struct GpuArch {
  const char *name;
  const char *ptxFeature; // the lowest PTX ISA that knows the architecture
};
constexpr GpuArch kArchs[] = {
    {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"}};

const GpuArch *findArch(const std::string &arch) {
  for (const GpuArch &a : kArchs)
    if (arch == a.name)
      return &a;
  return nullptr;
}

/// libdevice, for math functions that still call __nv_* after polynomial
/// expansion (f64 math, mostly). Searched only when needed.
std::string findLibdevice() {
  if (const char *env = std::getenv("KILN_LIBDEVICE"))
    return env;
  for (const char *p : {"/usr/local/cuda/nvvm/libdevice/libdevice.10.bc",
                        "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc",
                        "/usr/lib/cuda/nvvm/libdevice/libdevice.10.bc"})
    if (llvm::sys::fs::exists(p))
      return p;
  return "";
}
} // namespace

bool isSupportedGpuArch(const std::string &arch) { return findArch(arch) != nullptr; }

void buildCudaCodegenPipeline(OpPassManager &pm) {
  pm.addPass(createMapToGpu());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(createConvertSCFToCFPass());
  gpu.addPass(memref::createExpandStridedMetadataPass());
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(createCanonicalizerPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 64;
  gpu.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What gpu-to-nvvm leaves of math (fma from the polynomial expansions, ...) has
  // an LLVM intrinsic NVPTX selects.
  gpu.addPass(createConvertMathToLLVMPass());
  gpu.addPass(createReconcileUnrealizedCastsPass());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
}

bool emitPtx(ModuleOp module, const std::string &archName, std::string &ptx,
             std::string &error) {
  const GpuArch *arch = findArch(archName);
  if (!arch) {
    error = "unknown GPU architecture '" + archName + "' (sm_80, sm_86, sm_89, sm_90)";
    return false;
  }
  gpu::GPUModuleOp gpuModule;
  module.walk([&](gpu::GPUModuleOp m) { gpuModule = m; });
  if (!gpuModule) {
    error = "no gpu.module to translate (run the cuda codegen phase first)";
    return false;
  }
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateLlvmOps(*gpuModule.getBody(), module.getLoc(), llvmContext, error);
  if (!llvmModule)
    return false;
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "this LLVM has no NVPTX backend: " + lookupError;
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, arch->name, arch->ptxFeature, llvm::TargetOptions(), std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  // Math the polynomial expansions did not cover calls libdevice.
  std::vector<std::string> missing;
  llvm::StringSet<> kernelNames;
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty())
      missing.push_back(f.getName().str());
    else if (!f.isDeclaration())
      kernelNames.insert(f.getName());
  }
  if (!missing.empty()) {
    std::string path = findLibdevice();
    if (path.empty()) {
      error = "the kernels call " + missing.front() +
              ", which needs libdevice.10.bc (install the CUDA toolkit or set "
              "KILN_LIBDEVICE)";
      return false;
    }
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      error = "cannot read " + path;
      return false;
    }
    auto libdevice = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), llvmContext);
    if (!libdevice) {
      llvm::consumeError(libdevice.takeError());
      error = "cannot parse " + path;
      return false;
    }
    (*libdevice)->setTargetTriple(triple);
    (*libdevice)->setDataLayout(llvmModule->getDataLayout());
    if (llvm::Linker::linkModules(*llvmModule, std::move(*libdevice),
                                  llvm::Linker::LinkOnlyNeeded)) {
      error = "linking libdevice failed";
      return false;
    }
    // What came from libdevice is internal: only the kernels are entry points.
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration() && !kernelNames.contains(f.getName()))
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
    for (const std::string &name : missing)
      if (llvm::Function *f = llvmModule->getFunction(name); f && f->isDeclaration()) {
        error = "libdevice has no " + name;
        return false;
      }
  }
  optimizeModule(*llvmModule, *machine);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream out(text);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, out, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX backend cannot emit assembly";
    return false;
  }
  codegen.run(*llvmModule);
  ptx.assign(text.begin(), text.end());
  return true;
}

void buildCudaSimCodegenPipeline(OpPassManager &pm) {
  pm.addPass(createMapToGpu());
  pm.addPass(createSimulateGpu());
  buildHostCodegenPipeline(pm);
}

void registerCudaCodegenPasses() {
  registerPass([] { return createMapToGpu(); });
  registerPass([] { return createSimulateGpu(); });
}

} // namespace kiln
