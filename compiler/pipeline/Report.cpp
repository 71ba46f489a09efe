//===- Report.cpp - The compile report ------------------------------------===//
#include "compiler/pipeline/Report.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

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

void CompileReport::collectPlan(ModuleOp module) {
  module.walk([&](PlanOp plan) {
    arenaBytes = static_cast<int64_t>(plan.getArenaBytes());
    weightBytes = static_cast<int64_t>(plan.getWeightBytes());
    if (auto a = plan->getAttrOfType<IntegerAttr>("kiln.lower_bound_bytes"))
      lowerBoundBytes = a.getInt();
    if (auto a = plan->getAttrOfType<IntegerAttr>("kiln.naive_bytes"))
      naiveBytes = a.getInt();
    std::set<int64_t> used;
    launches = 0;
    plan.getBody().walk([&](LaunchOp l) {
      used.insert(static_cast<int64_t>(l.getStream()));
      ++launches;
    });
    plan.getBody().walk([&](CopyOp c) { used.insert(static_cast<int64_t>(c.getStream())); });
    streams = static_cast<int64_t>(used.size());
  });
}

bool CompileReport::write(const std::string &path, std::string &error) const {
  llvm::json::Array kernelList;
  llvm::json::Array fusedCounts;
  for (const auto &[name, nodes] : kernels) {
    llvm::json::Array nodeList;
    for (const std::string &n : nodes)
      nodeList.push_back(n);
    kernelList.push_back(llvm::json::Object{{"name", name}, {"nodes", std::move(nodeList)}});
    fusedCounts.push_back(static_cast<int64_t>(nodes.size()));
  }
  llvm::json::Object phases;
  double total = 0;
  for (const auto &[phase, ms] : phaseMillis) {
    phases[phase] = ms;
    total += ms;
  }
  llvm::json::Object root{
      {"model", model},
      {"target", target},
      {"nodes_in", nodesIn},
      {"kernels_out", static_cast<int64_t>(kernels.size())},
      {"launches", launches},
      {"ops_fused_per_kernel", std::move(fusedCounts)},
      {"kernels", std::move(kernelList)},
      {"streams", streams},
      {"arena_bytes", arenaBytes},
      {"lower_bound_bytes", lowerBoundBytes},
      {"naive_bytes", naiveBytes},
      {"weight_bytes", weightBytes},
      {"code_bytes", codeBytes},
      {"compile_ms", std::move(phases)},
      {"compile_ms_total", total},
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

} // namespace kiln
