//===- Pipeline.cpp - Kiln's named phases ---------------------------------===//
//
// This file implements the phase pipelines. The plan phase also bufferizes the
// outlined kernels (one-shot, writing straight into the plan's buffers), so that
// codegen receives target-independent memref kernels plus the plan; the codegen
// phase is the target's own (codegen/Target.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxDialect.h"
#include "passes/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

std::optional<Phase> parsePhase(const std::string &name) {
  for (Phase p : {Phase::Import, Phase::Graph, Phase::Tensor, Phase::Kernels,
                  Phase::Plan, Phase::Codegen, Phase::Emit})
    if (name == phaseName(p))
      return p;
  return std::nullopt;
}

const char *phaseName(Phase phase) {
  switch (phase) {
  case Phase::Import: return "import";
  case Phase::Graph: return "graph";
  case Phase::Tensor: return "tensor";
  case Phase::Kernels: return "kernels";
  case Phase::Plan: return "plan";
  case Phase::Codegen: return "codegen";
  case Phase::Emit: return "emit";
  }
  return "?";
}

namespace {
/// The fusion rules left out: those `--no-fuse` names and those the target leaves out.
std::vector<std::string> disabledRules(const CompileOptions &options) {
  std::vector<std::string> disabled = options.noFuse;
  if (options.target)
    for (StringRef rule : options.target->fusionRulesLeftOut())
      disabled.push_back(rule.str());
  return disabled;
}

bool ruleOff(ArrayRef<std::string> disabled, StringRef rule) {
  return llvm::is_contained(disabled, rule) || llvm::is_contained(disabled, "all");
}
} // namespace

void buildGraphPipeline(OpPassManager &pm, const CompileOptions &options) {
  pm.addPass(createInferShapes());
  pm.addPass(createDecompose());
  pm.addNestedPass<func::FuncOp>(createRemoveIdentity());
  // The graph's fusions (rules affine, siblings, composites) join ONNX nodes.
  std::vector<std::string> disabled = disabledRules(options);
  if (!ruleOff(disabled, "affine")) {
    pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
    pm.addNestedPass<func::FuncOp>(createFoldAffine());
  }
  if (!ruleOff(disabled, "siblings"))
    pm.addNestedPass<func::FuncOp>(createMergeSiblings());
  pm.addNestedPass<func::FuncOp>(createSimplifyViews());
  if (!ruleOff(disabled, "composites"))
    pm.addNestedPass<func::FuncOp>(createRecognizeComposites());
  if (options.fp16) {
    ConvertToFp16Options fp16;
    fp16.keepInputTypes = options.keepInputTypes;
    fp16.keepOutputTypes = options.keepOutputTypes;
    fp16.keepF32 = options.keepF32;
    pm.addNestedPass<func::FuncOp>(createConvertToFp16(fp16));
  }
  pm.addPass(createCanonicalizerPass());
}

void buildTensorPipeline(OpPassManager &pm, const CompileOptions &) {
  pm.addPass(createConvertOnnxToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildKernelsPipeline(OpPassManager &pm, const CompileOptions &options) {
  std::vector<std::string> disabled = disabledRules(options);
  if (!ruleOff(disabled, "elementwise")) {
    FuseElementwiseOptions elementwise;
    elementwise.transposes = !ruleOff(disabled, "transpose");
    pm.addNestedPass<func::FuncOp>(createFuseElementwise(elementwise));
  }
  FormKernelsOptions form;
  form.disabledRules = disabled;
  pm.addNestedPass<func::FuncOp>(createFormKernels(form));
}

void buildPlanPipeline(OpPassManager &pm, const CompileOptions &options) {
  pm.addPass(createBuildPlan());
  // Kernels: tensors -> buffers, results written in place into the plan's buffers.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizationOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = false;
  bufferize.allowUnknownOps = false;
  // Copies become loops (linalg.copy), not calls into MLIR's C runner library.
  bufferize.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A time loop's temporaries are allocated once, outside the loop (once the
  // canonicalizer has dropped the buffers it carries unchanged).
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  // How each kernel runs on the target (GPU: blocks, threads, scratch), which
  // scheduling and memory planning read.
  if (options.target)
    options.target->buildKernelMappingPipeline(pm);
  AssignStreamsOptions streams;
  if (options.target) {
    streams.deviceModel = options.target->getDeviceModel();
    streams.maxStreams = options.target->getDefaultMaxStreams();
    streams.tf32 = options.target->getAllowTf32();
  }
  if (options.maxStreams > 0)
    streams.maxStreams = options.maxStreams;
  streams.memoryBudget = options.memoryBudget;
  pm.addPass(createAssignStreams(streams));
  pm.addPass(createPlanMemory());
  pm.addPass(createVerifyPlan());
}

void buildCodegenPipeline(OpPassManager &pm, const CompileOptions &options) {
  options.target->buildCodegenPipeline(pm);
}

void buildPipeline(OpPassManager &pm, Phase from, Phase to,
                   const CompileOptions &options) {
  using Builder = void (*)(OpPassManager &, const CompileOptions &);
  const std::pair<Phase, Builder> phases[] = {
      {Phase::Graph, buildGraphPipeline},     {Phase::Tensor, buildTensorPipeline},
      {Phase::Kernels, buildKernelsPipeline}, {Phase::Plan, buildPlanPipeline},
      {Phase::Codegen, buildCodegenPipeline}};
  for (auto [phase, build] : phases)
    if (phase > from && phase <= to)
      build(pm, options);
}

void registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<onnx::OnnxDialect, KilnDialect, func::FuncDialect,
                  arith::ArithDialect, math::MathDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, bufferization::BufferizationDialect,
                  memref::MemRefDialect, scf::SCFDialect, affine::AffineDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect, nvgpu::NVGPUDialect, vector::VectorDialect>();
  // What convert-gpu-to-nvvm lowers through (the cuda target).
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  // memref.alloc's hoisting kind (buffer-loop-hoisting).
  memref::registerAllocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
}

void registerPhasePipelines() {
  static CompileOptions defaults;
  PassPipelineRegistration<>("kiln-graph-pipeline", "Kiln's graph phase",
                             [](OpPassManager &pm) { buildGraphPipeline(pm, defaults); });
  PassPipelineRegistration<>("kiln-tensor-pipeline", "Kiln's tensor phase",
                             [](OpPassManager &pm) { buildTensorPipeline(pm, defaults); });
  PassPipelineRegistration<>("kiln-kernels-pipeline", "Kiln's kernels phase",
                             [](OpPassManager &pm) { buildKernelsPipeline(pm, defaults); });
  PassPipelineRegistration<>("kiln-plan-pipeline", "Kiln's plan phase",
                             [](OpPassManager &pm) { buildPlanPipeline(pm, defaults); });
  registerCodegenPipelines();
}

} // namespace kiln
