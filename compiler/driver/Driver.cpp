//===- Driver.cpp - The compile driver ------------------------------------===//
//
// This file implements the compile driver (Driver.h): model loading with pinned
// shapes, import, the phases one after another (timed for the compile report), and
// emission through the target. `kiln compare`'s rewrites (CompareRewrites.cpp),
// `kiln inspect` (Inspect.cpp) and IR printing (PrintIR.cpp) have files of their
// own; the precision check is PrecisionCheck.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Driver.h"
#include "compiler/driver/DriverInternal.h"
#include "compiler/driver/PrecisionCheck.h"
#include "codegen/emit/Emitter.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/report/Report.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <cctype>
#include <chrono>
#include <map>
#include <set>

namespace kiln {
namespace {

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The runtime an artifact's library links: beside an installed kiln
/// (PREFIX/bin/kiln: PREFIX/include and PREFIX/<libdir>/libkiln_runtime.a, as
/// `cmake --install` lays them out), else the build tree's.
void findRuntime(std::string &includeDir, std::string &library) {
  includeDir = KILN_RUNTIME_INCLUDE_DIR;
  library = KILN_RUNTIME_LIBRARY;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  if (exe.empty())
    return;
  llvm::SmallString<256> prefix(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::SmallString<256> include(prefix), header, archive(prefix);
  llvm::sys::path::append(include, KILN_INSTALL_INCLUDEDIR);
  header = include;
  llvm::sys::path::append(header, "kiln", "runtime", "Model.h");
  llvm::sys::path::append(archive, KILN_INSTALL_LIBDIR, "libkiln_runtime.a");
  if (llvm::sys::fs::exists(header) && llvm::sys::fs::exists(archive)) {
    includeDir = std::string(include);
    library = std::string(archive);
  }
}

} // namespace

/// Reads, checks and shape-infers the model, with its inputs pinned.
bool loadModel(const ModelInput &input, onnx::ModelProto &model, std::string &error) {
  LoadOptions options;
  for (const std::string &text : input.inputShapes) {
    std::string name;
    std::vector<int64_t> dims;
    if (!parseInputShape(text, name, dims)) {
      error = "--input-shape '" + text + "' is not of the form NAME=1x3x224x224";
      return false;
    }
    if (options.inputShapes.count(name)) {
      error = "--input-shape gives input '" + name + "' twice";
      return false;
    }
    options.inputShapes[name] = dims;
  }
  for (const std::string &text : input.inputValues) {
    std::string name, value;
    if (!parseInputValue(text, name, value)) {
      error = "--input-value '" + text + "' is not of the form NAME=VALUE";
      return false;
    }
    if (!options.inputValues.emplace(name, value).second) {
      error = "--input-value gives input '" + name + "' twice";
      return false;
    }
  }
  return loadOnnxModel(input.path, options, model, error) &&
         rewriteForCompare(input, model, error);
}

bool importModel(const ImportRequest &request, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  onnx::ModelProto model;
  if (!loadModel(request.model, model, error))
    return false;
  auto loaded = std::chrono::steady_clock::now();

  mlir::MLIRContext context;
  auto module = importOnnxModel(context, model, request.model.path, ImportOptions(), error);
  if (!module)
    return false;
  auto imported = std::chrono::steady_clock::now();

  mlir::OpPrintingFlags flags;
  if (request.printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false).useLocalScope();
  if (!printModule(*module, request.output, request.printWeights, flags, error))
    return false;
  if (request.timing) {
    using ms = std::chrono::duration<double, std::milli>;
    llvm::errs() << "kiln: load+check+infer "
                 << llvm::format("%.1f", ms(loaded - start).count()) << " ms, import "
                 << llvm::format("%.1f", ms(imported - loaded).count()) << " ms\n";
  }
  return true;
}

bool compileModel(const CompileRequest &request, std::string &error) {
  // The name goes into the model's symbols: checked before any work is done.
  const std::string &name = request.modelName;
  bool identifier = name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name)
    identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!identifier) {
    error = "model name '" + name + "' is not a C identifier";
    return false;
  }
  return compileWithPrecision(request, error);
}

bool compileOnce(const CompileRequest &request, const PrecisionOutcome &outcome,
                 std::string &error) {
  std::optional<Phase> phase = parsePhase(request.compileTo);
  if (!phase) {
    error = "--compile-to '" + request.compileTo +
            "' is not a phase (import, graph, tensor, kernels, plan, codegen, emit)";
    return false;
  }
  TargetOptions targetOptions = request.targetOptions;
  targetOptions.gpu.takeCachedKernels = *phase == Phase::Emit;
  std::unique_ptr<Target> target = createTarget(request.target, targetOptions, error);
  if (!target)
    return false;
  if (*phase == Phase::Emit && request.output.empty()) {
    error = "compile needs -o DIR for the artifacts (or --compile-to PHASE to print IR)";
    return false;
  }
  if ((!request.report.empty() || !request.reportHtml.empty()) && *phase != Phase::Emit) {
    error = "--report and --report-html need a full compile (no --compile-to)";
    return false;
  }
  const std::string &path = request.model.path;
  auto start = std::chrono::steady_clock::now();
  onnx::ModelProto model;
  if (!loadModel(request.model, model, error))
    return false;
  // --keep-f32 names nodes as the importer does: the node's name, or its first
  // output's when it has none.
  for (const std::string &name : request.keepF32)
    if (llvm::none_of(model.graph().node(), [&](const onnx::NodeProto &n) {
          return n.name().empty() ? n.output_size() && n.output(0) == name : n.name() == name;
        })) {
      error = "--keep-f32: the main graph has no node named '" + name + "'";
      return false;
    }
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  // `model` outlives the context: large weights are used where they lie.
  ImportOptions importOptions;
  importOptions.borrowRawData = true;
  auto module = importOnnxModel(context, model, path, importOptions, error);
  if (!module)
    return false;

  // Pass failures: the first error, with the node it concerns.
  std::string firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && firstError.empty()) {
      std::string where;
      mlir::Location loc = diag.getLocation();
      if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
        loc = fused.getLocations().front();
      if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
        where = "node '" + name.getName().str() + "': ";
      firstError = path + ": " + where + diag.str();
    }
    return mlir::success();
  });
  // Phase by phase, so that the report can time each one.
  CompileOptions options;
  options.noFuse = request.noFuse;
  options.maxStreams = request.maxStreams;
  options.memoryBudget = request.memoryBudget;
  options.fp16 = request.precision != "fp32";
  options.keepInputTypes = request.keepInputTypes;
  options.keepOutputTypes = request.keepOutputTypes;
  options.keepF32 = request.keepF32;
  options.target = target.get();
  CompileReport report;
  report.model = path;
  report.target = request.target;
  report.nodesIn = countNodes(model.graph());
  report.phaseMillis.push_back({"import", millisSince(start)});
  Phase last = std::min(*phase, Phase::Codegen);
  // One timing report over all phases (printed to stderr when `timing` goes).
  mlir::DefaultTimingManager timing;
  timing.setEnabled(request.timing);
  mlir::TimingScope timingRoot = timing.getRootScope();
  auto progress = [&](const char *what) {
    if (request.progress)
      llvm::errs() << "\r\033[K[kiln] " << llvm::sys::path::filename(path) << ": " << what
                   << "...";
  };
  for (Phase p : {Phase::Graph, Phase::Tensor, Phase::Kernels, Phase::Plan, Phase::Codegen}) {
    if (p > last)
      break;
    progress(phaseName(p));
    auto phaseStart = std::chrono::steady_clock::now();
    mlir::PassManager pm(&context);
    buildPipeline(pm, static_cast<Phase>(static_cast<int>(p) - 1), p, options);
    if (request.printIrAfterAll || !request.printIrAfter.empty()) {
      context.disableMultithreading();
      auto after = [&](mlir::Pass *pass, mlir::Operation *) {
        return request.printIrAfterAll ||
               llvm::is_contained(request.printIrAfter, pass->getArgument());
      };
      pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; }, after,
                          /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
                          /*printAfterOnlyOnFailure=*/false, llvm::errs());
    }
    mlir::TimingScope phaseTiming = timingRoot.nest(phaseName(p));
    if (request.timing)
      pm.enableTiming(phaseTiming);
    mlir::LogicalResult ran = pm.run(*module);
    phaseTiming.stop();
    if (mlir::failed(ran)) {
      if (request.progress)
        llvm::errs() << "\r\033[K";
      error = firstError.empty() ? path + ": compilation failed" : firstError;
      return false;
    }
    report.phaseMillis.push_back({phaseName(p), millisSince(phaseStart)});
    if (p == Phase::Graph) {
      report.precision = outcome.measured;
      report.precision.mode = request.precision;
      if (options.fp16)
        report.collectPrecision(*module, outcome.keepF32Reasons);
    }
    if (p == Phase::Kernels)
      report.collectKernels(*module);
    if (p == Phase::Plan)
      report.collectPlan(*module);
    if (p == Phase::Codegen)
      report.collectCodegen(*module);
  }

  if (*phase != Phase::Emit) {
    if (request.progress)
      llvm::errs() << "\r\033[K";
    return printModule(*module, request.output, request.printWeights,
                       mlir::OpPrintingFlags(), error);
  }
  progress("emit");

  EmitOptions emit;
  emit.outputDir = request.output;
  emit.precision = request.precision;
  if (!request.modelName.empty())
    emit.modelName = request.modelName;
  emit.embedWeights = request.embedWeights;
  emit.buildLibrary = request.buildLibrary;
  emit.optimizeLibrary = request.optimizeLibrary;
  findRuntime(emit.runtimeIncludeDir, emit.runtimeLibrary);
  emit.compiler = request.cxx;
  auto emitStart = std::chrono::steady_clock::now();
  KernelCode code;
  code.wantResources = !request.report.empty() || !request.reportHtml.empty();
  bool emitted = emitArtifacts(*module, *target, emit, code, error);
  if (request.progress)
    llvm::errs() << "\r\033[K";
  if (!emitted) {
    error = path + ": " + error + (firstError.empty() ? "" : " (" + firstError + ")");
    return false;
  }
  report.phaseMillis.push_back({"emit", millisSince(emitStart)});
  report.codeBytes = code.bytes;
  report.codeKind = code.kind;
  report.kernelResources = code.resources;
  report.kernelResourcesFrom = code.resourcesFrom;
  if (!request.report.empty() && !report.write(request.report, error))
    return false;
  if (!request.reportHtml.empty() && !report.writeHtml(request.reportHtml, error))
    return false;
  return true;
}

} // namespace kiln
