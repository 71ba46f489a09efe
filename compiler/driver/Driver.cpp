//===- Driver.cpp - The compile driver ------------------------------------===//
//
// This file implements the compile driver (Driver.h): model loading with pinned
// shapes, import, the phases one after another (timed for the compile report), IR
// printing without the weights' bytes, and emission through the target.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Driver.h"
#include "compiler/driver/PrecisionCheck.h"
#include "codegen/emit/Emitter.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/pipeline/Report.h"

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

/// `kiln compare`'s rewrites of a loaded model (ModelInput::exposeAllTensors and
/// ::injectFault), at the ONNX level so that every target sees the same graph.
bool rewriteForCompare(const ModelInput &input, onnx::ModelProto &model,
                       std::string &error) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int32_t> elemType; // what shape inference knows
  std::set<std::string> notTensors;          // sequences, optionals, maps
  for (const auto *list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &v : *list) {
      if (v.type().has_tensor_type())
        elemType[v.name()] = v.type().tensor_type().elem_type();
      else if (v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
        notTensors.insert(v.name());
    }
  if (!input.injectFault.empty()) {
    int at = -1;
    for (int i = 0; i < graph.node_size() && at < 0; ++i)
      if (graph.node(i).name() == input.injectFault)
        at = i;
    if (at < 0 || graph.node(at).output_size() == 0) {
      error = "--inject-fault: the main graph has no node named '" + input.injectFault + "'";
      return false;
    }
    std::string out = graph.node(at).output(0);
    if (elemType.count(out) && elemType[out] != onnx::TensorProto::FLOAT) {
      error = "--inject-fault: node '" + input.injectFault + "' does not output float32";
      return false;
    }
    std::string faulty = out + "__kiln_fault", one = out + "__kiln_fault_one";
    graph.mutable_node(at)->set_output(0, faulty);
    onnx::TensorProto *c = graph.add_initializer();
    c->set_name(one);
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(1.0f);
    onnx::NodeProto *add = graph.add_node();
    add->set_op_type("Add");
    add->set_name(input.injectFault + "__kiln_fault");
    add->add_input(faulty);
    add->add_input(one);
    add->add_output(out);
    for (int i = graph.node_size() - 1; i > at + 1; --i) // right after the node
      graph.mutable_node()->SwapElements(i, i - 1);
  }
  if (input.exposeAllTensors) {
    std::set<std::string> outputs;
    for (const onnx::ValueInfoProto &v : graph.output())
      outputs.insert(v.name());
    for (const onnx::NodeProto &node : graph.node())
      for (const std::string &out : node.output())
        if (!out.empty() && !notTensors.count(out) && outputs.insert(out).second)
          graph.add_output()->set_name(out);
  }
  return true;
}

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

/// Prints `module` to `path` ("" or "-": stdout), with or without weights.
bool printModule(mlir::ModuleOp module, const std::string &path, bool printWeights,
                 const mlir::OpPrintingFlags &flags, std::string &error) {
  std::error_code ec;
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (!path.empty() && path != "-") {
    file = std::make_unique<llvm::raw_fd_ostream>(path, ec);
    if (ec) {
      error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
  }
  llvm::raw_ostream &os = file ? *file : llvm::outs();
  if (printWeights) {
    module->print(os, flags);
    os << "\n";
  } else {
    printWithoutWeights(module, flags, os);
  }
  return true;
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

bool inspectModel(const ModelInput &input, llvm::raw_ostream &os, std::string &error) {
  onnx::ModelProto model;
  if (!loadModel(input, model, error))
    return false;
  const onnx::GraphProto &graph = model.graph();
  os << "model:      " << input.path << "\n";
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
  return true;
}

bool compileModel(const CompileRequest &request, std::string &error) {
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
  std::unique_ptr<Target> target =
      createTarget(request.target, request.targetOptions, error);
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
  auto module = importOnnxModel(context, model, path, ImportOptions(), error);
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
  if (!request.modelName.empty()) {
    bool identifier = !std::isdigit(static_cast<unsigned char>(request.modelName[0]));
    for (char c : request.modelName)
      identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!identifier) {
      error = "model name '" + request.modelName + "' is not a C identifier";
      return false;
    }
    emit.modelName = request.modelName;
  }
  emit.embedWeights = request.embedWeights;
  emit.buildLibrary = request.buildLibrary;
  emit.optimizeLibrary = request.optimizeLibrary;
  findRuntime(emit.runtimeIncludeDir, emit.runtimeLibrary);
  emit.compiler = request.cxx;
  auto emitStart = std::chrono::steady_clock::now();
  KernelCode code;
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
  if (!request.report.empty() && !report.write(request.report, error))
    return false;
  if (!request.reportHtml.empty() && !report.writeHtml(request.reportHtml, error))
    return false;
  return true;
}

} // namespace kiln
