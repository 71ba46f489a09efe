//===- CudaCodegen.cpp - The cuda target ----------------------------------===//
//
// This file implements the cuda codegen pipeline and PTX emission. After
// kiln-map-to-gpu (for the architecture its gpu-arch option names) and
// kiln-expand-math, the gpu.module is lowered with upstream passes (affine/scf
// to cf, strided metadata, gpu + arith + memref + math to NVVM/LLVM with the bare
// pointer calling convention; nvgpu's mma.sync to NVVM's). emitPtx copies the module's LLVM-dialect contents
// into a module of their own, translates them to LLVM IR and splits it into one
// module per kernel; each is compiled for the chip and PTX features of the
// gpu.module's #nvvm.target on a thread of its own (libdevice linked only where a
// kernel still needs it), and the parts' PTX is concatenated in kernel order. When
// it emits, the phase starts with kiln-take-cached-kernels: a kernel whose key (its
// IR as mapped, the target, the lowering pipeline, LLVM's version and Kiln's PTX
// form) is in the kernel cache is neither lowered nor translated; emitPtx takes
// its PTX from the cache, and writes there the PTX of the others.
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
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
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
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

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

void buildGpuMappingPipeline(OpPassManager &pm, const std::string &gpuArch,
                             const GpuOptions &gpu) {
  MapToGpuOptions options;
  options.gpuArch = gpuArch;
  options.tensorCores = gpu.tensorCores;
  options.tensorCoreMinSize = gpu.tensorCoreMinSize;
  options.tf32 = gpu.allowTf32;
  pm.addPass(createMapToGpu(options));
  pm.addNestedPass<gpu::GPUModuleOp>(createExpandMath());
}

namespace {
/// The lowering of a gpu.module's mapped kernels to NVVM and the LLVM dialect.
/// Every kernel's cache key holds its description (kiln-take-cached-kernels).
void addKernelLowering(OpPassManager &gpu) {
  // Kernel by kernel (MLIR runs a nested pipeline on the kernels in parallel).
  OpPassManager &kernels = gpu.nest<gpu::GPUFuncOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createCanonicalizerPass());
  // The tensor-core kernels' nvgpu.mma.sync → nvvm.mma.sync (their vector
  // fragments are lowered with the rest by convert-gpu-to-nvvm).
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 64;
  gpu.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What gpu-to-nvvm leaves of math (fma from the polynomial expansions, ...) has
  // an LLVM intrinsic NVPTX selects.
  OpPassManager &lowered = gpu.nest<LLVM::LLVMFuncOp>();
  // NVVM ops without an LLVM intrinsic for their form (cp.async with a source size,
  // the zero-filling copy past an operand's end) → inline PTX; translating them
  // directly would drop the size.
  lowered.addPass(createConvertNVVMToLLVMPass());
  lowered.addPass(createConvertMathToLLVMPass());
  lowered.addPass(createReconcileUnrealizedCastsPass());
  lowered.addPass(createCanonicalizerPass());
  lowered.addPass(createCSEPass());
}
} // namespace

void buildCudaCodegenPipeline(OpPassManager &pm, const std::string &cacheDir) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  if (!cacheDir.empty()) {
    OpPassManager described(gpu::GPUModuleOp::getOperationName());
    addKernelLowering(described);
    TakeCachedKernelsOptions take;
    take.cacheDir = cacheDir;
    llvm::raw_string_ostream os(take.pipeline);
    described.printAsTextualPipeline(os);
    os.flush();
    gpu.addPass(createTakeCachedKernels(take));
  }
  addKernelLowering(gpu);
}

namespace {
/// Bump when what turns a kernel's LLVM IR into PTX changes in Kiln (the
/// optimization options, the renaming below) or a Kiln pass in the kernel
/// lowering changes: cached PTX of the old form is then never found.
constexpr const char *kPtxCacheFormat = "kiln-ptx-2";
} // namespace

std::string kernelCacheContext() {
  return std::string(LLVM_VERSION_STRING) + "\n" + kPtxCacheFormat + "\n" + findLibdevice();
}

std::string kernelCacheKey(gpu::GPUFuncOp fn, llvm::StringRef shared) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fn->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  os.flush();
  llvm::SHA256 hash;
  hash.update(text);
  hash.update(llvm::ArrayRef<uint8_t>{0});
  hash.update(shared);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::string kernelCacheDir() {
  if (const char *env = std::getenv("KILN_KERNEL_CACHE"))
    return llvm::StringRef(env) == "off" ? "" : env;
  llvm::SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(dir, home, ".cache");
  else
    return "";
  llvm::sys::path::append(dir, "kiln", "kernels");
  return std::string(dir);
}

namespace {

/// ptxas for `ptxas -v` statistics: $KILN_PTXAS ("off": none), else the CUDA
/// toolkit's or PATH's; empty when there is none.
std::string findPtxas() {
  if (const char *env = std::getenv("KILN_PTXAS"))
    return llvm::StringRef(env) == "off" ? "" : env;
  if (auto p = llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *p;
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

/// One kernel: its LLVM IR alone in a module (bitcode), compiled on a thread of
/// its own in an LLVMContext of its own.
struct KernelPart {
  std::string name;
  llvm::SmallVector<char, 0> bitcode;
  std::string key; // the cache key (hex), empty without a cache
  std::string ptx, error;
  bool cached = false;
  /// ptxas -v's statistics (found: from the cache or a run; fresh: from a run, to
  /// be cached).
  KernelResources resources;
  bool assembled = false, freshlyAssembled = false;
};

/// The number before `what` in `log` ("Used 70 registers"), or 0.
int64_t numberBefore(llvm::StringRef log, llvm::StringRef what) {
  size_t at = log.find(what);
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef head = log.take_front(at).rtrim();
  size_t start = head.find_last_not_of("0123456789");
  int64_t value = 0;
  head.drop_front(start == llvm::StringRef::npos ? 0 : start + 1).getAsInteger(10, value);
  return value;
}

/// Assembles `part.ptx` with `ptxas -v` for `chip` and reads its statistics; an
/// error when ptxas rejects the PTX.
void assemblePart(KernelPart &part, const std::string &ptxas, llvm::StringRef chip) {
  llvm::SmallString<128> ptxFile, logFile, cubin;
  if (llvm::sys::fs::createTemporaryFile("kiln-" + part.name, "ptx", ptxFile) ||
      llvm::sys::fs::createTemporaryFile("kiln-" + part.name, "log", logFile) ||
      llvm::sys::fs::createTemporaryFile("kiln-" + part.name, "cubin", cubin))
    return;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxFile, ec);
    os << part.ptx;
  }
  std::string arch = "-arch=" + chip.str();
  llvm::StringRef args[] = {ptxas, arch, "-v", ptxFile, "-o", cubin};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logFile),
                                                llvm::StringRef(logFile)};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  auto log = llvm::MemoryBuffer::getFile(logFile);
  std::string text = log ? (*log)->getBuffer().str() : "";
  for (llvm::StringRef f : {llvm::StringRef(ptxFile), llvm::StringRef(logFile),
                            llvm::StringRef(cubin)})
    llvm::sys::fs::remove(f);
  if (rc != 0) {
    part.error = "ptxas rejects kernel " + part.name + " for " + chip.str() + ": " +
                 llvm::StringRef(text).trim().str();
    return;
  }
  KernelResources &r = part.resources;
  r.name = part.name;
  r.registers = numberBefore(text, " registers");
  r.sharedBytes = numberBefore(text, " bytes smem");
  r.stackBytes = numberBefore(text, " bytes stack frame");
  r.spillStores = numberBefore(text, " bytes spill stores");
  r.spillLoads = numberBefore(text, " bytes spill loads");
  part.assembled = part.freshlyAssembled = true;
}

/// Compiles `part` to PTX: libdevice linked where it calls it (then internal),
/// every name not the kernel's own prefixed with it, so that the parts' PTX
/// concatenate without clashes.
void compilePart(KernelPart &part, const NVVM::NVVMTargetAttr &target,
                 const llvm::MemoryBuffer *libdevice) {
  llvm::LLVMContext context;
  auto parsed = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(part.bitcode.data(), part.bitcode.size()),
                            part.name),
      context);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    part.error = "cannot read back kernel " + part.name;
    return;
  }
  std::unique_ptr<llvm::Module> module = std::move(*parsed);
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(target.getTriple().str(), target.getChip().str(),
                          target.getFeatures().str(), std::nullopt, part.error,
                          /*fuseMultiplyAdd=*/true);
  if (!machine)
    return;
  setTarget(*module, *machine);
  std::vector<std::string> missing;
  for (llvm::Function &f : *module)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty())
      missing.push_back(f.getName().str());
  if (!missing.empty()) {
    if (!libdevice) {
      part.error = "the kernels call " + missing.front() +
                   ", which needs libdevice.10.bc (install the CUDA toolkit or set "
                   "KILN_LIBDEVICE)";
      return;
    }
    auto lib = llvm::parseBitcodeFile(libdevice->getMemBufferRef(), context);
    if (!lib) {
      llvm::consumeError(lib.takeError());
      part.error = "cannot parse " + libdevice->getBufferIdentifier().str();
      return;
    }
    (*lib)->setTargetTriple(module->getTargetTriple());
    (*lib)->setDataLayout(module->getDataLayout());
    if (llvm::Linker::linkModules(*module, std::move(*lib), llvm::Linker::LinkOnlyNeeded)) {
      part.error = "linking libdevice failed";
      return;
    }
    for (const std::string &name : missing)
      if (llvm::Function *f = module->getFunction(name); f && f->isDeclaration()) {
        part.error = "libdevice has no " + name;
        return;
      }
  }
  // What came from libdevice is internal: only the kernel is an entry point.
  for (llvm::Function &f : *module)
    if (!f.isDeclaration() && f.getName() != part.name) {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      f.setName(part.name + "_" + f.getName());
    }
  for (llvm::GlobalVariable &g : module->globals())
    if (g.hasLocalLinkage() || !g.isDeclaration())
      if (!g.getName().starts_with(part.name))
        g.setName(part.name + "_" + g.getName());
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream out(text);
  if (!compileModule(*module, *machine, OptimizeOptions(), llvm::CodeGenFileType::AssemblyFile,
                     out, part.error))
    return;
  part.ptx.assign(text.begin(), text.end());
}

/// `ptx` without its header (comments, .version, .target, .address_size): what a
/// part adds after the first.
std::string bodyOf(const std::string &ptx) {
  size_t at = ptx.find(".address_size");
  if (at == std::string::npos)
    return ptx;
  at = ptx.find('\n', at);
  return at == std::string::npos ? "" : ptx.substr(at + 1);
}
} // namespace

bool emitPtx(ModuleOp module, std::string &ptx, std::string &error,
             std::vector<KernelResources> *resources, std::string *resourcesFrom) {
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

  // libdevice, read once where a kernel still calls a function (f64 math, mostly).
  std::unique_ptr<llvm::MemoryBuffer> libdevice;
  std::string libdevicePath;
  if (llvm::any_of(*llvmModule, [](llvm::Function &f) {
        return f.isDeclaration() && !f.isIntrinsic() && !f.use_empty();
      })) {
    libdevicePath = findLibdevice();
    if (!libdevicePath.empty()) {
      auto buffer = llvm::MemoryBuffer::getFile(libdevicePath);
      if (!buffer) {
        error = "cannot read " + libdevicePath;
        return false;
      }
      libdevice = std::move(*buffer);
    }
  }

  // The kernels in order: as kiln-take-cached-kernels recorded them (with their
  // cache keys; those it took out come from the cache), else the module's.
  std::vector<KernelPart> parts;
  std::string cacheDir;
  if (DictionaryAttr cache =
          KilnDialect::KernelCacheAttrHelper(module.getContext()).getAttr(gpuModule)) {
    cacheDir = cache.getAs<StringAttr>("dir").str();
    for (auto pair : cache.getAs<ArrayAttr>("kernels").getAsRange<ArrayAttr>()) {
      KernelPart part;
      part.name = cast<StringAttr>(pair[0]).str();
      part.key = cast<StringAttr>(pair[1]).str();
      part.cached = !llvmModule->getFunction(part.name);
      parts.push_back(std::move(part));
    }
  } else {
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration())
        parts.push_back({f.getName().str(), {}, "", "", "", false});
  }
  if (parts.empty()) {
    // A model without kernels (an Identity, a Shape): a PTX module with no entries.
    std::unique_ptr<llvm::TargetMachine> machine =
        createTargetMachine(target.getTriple().str(), target.getChip().str(),
                            target.getFeatures().str(), std::nullopt, error,
                            /*fuseMultiplyAdd=*/true);
    if (!machine)
      return false;
    setTarget(*llvmModule, *machine);
    llvm::SmallString<0> text;
    llvm::raw_svector_ostream out(text);
    if (!compileModule(*llvmModule, *machine, OptimizeOptions(),
                       llvm::CodeGenFileType::AssemblyFile, out, error))
      return false;
    ptx.assign(text.begin(), text.end());
    if (resources)
      resources->clear();
    if (resourcesFrom)
      *resourcesFrom = "no kernels";
    return true;
  }
  for (KernelPart &part : parts) {
    if (part.cached) {
      llvm::SmallString<256> file(cacheDir);
      llvm::sys::path::append(file, part.key + ".ptx");
      auto cached = llvm::MemoryBuffer::getFile(file);
      if (!cached || (*cached)->getBuffer().empty()) {
        error = "kernel " + part.name + ": its cached PTX " + std::string(file) +
                " went away during the compile (compile again)";
        return false;
      }
      part.ptx = (*cached)->getBuffer().str();
      continue;
    }
    // One module per kernel: every global cloned, then what the kernel does not
    // use dropped (other kernels' shared memory, their declarations).
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> alone =
        llvm::CloneModule(*llvmModule, map, [&](const llvm::GlobalValue *gv) {
          return !isa<llvm::Function>(gv) || gv->getName() == part.name;
        });
    for (llvm::GlobalVariable &g : llvm::make_early_inc_range(alone->globals()))
      if (g.use_empty())
        g.eraseFromParent();
    for (llvm::Function &f : llvm::make_early_inc_range(*alone))
      if (f.isDeclaration() && f.use_empty())
        f.eraseFromParent();
    llvm::raw_svector_ostream os(part.bitcode);
    llvm::WriteBitcodeToFile(*alone, os);
  }
  llvmModule.reset();

  // The kernels not cached, compiled a thread per core.
  std::atomic<size_t> next{0};
  std::string ptxas = resources ? findPtxas() : "";
  auto statsFile = [&](const KernelPart &part) {
    llvm::SmallString<256> file(cacheDir);
    llvm::sys::path::append(file, part.key + ".ptxas");
    return std::string(file);
  };
  if (!ptxas.empty() && !cacheDir.empty())
    for (KernelPart &part : parts) {
      if (!part.cached)
        continue;
      // ptxas's statistics of a cached kernel: its path, then the five numbers.
      auto cached = llvm::MemoryBuffer::getFile(statsFile(part));
      if (!cached)
        continue;
      auto [path, numbers] = (*cached)->getBuffer().split('\n');
      KernelResources &r = part.resources;
      r.name = part.name;
      part.assembled = path == ptxas &&
                       sscanf(numbers.str().c_str(), "%ld %ld %ld %ld %ld", &r.registers,
                              &r.sharedBytes, &r.stackBytes, &r.spillStores,
                              &r.spillLoads) == 5;
    }
  auto work = [&] {
    for (size_t i = next++; i < parts.size(); i = next++) {
      if (!parts[i].cached)
        compilePart(parts[i], target, libdevice.get());
      if (!ptxas.empty() && parts[i].error.empty() && !parts[i].assembled)
        assemblePart(parts[i], ptxas, target.getChip());
    }
  };
  unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                      static_cast<unsigned>(parts.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();

  ptx.clear();
  if (resources) {
    resources->clear();
    if (resourcesFrom)
      *resourcesFrom = ptxas.empty() ? "no ptxas (KILN_PTXAS, /usr/local/cuda/bin, PATH)"
                                     : "ptxas " + target.getChip().str();
  }
  for (KernelPart &part : parts) {
    if (!part.error.empty()) {
      error = part.error;
      return false;
    }
    ptx += &part == &parts.front() ? part.ptx : bodyOf(part.ptx);
    part.resources.tensorCores = part.ptx.find("mma.sync") != std::string::npos;
    if (resources && part.assembled)
      resources->push_back(part.resources);
    if (part.key.empty())
      continue;
    if (part.freshlyAssembled && !llvm::sys::fs::create_directories(cacheDir)) {
      const KernelResources &r = part.resources;
      std::error_code ec;
      llvm::raw_fd_ostream os(statsFile(part), ec);
      if (!ec)
        os << ptxas << "\n"
           << r.registers << " " << r.sharedBytes << " " << r.stackBytes << " "
           << r.spillStores << " " << r.spillLoads << "\n";
    }
    if (part.cached)
      continue;
    // Written whole under a temporary name, then renamed: a reader never sees
    // half a file. A cache that cannot be written is no error.
    if (llvm::sys::fs::create_directories(cacheDir))
      continue;
    llvm::SmallString<256> file(cacheDir), temp;
    llvm::sys::path::append(file, part.key + ".ptx");
    int fd;
    if (llvm::sys::fs::createUniqueFile(file + ".%%%%%%.tmp", fd, temp))
      continue;
    {
      llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
      out << part.ptx;
    }
    if (llvm::sys::fs::rename(temp, file))
      llvm::sys::fs::remove(temp);
  }
  return true;
}

} // namespace kiln
