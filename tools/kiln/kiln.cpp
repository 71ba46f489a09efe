//===- kiln.cpp - The Kiln command-line compiler --------------------------===//
//
// This file implements `kiln`, the command users run:
//   kiln import MODEL    print the model as onnx-dialect IR (the import phase)
//   kiln compile MODEL   run the phases; print one (--compile-to) or emit artifacts
//   kiln run DIR         execute a compiled artifact on .npy/.pb inputs
//   kiln bench DIR       time a compiled artifact
//   kiln inspect MODEL   opset, inputs and outputs, and an op histogram
// Every failure prints one `kiln: error: ...` line and exits non-zero.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/import/OnnxSchemas.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/pipeline/Report.h"
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/emit/Emitter.h"
#include "codegen/host/HostCodegen.h"
#include "tools/kiln/RunCommand.h"

#include "mlir/Pass/PassManager.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>

namespace {

/// Prints one error line. Names taken from a (possibly corrupt) model may hold
/// control or non-ASCII bytes; they are escaped so the line stays one line.
int reportError(const std::string &message) {
  std::string clean;
  for (unsigned char c : message) {
    if (c >= 0x20 && c < 0x7f) {
      clean += static_cast<char>(c);
    } else {
      char buf[5];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      clean += buf;
    }
  }
  llvm::errs() << "kiln: error: " << clean << "\n";
  return 1;
}

struct CommonOptions {
  std::string model;
  std::vector<std::string> inputShapes;
};

bool makeLoadOptions(const CommonOptions &common, kiln::LoadOptions &options,
                     std::string &error) {
  for (const std::string &text : common.inputShapes) {
    std::string name;
    std::vector<int64_t> dims;
    if (!kiln::parseInputShape(text, name, dims)) {
      error = "--input-shape '" + text + "' is not of the form NAME=1x3x224x224";
      return false;
    }
    if (options.inputShapes.count(name)) {
      error = "--input-shape gives input '" + name + "' twice";
      return false;
    }
    options.inputShapes[name] = dims;
  }
  return true;
}

/// Reads, checks and shape-infers the model named on the command line.
bool loadModel(const CommonOptions &common, onnx::ModelProto &model,
               std::string &error) {
  kiln::LoadOptions loadOptions;
  return makeLoadOptions(common, loadOptions, error) &&
         kiln::loadOnnxModel(common.model, loadOptions, model, error);
}

/// Prints `module` to `path` ("" or "-": stdout), with or without weights.
int printModule(mlir::ModuleOp module, const std::string &path, bool printWeights,
                const mlir::OpPrintingFlags &flags);

void addCommonOptions(CLI::App *cmd, CommonOptions &common) {
  cmd->add_option("model", common.model,
                  "ONNX model: binary .onnx, or ONNX text syntax (.onnxtxt)")
      ->required();
  cmd->add_option("--input-shape", common.inputShapes,
                  "Pin an input's shape, e.g. input=1x3x224x224 (repeatable)")
      ->type_name("NAME=DIMS");
}

/// Prints `module` with the bytes of its dense resources left out. MLIR 19's
/// elideLargeResourceString still renders every blob as hex before dropping it,
/// which costs seconds on large models; instead the blobs are swapped out for the
/// duration of the print and the (then empty) resource section is cut.
void printWithoutWeights(mlir::ModuleOp module, const mlir::OpPrintingFlags &flags,
                         llvm::raw_ostream &os) {
  std::vector<std::pair<mlir::AsmResourceBlob *, mlir::AsmResourceBlob>> saved;
  uint64_t bytes = 0;
  llvm::DenseSet<mlir::AsmResourceBlob *> seen;
  module.walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute attr : op->getAttrs()) {
      auto resource = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(attr.getValue());
      if (!resource)
        continue;
      mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob || !seen.insert(blob).second)
        continue;
      bytes += blob->getData().size();
      saved.emplace_back(blob, std::move(*blob));
      *blob = mlir::AsmResourceBlob();
    }
  });
  std::string text;
  llvm::raw_string_ostream textOs(text);
  module->print(textOs, flags);
  for (auto &[blob, original] : saved)
    *blob = std::move(original);
  size_t resources = text.find("\n{-#\n");
  if (resources != std::string::npos)
    text.resize(resources);
  os << text << "\n";
  if (!saved.empty())
    os << "// " << saved.size() << " weight tensors ("
       << llvm::format("%.2f", bytes / 1048576.0)
       << " MiB) elided; --print-weights prints them\n";
}

int printModule(mlir::ModuleOp module, const std::string &path, bool printWeights,
                const mlir::OpPrintingFlags &flags) {
  std::error_code ec;
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (!path.empty() && path != "-") {
    file = std::make_unique<llvm::raw_fd_ostream>(path, ec);
    if (ec)
      return reportError("cannot write '" + path + "': " + ec.message());
  }
  llvm::raw_ostream &os = file ? *file : llvm::outs();
  if (printWeights) {
    module->print(os, flags);
    os << "\n";
  } else {
    printWithoutWeights(module, flags, os);
  }
  return 0;
}

int runImport(const CommonOptions &common, const std::string &output,
              bool printWeights, bool printLocations, bool timing) {
  auto start = std::chrono::steady_clock::now();
  std::string error;
  onnx::ModelProto model;
  if (!loadModel(common, model, error))
    return reportError(error);
  auto loaded = std::chrono::steady_clock::now();

  mlir::MLIRContext context;
  kiln::ImportOptions importOptions;
  auto module = kiln::importOnnxModel(context, model, common.model,
                                      importOptions, error);
  if (!module)
    return reportError(error);
  auto imported = std::chrono::steady_clock::now();

  mlir::OpPrintingFlags flags;
  if (printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false).useLocalScope();
  if (int rc = printModule(*module, output, printWeights, flags))
    return rc;
  if (timing) {
    using ms = std::chrono::duration<double, std::milli>;
    llvm::errs() << "kiln: load+check+infer " << llvm::format("%.1f", ms(loaded - start).count())
                 << " ms, import " << llvm::format("%.1f", ms(imported - loaded).count())
                 << " ms\n";
  }
  return 0;
}

std::string describeType(const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return "(non-tensor)";
  const auto &t = type.tensor_type();
  std::string s = onnx::TensorProto_DataType_Name(t.elem_type());
  for (char &c : s)
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  s += "[";
  if (!t.has_shape())
    return s + "?]";
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto &d = t.shape().dim(i);
    s += (i ? "x" : "");
    s += d.has_dim_value() ? std::to_string(d.dim_value())
         : d.has_dim_param() ? d.dim_param()
                             : "?";
  }
  return s + "]";
}

void countOps(const onnx::GraphProto &graph, std::map<std::string, int> &histogram,
              int &nodes) {
  for (const auto &node : graph.node()) {
    ++nodes;
    ++histogram[node.domain().empty() ? node.op_type()
                                      : node.domain() + "." + node.op_type()];
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        countOps(attr.g(), histogram, nodes);
      for (const auto &g : attr.graphs())
        countOps(g, histogram, nodes);
    }
  }
}

int runInspect(const CommonOptions &common) {
  std::string error;
  onnx::ModelProto model;
  if (!loadModel(common, model, error))
    return reportError(error);
  const onnx::GraphProto &graph = model.graph();
  llvm::raw_ostream &os = llvm::outs();
  os << "model:      " << common.model << "\n";
  os << "ir_version: " << model.ir_version() << "\n";
  os << "opsets:    ";
  for (const auto &o : model.opset_import())
    os << " " << (o.domain().empty() ? "ai.onnx" : o.domain()) << "=" << o.version();
  os << "\n";
  if (!model.producer_name().empty())
    os << "producer:   " << model.producer_name() << " " << model.producer_version()
       << "\n";

  std::set<std::string> initNames;
  uint64_t weightBytes = 0;
  for (const auto &t : graph.initializer()) {
    initNames.insert(t.name());
    weightBytes += t.ByteSizeLong();
  }
  os << "inputs:\n";
  for (const auto &in : graph.input())
    if (!initNames.count(in.name()))
      os << "  " << in.name() << ": " << describeType(in.type()) << "\n";
  os << "outputs:\n";
  for (const auto &out : graph.output())
    os << "  " << out.name() << ": " << describeType(out.type()) << "\n";
  std::map<std::string, int> histogram;
  int nodes = 0;
  countOps(graph, histogram, nodes);
  os << "initializers: " << graph.initializer_size() << " ("
     << llvm::format("%.2f", weightBytes / 1048576.0) << " MiB)\n";
  os << "nodes: " << nodes << "\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto &[op, count] : histogram)
    sorted.push_back({-count, op});
  std::sort(sorted.begin(), sorted.end());
  for (const auto &[negCount, op] : sorted)
    os << llvm::format("  %-24s %d\n", op.c_str(), -negCount);
  return 0;
}

double millisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int64_t countNodes(const onnx::GraphProto &graph) {
  std::map<std::string, int> histogram;
  int nodes = 0;
  countOps(graph, histogram, nodes);
  return nodes;
}

struct CompileCommandOptions {
  std::string output;
  std::string compileTo = "emit";
  std::string target = "host";
  std::string emit = "src";
  std::string cpu = "native";
  std::string gpuArch = "sm_80";
  bool cudaGraph = false;
  bool embedWeights = false;
  bool printWeights = false;
  bool noFuse = false;
  std::string report;
  std::string reportHtml;
};

int runCompile(const CommonOptions &common, const CompileCommandOptions &o) {
  std::optional<kiln::Phase> phase = kiln::parsePhase(o.compileTo);
  if (!phase)
    return reportError("--compile-to '" + o.compileTo +
                       "' is not a phase (import, graph, tensor, kernels, plan, "
                       "codegen, emit)");
  std::optional<kiln::Target> target = kiln::parseTarget(o.target);
  if (!target)
    return reportError("--target '" + o.target + "' is not a target (host, cuda, cuda-sim)");
  if (!kiln::isSupportedGpuArch(o.gpuArch))
    return reportError("--gpu-arch '" + o.gpuArch +
                       "' is not supported (sm_80, sm_86, sm_89, sm_90)");
  if (o.emit != "src" && o.emit != "lib")
    return reportError("--emit '" + o.emit + "' must be src or lib");
  if (*phase == kiln::Phase::Emit && o.output.empty())
    return reportError("compile needs -o DIR for the artifacts (or --compile-to "
                       "PHASE to print IR)");

  if ((!o.report.empty() || !o.reportHtml.empty()) && *phase != kiln::Phase::Emit)
    return reportError("--report and --report-html need a full compile (no --compile-to)");
  auto start = std::chrono::steady_clock::now();
  std::string error;
  onnx::ModelProto model;
  if (!loadModel(common, model, error))
    return reportError(error);
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = kiln::importOnnxModel(context, model, common.model, {}, error);
  if (!module)
    return reportError(error);

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
      firstError = common.model + ": " + where + diag.str();
    }
    return mlir::success();
  });
  // Phase by phase, so that the report can time each one.
  kiln::CompileOptions options;
  options.fuse = !o.noFuse;
  options.target = *target;
  options.gpuArch = o.gpuArch;
  kiln::CompileReport report;
  report.model = common.model;
  report.target = o.target;
  report.nodesIn = countNodes(model.graph());
  report.phaseMillis.push_back({"import", millisSince(start)});
  kiln::Phase last = std::min(*phase, kiln::Phase::Codegen);
  for (kiln::Phase p : {kiln::Phase::Graph, kiln::Phase::Tensor, kiln::Phase::Kernels,
                        kiln::Phase::Plan, kiln::Phase::Codegen}) {
    if (p > last)
      break;
    auto phaseStart = std::chrono::steady_clock::now();
    mlir::PassManager pm(&context);
    kiln::buildPipeline(pm, static_cast<kiln::Phase>(static_cast<int>(p) - 1), p, options);
    if (mlir::failed(pm.run(*module)))
      return reportError(firstError.empty() ? common.model + ": compilation failed"
                                            : firstError);
    report.phaseMillis.push_back({kiln::phaseName(p), millisSince(phaseStart)});
    if (p == kiln::Phase::Kernels)
      report.collectKernels(*module);
    if (p == kiln::Phase::Plan)
      report.collectPlan(*module);
  }

  if (*phase != kiln::Phase::Emit)
    return printModule(*module, o.output, o.printWeights, mlir::OpPrintingFlags());

  if (std::error_code ec = llvm::sys::fs::create_directories(o.output))
    return reportError("cannot create '" + o.output + "': " + ec.message());
  kiln::EmitOptions emit;
  emit.outputDir = o.output;
  emit.cuda = *target == kiln::Target::Cuda;
  emit.simulate = *target == kiln::Target::CudaSim;
  emit.cudaGraph = o.cudaGraph;
  emit.embedWeights = o.embedWeights;
  emit.objectFile = o.output + "/model.o";
  emit.buildLibrary = o.emit == "lib";
  emit.runtimeIncludeDir = KILN_RUNTIME_INCLUDE_DIR;
  emit.runtimeLibrary = KILN_RUNTIME_LIBRARY;
  if (const char *cxx = getenv("CXX"))
    emit.compiler = cxx;
  auto emitStart = std::chrono::steady_clock::now();
  bool kernelsOk = emit.cuda ? kiln::emitPtx(*module, o.gpuArch, emit.ptx, error)
                             : kiln::emitHostObject(*module, emit.objectFile, o.cpu, error);
  if (!kernelsOk || !kiln::emitArtifacts(*module, emit, error))
    return reportError(common.model + ": " + error +
                       (firstError.empty() ? "" : " (" + firstError + ")"));
  report.phaseMillis.push_back({"emit", millisSince(emitStart)});
  uint64_t objectSize = 0;
  if (emit.cuda)
    report.codeBytes = static_cast<int64_t>(emit.ptx.size());
  else if (!llvm::sys::fs::file_size(emit.objectFile, objectSize))
    report.codeBytes = static_cast<int64_t>(objectSize);
  if (!o.report.empty() && !report.write(o.report, error))
    return reportError(error);
  if (!o.reportHtml.empty() && !report.writeHtml(o.reportHtml, error))
    return reportError(error);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Kiln: an ahead-of-time compiler for deep-learning inference on "
               "NVIDIA GPUs.\nImports ONNX models into MLIR; see `kiln COMMAND "
               "--help`."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kiln 0.1 (ONNX opsets 1-" +
                                        std::to_string(kiln::kMaxOnnxOpset) + ")");

  CommonOptions importCommon;
  std::string output;
  bool printWeights = false, printLocations = false, timing = false;
  CLI::App *importCmd = app.add_subcommand(
      "import", "Print a model as onnx-dialect MLIR (the import phase)");
  addCommonOptions(importCmd, importCommon);
  importCmd->add_option("-o,--output", output, "Write the IR here (default: stdout)");
  importCmd->add_flag("--print-weights", printWeights,
                      "Print large constants in full instead of eliding them");
  importCmd->add_flag("--print-locations", printLocations,
                      "Print each op's location (its ONNX node name)");
  importCmd->add_flag("--timing", timing, "Print load and import times to stderr");

  CommonOptions compileCommon;
  CompileCommandOptions compileOptions;
  CLI::App *compileCmd = app.add_subcommand(
      "compile", "Compile a model: artifacts in -o DIR, or one phase's IR with --compile-to");
  addCommonOptions(compileCmd, compileCommon);
  compileCmd->add_option("-o,--output", compileOptions.output,
                         "Artifact directory (or IR file with --compile-to)");
  compileCmd->add_option("--compile-to", compileOptions.compileTo,
                         "Stop after a phase and print its IR: import, graph, tensor, "
                         "kernels, plan, codegen, emit (default: emit)");
  compileCmd->add_option("--target", compileOptions.target,
                         "Target: host (default), cuda (PTX + the CUDA runtime) or cuda-sim "
                         "(the cuda kernels run on the CPU by a SIMT simulator: a checker)");
  compileCmd->add_option("--gpu-arch", compileOptions.gpuArch,
                         "cuda: sm_80 (default; the driver JITs it for newer GPUs), "
                         "sm_86, sm_89, sm_90");
  compileCmd->add_flag("--cuda-graph", compileOptions.cudaGraph,
                       "cuda: capture a whole run as a CUDA graph, replay it on later runs");
  compileCmd->add_flag("--embed-weights", compileOptions.embedWeights,
                       "Build the weights into the model (model_weights.S); create it "
                       "with no weights path");
  compileCmd->add_option("--emit", compileOptions.emit,
                         "src: model.h/.cpp/.o/.weights; lib: also libmodel.so");
  compileCmd->add_option("--cpu", compileOptions.cpu,
                         "Host CPU to tune for (default: native)");
  compileCmd->add_flag("--no-fuse", compileOptions.noFuse,
                       "One op per kernel (no elementwise fusion), for comparison");
  compileCmd->add_option("--report", compileOptions.report,
                         "Write the compile report (kernels, memory, phase times) as JSON");
  compileCmd->add_option("--report-html", compileOptions.reportHtml,
                         "Write the report as a page: launches per stream, arena occupancy");
  compileCmd->add_flag("--print-weights", compileOptions.printWeights,
                       "With --compile-to: print large constants in full");

  kiln::RunOptions runOptions;
  CLI::App *runCmd = app.add_subcommand(
      "run", "Run a compiled model (libmodel.so) on .npy or .pb inputs");
  runCmd->add_option("artifacts", runOptions.artifactDir,
                     "Directory written by `kiln compile --emit lib`")->required();
  runCmd->add_option("--input", runOptions.inputs,
                     "NAME=file.npy|file.pb, or a file for the next input (repeatable)");
  runCmd->add_option("--output-dir", runOptions.outputDir,
                     "Where to write NAME.npy per output (default: .)");

  kiln::BenchOptions benchOptions;
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "Time a compiled model: latency percentiles and throughput");
  benchCmd->add_option("artifacts", benchOptions.artifactDir,
                       "Directory written by `kiln compile --emit lib`")->required();
  benchCmd->add_option("--iterations", benchOptions.iterations, "Timed runs (default 100)");
  benchCmd->add_option("--warmup", benchOptions.warmup, "Untimed runs first (default 10)");

  CommonOptions inspectCommon;
  CLI::App *inspectCmd = app.add_subcommand(
      "inspect", "Show a model's opsets, inputs, outputs and op histogram");
  addCommonOptions(inspectCmd, inspectCommon);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return reportError(e.what() + std::string(" (see kiln --help)")) ? 2 : 2;
  }

  if (importCmd->parsed())
    return runImport(importCommon, output, printWeights, printLocations, timing);
  if (compileCmd->parsed())
    return runCompile(compileCommon, compileOptions);
  if (runCmd->parsed())
    return kiln::runModel(runOptions);
  if (benchCmd->parsed())
    return kiln::benchModel(benchOptions);
  return runInspect(inspectCommon);
}
