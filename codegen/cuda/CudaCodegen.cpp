//===- CudaCodegen.cpp - The cuda target ----------------------------------===//
//
// This file implements the cuda codegen pipeline and PTX emission. After
// kiln-map-to-gpu (for the architecture its gpu-arch option names) and
// kiln-expand-math, the gpu.module is lowered with upstream passes (affine/scf
// to cf, strided metadata, gpu + arith + memref + math to NVVM/LLVM with the bare
// pointer calling convention; nvgpu's mma.sync to NVVM's). emitPtx copies the module's LLVM-dialect contents
// into a module of their own, translates them to LLVM IR, links libdevice only if
// a function still needs it, and compiles for the chip and PTX features of the
// gpu.module's #nvvm.target.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCodegen.h"

#include "codegen/LlvmModule.h"
#include "codegen/Passes.h"
#include "codegen/cuda/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>

using namespace mlir;

namespace kiln {

namespace {
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

void buildGpuMappingPipeline(OpPassManager &pm, const std::string &gpuArch, bool tensorCores) {
  MapToGpuOptions options;
  options.gpuArch = gpuArch;
  options.tensorCores = tensorCores;
  pm.addPass(createMapToGpu(options));
  pm.addNestedPass<gpu::GPUModuleOp>(createExpandMath());
}

void buildCudaCodegenPipeline(OpPassManager &pm) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(createConvertSCFToCFPass());
  gpu.addPass(memref::createExpandStridedMetadataPass());
  gpu.addPass(createLowerAffinePass());
  gpu.addPass(createCanonicalizerPass());
  // The tensor-core kernels' nvgpu.mma.sync → nvvm.mma.sync (their vector
  // fragments are lowered with the rest by convert-gpu-to-nvvm).
  gpu.addPass(createConvertNVGPUToNVVMPass());
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

bool emitPtx(ModuleOp module, std::string &ptx, std::string &error) {
  gpu::GPUModuleOp gpuModule;
  module.walk([&](gpu::GPUModuleOp m) { gpuModule = m; });
  if (!gpuModule) {
    error = "no gpu.module to translate (run the cuda codegen phase first)";
    return false;
  }
  NVVM::NVVMTargetAttr target;
  if (ArrayAttr targets = gpuModule.getTargetsAttr(); targets && targets.size() == 1)
    target = dyn_cast<NVVM::NVVMTargetAttr>(targets[0]);
  if (!target) {
    error = "gpu.module @" + gpuModule.getName().str() +
            " has no #nvvm.target (kiln-map-to-gpu sets it)";
    return false;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateLlvmOps(*gpuModule.getBody(), module.getLoc(), llvmContext, error);
  if (!llvmModule)
    return false;
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(target.getTriple().str(), target.getChip().str(),
                          target.getFeatures().str(), std::nullopt, error,
                          /*fuseMultiplyAdd=*/true);
  if (!machine)
    return false;
  setTarget(*llvmModule, *machine);
  const std::string triple = target.getTriple().str();

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
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream out(text);
  if (!compileModule(*llvmModule, *machine, OptimizeOptions(),
                     llvm::CodeGenFileType::AssemblyFile, out, error))
    return false;
  ptx.assign(text.begin(), text.end());
  return true;
}

} // namespace kiln
