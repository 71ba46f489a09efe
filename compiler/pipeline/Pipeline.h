//===- Pipeline.h - Kiln's named phases -----------------------*- C++ -*-===//
//
// The compiler is a sequence of named phases (DESIGN.md): import, graph, tensor,
// kernels, plan, codegen, emit. Each build<Phase>Pipeline adds that phase's
// passes; `kiln compile --compile-to=PHASE` runs the phases up to PHASE and prints
// the IR, and kiln-opt exposes each as a pipeline (`--kiln-graph-pipeline`, ...).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_PIPELINE_PIPELINE_H
#define KILN_COMPILER_PIPELINE_PIPELINE_H

#include "codegen/Target.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

enum class Phase { Import, Graph, Tensor, Kernels, Plan, Codegen, Emit };

/// "import", "graph", ... -> Phase.
std::optional<Phase> parsePhase(const std::string &name);
const char *phaseName(Phase phase);

struct CompileOptions {
  /// The target (codegen/Target.h). The graph and tensor phases do not read it;
  /// the kernels phase asks its fusion policy (the rules it leaves out), the plan
  /// phase its kernel mapping (library calls, the GPU mapping), device model and
  /// default streams, and the codegen phase is its pipeline.
  const Target *target = nullptr;
  /// Fusion rules left out (passes/fusion/FusionRules.h names them and the pass of
  /// each), or all (one ONNX node per kernel).
  std::vector<std::string> noFuse;
  /// Scheduling (kiln-assign-streams): the most streams at once (0: the target's
  /// default), the arena budget in bytes (0: none).
  int64_t maxStreams = 0;
  int64_t memoryBudget = 0;
  /// Precision (kiln-convert-to-fp16 at the end of the graph phase): fp16 computes
  /// float tensors in f16 except the keep-list and the nodes in keepF32;
  /// keepInputTypes/keepOutputTypes keep the graph's input/output types.
  bool fp16 = false;
  bool keepInputTypes = true, keepOutputTypes = true;
  std::vector<std::string> keepF32;
};

void buildGraphPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
void buildTensorPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
void buildKernelsPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
void buildPlanPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
void buildCodegenPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Adds the passes of every phase after `from` up to and including `to`.
void buildPipeline(mlir::OpPassManager &pm, Phase from, Phase to,
                   const CompileOptions &options);

/// Every dialect and interface the compiler's phases need (no more).
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Registers the per-phase pipelines for kiln-opt (the codegen phase once per
/// target: `kiln-<target>-codegen-pipeline`).
void registerPhasePipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINE_PIPELINE_H
