//===- Report.cpp - The compile report ------------------------------------===//
//
// This file implements the compile report (Report.h): what it collects from the
// kernels phase and the plan, and its JSON and HTML writers.
//
//===----------------------------------------------------------------------===//
#include "compiler/report/Report.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/graph/ConvertToFp16.h"
#include "passes/plan/PlanAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <set>

using namespace mlir;

namespace kiln {

/// The ONNX node names carried by `loc` (fused locations hold several).
using NameSet = llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>>;

static void nodeNames(Location loc, NameSet &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().str());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      nodeNames(inner, names);
}

void CompileReport::collectPrecision(ModuleOp module,
                                     const std::map<std::string, std::string> &namedReasons) {
  precision.keptF32.clear();
  auto isF32 = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.getElementType().isF32();
  };
  module.walk([&](func::FuncOp fn) {
    if (fn.isExternal())
      return;
    for (Operation &op : fn.getBody().front()) {
      StringRef name = op.getName().getStringRef();
      if (op.hasTrait<OpTrait::IsTerminator>() || name == "onnx.Constant" ||
          name == "onnx.Cast")
        continue;
      // Computing in f32: an f32 result (or, for ops without float results, an f32
      // operand).
      bool f32 = llvm::any_of(op.getResultTypes(), isF32) ||
                 llvm::any_of(op.getOperandTypes(), isF32);
      if (!f32)
        continue;
      std::string node = onnxNodeName(&op), reason = fp16KeepReason(&op);
      auto it = namedReasons.find(node);
      if (it != namedReasons.end())
        reason = it->second;
      if (reason.empty())
        reason = "requested (--keep-f32)";
      precision.keptF32.push_back({node, name.str(), reason});
    }
  });
}

void CompileReport::collectKernels(ModuleOp module) {
  kernels.clear();
  module.walk([&](KernelOp kernel) {
    NameSet names;
    // The ops that compute (fused bodies keep their nodes' locations), not the
    // destinations and constants cloned in.
    for (Operation &top : kernel.getBody().front().without_terminator()) {
      if (isa<tensor::EmptyOp, arith::ConstantOp, linalg::FillOp>(top))
        continue;
      top.walk([&](Operation *op) {
        if (!isa<arith::ConstantOp, linalg::YieldOp>(op))
          nodeNames(op->getLoc(), names);
      });
    }
    kernels.emplace_back(kernel.getName().str(),
                         std::vector<std::string>(names.begin(), names.end()));
  });
}

namespace {

/// Elements of `buffer` a kernel reads at most: all of them where a linalg op
/// takes it (or a view of it) as an operand or anything else uses it, but one per
/// load per iteration where only loads inside linalg bodies read it (a Gather's
/// table: the rows it picks, not the table).
int64_t elementsRead(Value buffer, int64_t all) {
  int64_t loaded = 0;
  std::function<bool(Value)> visit = [&](Value v) {
    for (Operation *user : v.getUsers()) {
      if (isa<ViewLikeOpInterface, memref::ExpandShapeOp, memref::CollapseShapeOp>(user)) {
        if (!visit(user->getResult(0)))
          return false;
        continue;
      }
      auto linalgOp = isa<memref::LoadOp>(user) ? user->getParentOfType<linalg::LinalgOp>()
                                                 : linalg::LinalgOp();
      if (!linalgOp || ShapedType::isDynamicShape(linalgOp.getStaticLoopRanges()))
        return false;
      loaded += iterations(linalgOp);
    }
    return true;
  };
  return visit(buffer) ? std::min(all, loaded) : all;
}

} // namespace

void CompileReport::collectPlan(ModuleOp module) {
  module.walk([&](PlanOp plan) {
    arenaBytes = static_cast<int64_t>(plan.getArenaBytes());
    weightBytes = static_cast<int64_t>(plan.getWeightBytes());
    lowerBoundBytes = static_cast<int64_t>(plan.getLowerBoundBytes().value_or(0));
    naiveBytes = static_cast<int64_t>(plan.getNaiveBytes().value_or(0));
    estimatedNs = static_cast<int64_t>(plan.getEstimatedNs().value_or(0));
    sequentialNs = static_cast<int64_t>(plan.getSequentialNs().value_or(0));
    sequentialArenaBytes = static_cast<int64_t>(plan.getSequentialArenaBytes().value_or(0));
    sequentialLowerBoundBytes =
        static_cast<int64_t>(plan.getSequentialLowerBoundBytes().value_or(0));
    events = static_cast<int64_t>(llvm::range_size(plan.getBody().getOps<RecordOp>()));
    schedule.clear();
    buffers.clear();
    llvm::DenseSet<Value> conditions;
    branchedSteps = 0;
    for (Operation &op : plan.getBody().front()) {
      SmallVector<std::pair<Value, bool>> guards = guardsOf(&op);
      branchedSteps += guards.empty() ? 0 : 1;
      for (auto &g : guards)
        conditions.insert(g.first);
      if (auto l = dyn_cast<LaunchOp>(op))
        schedule.push_back({l.getKernel().str(), static_cast<int64_t>(l.getStream())});
      else if (auto c = dyn_cast<CopyOp>(op))
        schedule.push_back({"copy", static_cast<int64_t>(c.getStream())});
    }
    HappensBefore hb(plan);
    for (const SliceTensor &t : sliceTensors(plan, hb))
      if (!t.uses.empty())
        buffers.push_back({static_cast<int64_t>(t.slice.getOffset()), t.size(),
                           static_cast<int64_t>(t.uses.front()),
                           static_cast<int64_t>(t.uses.back())});
    std::set<int64_t> used;
    for (const Step &s : schedule)
      used.insert(s.stream);
    launches = static_cast<int64_t>(
        llvm::count_if(schedule, [](const Step &s) { return s.kernel != "copy"; }));
    streams = static_cast<int64_t>(used.size());
    branchConditions = static_cast<int64_t>(conditions.size());
  });
  // Traffic: every buffer a launch takes, read or written once (of a table read
  // only by loads in linalg bodies, the elements loaded). FLOPs: the launch's own
  // count (kiln-build-plan's, what the cost model prices: the ops of each linalg
  // body times its trip count), which outlives the GPU mapping of its kernel.
  auto bytesOf = [](Value v) { return bufferBytes(cast<MemRefType>(v.getType())); };
  // Per kernel, the bytes it reads of each argument (a gathered table: its rows).
  llvm::StringMap<SmallVector<int64_t>> argumentBytes;
  for (auto fn : module.getOps<func::FuncOp>()) {
    SmallVector<int64_t> &args = argumentBytes[fn.getName()];
    for (BlockArgument a : fn.getArguments()) {
      auto type = dyn_cast<MemRefType>(a.getType());
      int64_t all = type ? bufferBytes(type) : 0;
      int64_t elems = type && type.hasStaticShape() ? type.getNumElements() : 0;
      args.push_back(fn.isExternal() || elems == 0
                         ? all
                         : all / elems * elementsRead(a, elems));
    }
  }
  bytesRead = bytesWritten = flops = 0;
  kernelTraffic.clear();
  kernelEstimatedNs.clear();
  // What runs each contraction, and why.
  kernelEngines.clear();
  kernelFunctions.clear();
  tensorCoreLaunches = 0;
  module.walk([&](LaunchOp l) {
    if (std::optional<ArrayAttr> stages = l.getGpuStages())
      for (auto stage : stages->getAsRange<GpuStageAttr>())
        kernelFunctions[l.getKernel().str()].push_back(stage.getFunction().str());
    StringAttr engine = KilnDialect::EngineAttrHelper(l.getContext()).getAttr(l);
    StringAttr reason = KilnDialect::EngineReasonAttrHelper(l.getContext()).getAttr(l);
    if (!engine && !l.getLibraryAttr())
      return;
    std::string name = l.getLibraryAttr() ? "library" : engine.str();
    kernelEngines[l.getKernel().str()] = {name, reason ? reason.str() : ""};
    tensorCoreLaunches += name == kEngineTensorCores ? 1 : 0;
  });
  module.walk([&](LaunchOp l) {
    Traffic launch;
    const SmallVector<int64_t> &args = argumentBytes[l.getKernel()];
    for (auto [i, v] : llvm::enumerate(l.getBuffers())) {
      if (static_cast<int64_t>(i) >= static_cast<int64_t>(l.getNumInputs()))
        launch.bytesWritten += bytesOf(v);
      else
        launch.bytesRead += i < args.size() ? std::min(args[i], bytesOf(v)) : bytesOf(v);
    }
    launch.flops = static_cast<int64_t>(l.getFlops().value_or(0));
    if (LibraryCallAttr library = l.getLibraryAttr()) {
      libraryKernels[l.getKernel().str()] = library.getKind().str();
      ++libraryCalls;
    }
    if (IntegerAttr ns = KilnDialect::EstimatedNsAttrHelper(l.getContext()).getAttr(l))
      kernelEstimatedNs[l.getKernel().str()] += ns.getInt();
    Traffic &t = kernelTraffic[l.getKernel().str()];
    t.bytesRead += launch.bytesRead;
    t.bytesWritten += launch.bytesWritten;
    t.flops += launch.flops;
    bytesRead += launch.bytesRead;
    bytesWritten += launch.bytesWritten;
    flops += launch.flops;
  });
  module.walk([&](CopyOp c) {
    bytesRead += bytesOf(c.getSource());
    bytesWritten += bytesOf(c.getTarget());
  });
}

void CompileReport::collectCodegen(ModuleOp module) {
  int64_t emitted = 0;
  bool staged = false;
  module.walk([&](LaunchOp l) {
    if (ArrayAttr stages = l.getGpuStagesAttr()) {
      emitted += static_cast<int64_t>(stages.size());
      staged = true;
    } else {
      ++emitted;
    }
  });
  if (staged)
    launches = emitted;
}

bool CompileReport::write(const std::string &path, std::string &error) const {
  llvm::json::Array kernelList;
  llvm::json::Array fusedCounts;
  for (const auto &[name, nodes] : kernels) {
    llvm::json::Array nodeList;
    for (const std::string &n : nodes)
      nodeList.push_back(n);
    llvm::json::Object entry{{"name", name}, {"nodes", std::move(nodeList)}};
    auto it = kernelTraffic.find(name);
    if (it != kernelTraffic.end()) {
      entry["bytes_read"] = it->second.bytesRead;
      entry["bytes_written"] = it->second.bytesWritten;
      entry["flops"] = it->second.flops;
    }
    auto estimate = kernelEstimatedNs.find(name);
    if (estimate != kernelEstimatedNs.end())
      entry["estimated_ns"] = estimate->second;
    auto library = libraryKernels.find(name);
    if (library != libraryKernels.end())
      entry["library"] = library->second;
    auto functions = kernelFunctions.find(name);
    if (functions != kernelFunctions.end()) {
      llvm::json::Array list;
      for (const std::string &f : functions->second)
        list.push_back(f);
      entry["gpu_functions"] = std::move(list);
    }
    auto engine = kernelEngines.find(name);
    if (engine != kernelEngines.end()) {
      entry["engine"] = engine->second.first;
      if (!engine->second.second.empty())
        entry["engine_reason"] = engine->second.second;
    }
    kernelList.push_back(std::move(entry));
    fusedCounts.push_back(static_cast<int64_t>(nodes.size()));
  }
  llvm::json::Array steps;
  for (const Step &s : schedule)
    steps.push_back(llvm::json::Object{{"kernel", s.kernel}, {"stream", s.stream}});
  llvm::json::Array bufferList;
  for (const Buffer &b : buffers)
    bufferList.push_back(llvm::json::Object{
        {"offset", b.offset}, {"size", b.size}, {"first", b.first}, {"last", b.last}});
  llvm::json::Object phases;
  double total = 0;
  for (const auto &[phase, ms] : phaseMillis) {
    phases[phase] = ms;
    total += ms;
  }
  llvm::json::Array keptJson, errorJson;
  for (const Precision::Kept &k : precision.keptF32)
    keptJson.push_back(llvm::json::Object{{"node", k.node}, {"op", k.op}, {"reason", k.reason}});
  for (const Precision::OutputError &e : precision.outputErrors)
    errorJson.push_back(llvm::json::Object{
        {"output", e.name}, {"max_abs", e.maxAbs}, {"f32_max_magnitude", e.scale}});
  llvm::json::Object precisionJson{{"mode", precision.mode},
                                   {"kept_f32", std::move(keptJson)},
                                   {"output_errors", std::move(errorJson)},
                                   {"validation_s", precision.validationSeconds},
                                   {"validation_compile_s", precision.validationCompileSeconds},
                                   {"validation_run_s", precision.validationRunSeconds},
                                   {"validation_builds", precision.validationBuilds}};
  if (!precision.firstNonFinite.empty())
    precisionJson["first_non_finite"] = precision.firstNonFinite;
  if (precision.fellBackToFp32)
    precisionJson["fell_back_to_fp32"] = true;
  llvm::json::Array gpuKernels;
  for (const KernelResources &r : kernelResources)
    gpuKernels.push_back(llvm::json::Object{{"name", r.name},
                                            {"registers", r.registers},
                                            {"shared_bytes", r.sharedBytes},
                                            {"stack_bytes", r.stackBytes},
                                            {"spill_stores", r.spillStores},
                                            {"spill_loads", r.spillLoads},
                                            {"block_threads", r.blockThreads},
                                            {"occupancy", r.occupancy},
                                            {"tensor_cores", r.tensorCores}});
  llvm::json::Object root{
      {"model", model},
      {"target", target},
      {"nodes_in", nodesIn},
      {"kernels_out", static_cast<int64_t>(kernels.size())},
      {"launches", launches},
      {"library_calls", libraryCalls},
      {"tensor_core_launches", tensorCoreLaunches},
      {"gpu_kernels", std::move(gpuKernels)},
      {"gpu_kernels_from", kernelResourcesFrom},
      {"branched_steps", branchedSteps},
      {"branch_conditions", branchConditions},
      {"bytes_read", bytesRead},
      {"bytes_written", bytesWritten},
      {"flops", flops},
      {"ops_fused_per_kernel", std::move(fusedCounts)},
      {"kernels", std::move(kernelList)},
      {"streams", streams},
      {"events", events},
      {"estimated_ns", estimatedNs},
      {"sequential_ns", sequentialNs},
      {"arena_bytes", arenaBytes},
      {"lower_bound_bytes", lowerBoundBytes},
      {"sequential_arena_bytes", sequentialArenaBytes},
      {"sequential_lower_bound_bytes", sequentialLowerBoundBytes},
      {"naive_bytes", naiveBytes},
      {"weight_bytes", weightBytes},
      {"code_bytes", codeBytes},
      {"precision", std::move(precisionJson)},
      {"compile_ms", std::move(phases)},
      {"compile_ms_total", total},
      {"schedule", std::move(steps)},
      {"buffers", std::move(bufferList)},
  };
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return true;
}

static std::string escapeHtml(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

static std::string humanBytes(int64_t bytes) {
  auto b = static_cast<double>(bytes);
  if (bytes < 10000)
    return std::to_string(bytes) + " bytes";
  if (bytes < 1000000)
    return llvm::formatv("{0:f1} kB", b / 1e3).str();
  return llvm::formatv("{0:f2} MB", b / 1e6).str();
}

bool CompileReport::writeHtml(const std::string &path, std::string &error) const {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  llvm::StringMap<const std::vector<std::string> *> nodesOf;
  for (const auto &[name, nodes] : kernels)
    nodesOf[name] = &nodes;
  double totalMs = 0;
  for (const auto &phase : phaseMillis)
    totalMs += phase.second;
  int64_t lanes = 0;
  for (const Step &s : schedule)
    lanes = std::max(lanes, s.stream + 1);
  const auto steps = static_cast<int64_t>(schedule.size());
  // One column per step, 3 to 24 pixels wide, so that ~1,200 pixels hold the schedule.
  const double colW = std::clamp(1200.0 / std::max<int64_t>(steps, 1), 3.0, 24.0);
  const double left = 70, width = left + colW * static_cast<double>(steps) + 10;

  os << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kiln: "
     << escapeHtml(model) << "</title>\n<style>body{font:14px sans-serif;margin:24px;"
     << "color:#222}table{border-collapse:collapse}td{padding:2px 12px 2px 0}"
     << "h2{margin-top:28px}.scroll{overflow-x:auto}svg text{font:11px sans-serif}"
     << "</style></head><body>\n";
  os << "<h1>" << escapeHtml(model) << " <small>(" << escapeHtml(target)
     << ")</small></h1>\n<table>\n";
  auto row = [&](llvm::StringRef key, const std::string &value) {
    os << "<tr><td>" << key << "</td><td>" << escapeHtml(value) << "</td></tr>\n";
  };
  row("ONNX nodes in", std::to_string(nodesIn));
  row("kernels out", std::to_string(kernels.size()));
  row("launches", std::to_string(launches));
  row("library calls (the rest: Kiln's kernels)", std::to_string(libraryCalls));
  if (tensorCoreLaunches)
    row("Kiln's kernels on tensor cores (mma.sync)", std::to_string(tensorCoreLaunches));
  if (branchConditions)
    row("launches and copies in If branches (host-chosen)",
        std::to_string(branchedSteps) + " on " + std::to_string(branchConditions) +
            " conditions");
  row("streams", std::to_string(streams) + " (" + std::to_string(events) + " events)");
  row("estimated time (critical path / all launches in sequence)",
      llvm::formatv("{0:f1} / {1:f1} us", estimatedNs / 1e3, sequentialNs / 1e3).str());
  row("arena", humanBytes(arenaBytes));
  row("lower bound (most bytes live at once)", humanBytes(lowerBoundBytes));
  row("arena / lower bound of the sequential plan",
      humanBytes(sequentialArenaBytes) + " / " + humanBytes(sequentialLowerBoundBytes));
  row("naive (every intermediate its own buffer)", humanBytes(naiveBytes));
  row("weights", humanBytes(weightBytes));
  row(codeKind, humanBytes(codeBytes));
  row("compile time", llvm::formatv("{0:f0} ms", totalMs).str());
  os << "</table>\n";

  // Compile time per phase: one stacked bar.
  static const char *palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                  "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
  os << "<h2>Compile time per phase</h2>\n<svg width=\"820\" height=\"60\">\n";
  double x = 0;
  for (auto [i, phase] : llvm::enumerate(phaseMillis)) {
    double w = totalMs > 0 ? 800 * phase.second / totalMs : 0;
    os << llvm::formatv("<rect x=\"{0:f1}\" y=\"0\" width=\"{1:f1}\" height=\"24\" "
                        "fill=\"{2}\"><title>{3}: {4:f1} ms</title></rect>\n",
                        x, w, palette[i % 8], phase.first, phase.second);
    os << llvm::formatv("<text x=\"{0}\" y=\"44\" fill=\"{1}\">{2} {3:f0} ms</text>\n",
                        i * 115, palette[i % 8], phase.first, phase.second);
    x += w;
  }
  os << "</svg>\n";

  // Launches per stream, in schedule order.
  os << "<h2>Launches per stream</h2>\n<p>One column per launch in schedule order; "
     << "darker kernels fuse more ONNX nodes (hover for them, the engine and the "
     << "estimate); green: Kiln's tensor-core kernels, purple: library calls, orange: "
     << "copies.</p>\n<div class=\"scroll\">"
     << llvm::formatv("<svg width=\"{0:f0}\" height=\"{1}\">\n", width, 30 * lanes + 24);
  for (int64_t lane = 0; lane < lanes; ++lane)
    os << llvm::formatv("<text x=\"0\" y=\"{0}\">stream {1}</text>\n", 30 * lane + 17, lane);
  for (auto [i, s] : llvm::enumerate(schedule)) {
    const std::vector<std::string> *nodes = nodesOf.lookup(s.kernel);
    size_t fused = nodes ? nodes->size() : 0;
    int light = 85 - static_cast<int>(std::min<size_t>(fused, 8) * 7);
    std::string tip = s.kernel;
    int hue = s.kernel == "copy" ? 30 : 210;
    auto engine = kernelEngines.find(s.kernel);
    if (engine != kernelEngines.end()) {
      tip += "\nengine: " + engine->second.first;
      if (!engine->second.second.empty())
        tip += " (" + engine->second.second + ")";
      hue = engine->second.first == "library" ? 280
            : engine->second.first == kEngineTensorCores ? 120 : hue;
    }
    auto estimate = kernelEstimatedNs.find(s.kernel);
    if (estimate != kernelEstimatedNs.end())
      tip += llvm::formatv("\nestimate: {0:f1} us", estimate->second / 1e3).str();
    if (nodes)
      for (const std::string &n : *nodes)
        tip += "\n" + n;
    os << llvm::formatv("<rect x=\"{0:f1}\" y=\"{1}\" width=\"{2:f1}\" height=\"24\" "
                        "fill=\"hsl({3},55%,{4}%)\" stroke=\"#fff\" stroke-width=\"0.5\">"
                        "<title>{5}</title></rect>\n",
                        left + colW * static_cast<double>(i), 30 * s.stream + 2, colW, hue,
                        light, escapeHtml(tip));
  }
  os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">launch 0 .. {2}</text>\n", left,
                      30 * lanes + 18, std::max<int64_t>(steps - 1, 0))
     << "</svg></div>\n";

  // The arena over the schedule: live bytes per step, then every buffer's place.
  std::vector<int64_t> live(static_cast<size_t>(steps), 0);
  for (const Buffer &b : buffers)
    for (int64_t t = b.first; t <= b.last; ++t)
      live[static_cast<size_t>(t)] += b.size;
  const double chartH = 120, mapH = 360;
  const double scale = static_cast<double>(std::max<int64_t>(arenaBytes, 1));
  os << "<h2>Arena occupancy</h2>\n<p>Top: bytes live at each launch, with the arena ("
     << humanBytes(arenaBytes) << ", solid) and the lower bound (" << humanBytes(lowerBoundBytes)
     << ", dashed). Below: every buffer as its arena range (vertical) over its lifetime "
     << "(horizontal); buffers stacked at one offset are the reuse.</p>\n<div class=\"scroll\">"
     << llvm::formatv("<svg width=\"{0:f0}\" height=\"{1:f0}\">\n", width, chartH + mapH + 40);
  std::string points = llvm::formatv("{0},{1:f1}", left, chartH).str();
  for (auto [i, bytes] : llvm::enumerate(live)) {
    double y = chartH - chartH * static_cast<double>(bytes) / scale;
    double x0 = left + colW * static_cast<double>(i);
    points += llvm::formatv(" {0:f1},{1:f1} {2:f1},{1:f1}", x0, y, x0 + colW).str();
  }
  points += llvm::formatv(" {0:f1},{1:f1}", left + colW * static_cast<double>(steps), chartH);
  os << "<polygon points=\"" << points << "\" fill=\"#9ecae1\" stroke=\"#3182bd\"/>\n";
  os << llvm::formatv("<line x1=\"{0}\" x2=\"{1:f0}\" y1=\"0.5\" y2=\"0.5\" stroke=\"#222\"/>"
                      "<text x=\"0\" y=\"10\">arena</text>\n",
                      left, width);
  double lbY = chartH - chartH * static_cast<double>(lowerBoundBytes) / scale;
  os << llvm::formatv("<line x1=\"{0}\" x2=\"{1:f0}\" y1=\"{2:f1}\" y2=\"{2:f1}\" "
                      "stroke=\"#d62728\" stroke-dasharray=\"4 3\"/>\n",
                      left, width, lbY);
  const double mapTop = chartH + 30;
  os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2:f1}\" height=\"{3}\" "
                      "fill=\"#f4f4f4\"/><text x=\"0\" y=\"{4}\">offset 0</text>"
                      "<text x=\"0\" y=\"{5}\">{6}</text>\n",
                      left, mapTop, colW * static_cast<double>(steps), mapH, mapTop + 10,
                      mapTop + mapH, humanBytes(arenaBytes));
  for (auto [i, b] : llvm::enumerate(buffers)) {
    double y = mapTop + mapH * static_cast<double>(b.offset) / scale;
    double h = std::max(1.0, mapH * static_cast<double>(b.size) / scale);
    os << llvm::formatv("<rect x=\"{0:f1}\" y=\"{1:f1}\" width=\"{2:f1}\" height=\"{3:f1}\" "
                        "fill=\"{4}\" fill-opacity=\"0.8\" stroke=\"#fff\" stroke-width=\"0.5\">"
                        "<title>offset {5}, {6} bytes, launches {7}..{8}</title></rect>\n",
                        left + colW * static_cast<double>(b.first), y,
                        colW * static_cast<double>(b.last - b.first + 1), h,
                        palette[i % 8], b.offset, b.size, b.first, b.last);
  }
  os << "</svg></div>\n</body></html>\n";
  return true;
}

} // namespace kiln
