//===- LlvmModule.cpp - From LLVM-dialect kernels to machine code ---------===//
//
// This file implements what the host and cuda kernel writers share (LlvmModule.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/LlvmModule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Instrumentation/ThreadSanitizer.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace kiln {

std::unique_ptr<llvm::Module> translateLlvmOps(Block &body, Location loc,
                                               llvm::LLVMContext &context,
                                               std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  loc.getContext()->appendDialectRegistry(registry);

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

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const std::string &triple, const std::string &cpu,
                    const std::string &features, std::optional<llvm::Reloc::Model> reloc,
                    std::string &error, bool fuseMultiplyAdd) {
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "this LLVM has no backend for " + triple + ": " + lookupError;
    return nullptr;
  }
  llvm::TargetOptions options;
  if (fuseMultiplyAdd)
    options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, options, reloc,
                                  std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = "cannot create a target machine for " + triple + " (" + cpu + ")";
  return machine;
}

void setTarget(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
}

namespace {
/// Marks the innermost loops that extend or truncate half values with
/// llvm.loop.vectorize.enable (OptimizeOptions::vectorizeHalfLoops); the
/// vectorizer still checks legality and picks the width.
struct ForceHalfLoopVectorization : llvm::PassInfoMixin<ForceHalfLoopVectorization> {
  llvm::PreservedAnalyses run(llvm::Function &f, llvm::FunctionAnalysisManager &fam) {
    llvm::LoopInfo &loops = fam.getResult<llvm::LoopAnalysis>(f);
    llvm::LLVMContext &ctx = f.getContext();
    // As wide as a vector register of floats (what the f32 loops get): the
    // vectorizer's own choice for these, 4 x 4 interleaved, leaves a scalar
    // remainder of 8 from 56, where most of the time went.
    uint64_t width =
        fam.getResult<llvm::TargetIRAnalysis>(f)
            .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
            .getFixedValue() / 32;
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost() || !loop->getLoopLatch())
        continue;
      bool converts = llvm::any_of(loop->blocks(), [](llvm::BasicBlock *block) {
        return llvm::any_of(*block, [](llvm::Instruction &inst) {
          return (llvm::isa<llvm::FPExtInst>(inst) &&
                  inst.getOperand(0)->getType()->getScalarType()->isHalfTy()) ||
                 (llvm::isa<llvm::FPTruncInst>(inst) &&
                  inst.getType()->getScalarType()->isHalfTy());
        });
      });
      // A call the vectorizer cannot widen (libm's erff, say) keeps the loop
      // scalar whatever the metadata says, and a forced loop it cannot vectorize
      // is a warning to the user: leave those loops alone.
      bool opaqueCall = llvm::any_of(loop->blocks(), [](llvm::BasicBlock *block) {
        return llvm::any_of(*block, [](llvm::Instruction &inst) {
          auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
          return call && !llvm::isTriviallyVectorizable(call->getIntrinsicID());
        });
      });
      if (!converts || opaqueCall)
        continue;
      llvm::Metadata *enable[] = {
          llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
          llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx))};
      llvm::Metadata *vf[] = {llvm::MDString::get(ctx, "llvm.loop.vectorize.width"),
                              llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                  llvm::Type::getInt32Ty(ctx), std::max<uint64_t>(width, 1)))};
      loop->setLoopID(llvm::makePostTransformationMetadata(
          ctx, loop->getLoopID(), {},
          {llvm::MDNode::get(ctx, enable), llvm::MDNode::get(ctx, vf)}));
    }
    return llvm::PreservedAnalyses::all();
  }
};
} // namespace

namespace {
/// An LLVM command-line flag given for one compile and taken back after, for the
/// passes that have no other knob. It leaves a flag the process was given alone.
class ScopedFlag {
public:
  ScopedFlag(llvm::StringRef name, llvm::StringRef value) {
    llvm::cl::Option *o = llvm::cl::getRegisteredOptions().lookup(name);
    if (o && !o->getNumOccurrences() && !o->addOccurrence(0, o->ArgStr, value))
      option = o;
  }
  ~ScopedFlag() {
    if (option)
      option->reset();
  }
  ScopedFlag(const ScopedFlag &) = delete;
  ScopedFlag &operator=(const ScopedFlag &) = delete;

private:
  llvm::cl::Option *option = nullptr;
};
} // namespace

/// LLVM's standard -O3 module pipeline, tuned for `machine`.
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           const OptimizeOptions &options) {
  // LLVM's full unroller has no tuning option, only its command-line flag.
  std::optional<ScopedFlag> fullUnroll;
  if (options.fullUnrollMaxCount)
    fullUnroll.emplace("unroll-full-max-count", std::to_string(*options.fullUnrollMaxCount));
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // As clang's -O3: the superword vectorizer too (off in a default PassBuilder); it
  // pairs f16 arithmetic into half2 instructions on cuda.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  if (options.vectorizeHalfLoops)
    pb.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
          fpm.addPass(ForceHalfLoopVectorization());
        });
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  if (options.threadSanitizer) {
    // The models link g++'s libtsan (-fsanitize=thread), which has no __tsan_memset
    // or __tsan_memcpy: memory intrinsics stay libc calls, which its interceptors
    // check.
    auto &registered = llvm::cl::getRegisteredOptions();
    auto memIntrinsics = registered.find("tsan-instrument-memintrinsics");
    if (memIntrinsics != registered.end())
      static_cast<llvm::cl::opt<bool> *>(memIntrinsics->second)->setValue(false);
    for (llvm::Function &f : module)
      if (!f.isDeclaration())
        f.addFnAttr(llvm::Attribute::SanitizeThread);
    mpm.addPass(llvm::ModuleThreadSanitizerPass());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::ThreadSanitizerPass()));
  }
  mpm.run(module, mam);
}

bool compileModule(llvm::Module &module, llvm::TargetMachine &machine,
                   const OptimizeOptions &options, llvm::CodeGenFileType type,
                   llvm::raw_pwrite_stream &out, std::string &error) {
  optimizeModule(module, machine, options);
  // The code generator's pipeline reads loop strength reduction's switch as a flag.
  std::optional<ScopedFlag> noStrengthReduce;
  if (!options.strengthReduce)
    noStrengthReduce.emplace("disable-lsr", "true");
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, out, nullptr, type)) {
    error = "the " + machine.getTargetTriple().str() + " backend cannot emit " +
            (type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly");
    return false;
  }
  codegen.run(module);
  return true;
}

} // namespace kiln
