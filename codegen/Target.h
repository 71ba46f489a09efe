//===- Target.h - What a compile target owns -------------------*- C++ -*-===//
//
// A target (host, cuda, cuda-sim) is one object that owns everything that differs
// between targets: its codegen pipeline (bufferized kernels and the plan in), its
// kernel writer (the codegen phase's output to object code or PTX) and its emit
// hooks (the generated runtime's glue, what libmodel.so links). The rest of the
// compiler, the emitter included, asks the target and never branches on which one
// it is. Targets are created by name from the table in Target.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "codegen/cuda/GpuOptions.h"
#include "codegen/host/HostOptions.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Options that reach a target: what every target reads, then each family's own,
/// declared in its folder (each target reads those that concern it and checks them
/// when created).
struct TargetOptions {
  /// Who runs the contractions (convolutions, matrix products): "auto" (the
  /// target's library where it can express the kernel, host: oneDNN), "kiln"
  /// (Kiln's own kernels) or "library" (as auto; an error on a target without one).
  std::string contractions = "auto";
  /// The scheduler's device model (passes/plan/CostModel.h); empty: the target's
  /// (host: this CPU; cuda, cuda-sim: the architecture's, else h200).
  std::string deviceModel;
  HostOptions host;
  GpuOptions gpu;
};

/// What a target's kernel writer made.
/// A GPU kernel's resources as ptxas reports them for the target architecture
/// (`ptxas -v`), and the occupancy they allow with its block size.
struct KernelResources {
  std::string name;
  int64_t registers = 0, sharedBytes = 0, stackBytes = 0, spillStores = 0, spillLoads = 0;
  int64_t blockThreads = 0;
  /// Resident warps per SM over the SM's most (0: not known).
  double occupancy = 0;
  bool tensorCores = false; // it runs mma.sync
};

struct KernelCode {
  /// Given to the writer: the prefix of the kernels' link-time symbols (a named
  /// model's, so that several models' kernels link into one program), which the
  /// emit hooks use where they call them.
  std::string symbolPrefix;
  /// Given to the writer: the kernels' resources are wanted (a report was asked
  /// for); GPU targets then assemble each kernel with ptxas -v.
  bool wantResources = false;
  /// Files in the artifact directory that libmodel.so links (the host object).
  std::vector<std::string> linkInputs;
  /// Code the generated runtime embeds (PTX).
  std::string embedded;
  /// Size of the target's code and what it is ("object code", "PTX"), for the
  /// report.
  int64_t bytes = 0;
  std::string kind;
  /// GPU targets: each kernel's resources, and where they come from ("ptxas
  /// sm_90"), or why there are none.
  std::vector<KernelResources> resources;
  std::string resourcesFrom;
};

/// One input or output of the model as the generated runtime describes it.
struct TensorInterface {
  std::string name;
  int dtype; // KILN_F32, ... (model_abi.h)
  std::vector<int64_t> shape;
  int64_t bytes; // dense, as the plan's buffer holds it
};

/// What the emit hooks see: the plan, its interface and the kernels' code.
struct EmitContext {
  /// Mutable: an op handle is a value, and its generated accessors are not const.
  mutable PlanOp plan;
  std::vector<TensorInterface> inputs, outputs;
  /// What the kernel writer made (not copied: the PTX can be megabytes).
  const KernelCode *code = nullptr;
};

class Target {
public:
  virtual ~Target();

  /// The name `--target` takes.
  virtual llvm::StringRef getName() const = 0;

  /// Fusion policy the kernels phase asks: the fusion rules (Driver.h's
  /// fusionRules()) this target leaves out because its code runs slower with them,
  /// as if `--no-fuse=RULE` were given. None by default (GPU targets save launches
  /// and traffic with every rule).
  virtual llvm::ArrayRef<llvm::StringRef> fusionRulesLeftOut() const { return {}; }

  /// The plan phase's target step, after bufferization and before scheduling and
  /// memory planning (which read what it records): how each kernel runs (the GPU
  /// targets map kernels to blocks and threads, with their scratch as arena
  /// slices). Nothing by default.
  virtual void buildKernelMappingPipeline(mlir::OpPassManager &) const {}

  /// For the artifact's manifest: the architecture compiled for ("sm_90"; empty
  /// where none applies) and who runs its library calls ("onednn", "cuda",
  /// "cuda-mock").
  virtual std::string getArchName() const { return ""; }
  virtual llvm::StringRef getLibraryEngine() const = 0;

  /// The scheduler's device model and how many streams it may use by default.
  virtual std::string getDeviceModel() const = 0;
  virtual int64_t getDefaultMaxStreams() const = 0;
  /// Whether f32 contractions may run in TF32 (--allow-tf32: the cost model prices
  /// them so).
  virtual bool getAllowTf32() const { return false; }

  /// The codegen phase: from the mapped kernels and the plan to what
  /// writeKernels compiles (LLVM dialect, or a gpu.module in NVVM).
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm) const = 0;

  /// The kernel writer: compiles the codegen phase's output, writing any file into
  /// `dir`. False with a one-line `error`.
  virtual bool writeKernels(mlir::ModuleOp module, llvm::StringRef dir, KernelCode &code,
                            std::string &error) const = 0;

  /// Emit hook: model.cpp's target-specific includes and declarations, at file scope
  /// before the interface tables.
  virtual bool writePrologue(llvm::raw_ostream &os, const EmitContext &ctx,
                             std::string &error) const = 0;

  /// Emit hook: the rest of model.cpp after the interface tables, inside the
  /// anonymous namespace: the target's program (kiln/runtime/HostModel.h,
  /// CudaModel.h) as `kProgram`, its launch sequence in plan order, and `kHooks`,
  /// the runtime's hooks that run it.
  virtual bool writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                        std::string &error) const = 0;
};

/// Creates the target `name` ("host", "cuda", "cuda-sim"); null with `error` when
/// the name or an option it reads is not supported.
std::unique_ptr<Target> createTarget(llvm::StringRef name, const TargetOptions &options,
                                     std::string &error);

/// The target that runs on this machine (host): the one the compiler's own checks
/// (the precision check) build and run with.
const char *referenceTargetName();

/// "host, cuda, cuda-sim", for messages and help.
std::string targetList();

/// Registers every codegen pass (codegen/Passes.td and each target's) for kiln-opt.
void registerCodegenPasses();

/// Registers `kiln-<target>-codegen-pipeline` for every target (kiln-opt), with the
/// target options as pipeline options.
void registerCodegenPipelines();

} // namespace kiln

#endif // KILN_CODEGEN_TARGET_H
