//===- PrecisionCheck.cpp - `kiln compile --precision fp16|auto` ----------===//
//
// This file implements compileWithPrecision (PrecisionCheck.h).
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/PrecisionCheck.h"

#include "compiler/import/ModelLoader.h"
#include "tools/kiln/CompareCommand.h"
#include "tools/kiln/RunCommand.h"

#include "onnx/onnx_pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace kiln {
namespace {

/// One tensor of the fp16 build against the fp32 build.
struct TensorError {
  double maxAbs = 0; // over the elements finite in both
  double scale = 0;  // the f32 tensor's max finite magnitude
  bool nonFinite = false; // non-finite in f16 where f32 is finite
  double relative() const { return maxAbs == 0 ? 0 : maxAbs / std::max(scale, 1e-30); }
};

TensorError measure(const rt::HostTensor &f16, const rt::HostTensor &f32) {
  TensorError e;
  std::vector<double> got = tensorValues(f16), ref = tensorValues(f32);
  if (got.size() != ref.size()) {
    e.nonFinite = true;
    return e;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]))
      continue;
    e.scale = std::max(e.scale, std::fabs(ref[i]));
    if (!std::isfinite(got[i]))
      e.nonFinite = true;
    else
      e.maxAbs = std::max(e.maxAbs, std::fabs(got[i] - ref[i]));
  }
  return e;
}

/// The ONNX graph as the check sees it: nodes in order, named as the importer names
/// their ops (the node's name, or its first output's), and who produces each tensor.
struct Graph {
  std::vector<std::string> names, ops;
  std::vector<std::vector<std::string>> inputs, outputs;
  std::map<std::string, size_t> producer;
  std::vector<std::string> modelOutputs;
};

bool loadGraph(const ModelInput &model, Graph &g, std::string &err) {
  onnx::ModelProto proto;
  LoadOptions load;
  load.inferShapes = false;
  if (!loadOnnxModel(model.path, load, proto, err))
    return false;
  for (const onnx::NodeProto &node : proto.graph().node()) {
    g.names.push_back(node.name().empty() && node.output_size() ? node.output(0)
                                                                 : node.name());
    g.ops.push_back(node.op_type());
    g.inputs.emplace_back(node.input().begin(), node.input().end());
    g.outputs.emplace_back(node.output().begin(), node.output().end());
    for (const std::string &out : node.output())
      g.producer[out] = g.names.size() - 1;
  }
  for (const onnx::ValueInfoProto &out : proto.graph().output())
    g.modelOutputs.push_back(out.name());
  return true;
}

using Tensors = std::map<std::string, rt::HostTensor>;

class Checker {
public:
  Checker(const CompileRequest &request, std::string work)
      : request(request), work(std::move(work)) {}

  /// Builds the host library at `precision` with every node output exposed and
  /// `keep` in f32, and runs it on the sample inputs.
  bool run(const std::string &precision, const std::vector<std::string> &keep,
           Tensors &out, std::string &err) {
    CompileRequest build;
    build.model = request.model;
    build.model.exposeAllTensors = true;
    build.target = "host";
    build.precision = precision == "fp32" ? "fp32" : "fp16";
    build.keepF32 = keep;
    // Every node output is an output: f16 ones stay f16 (a cast kernel each
    // would double the launches); the comparison widens them.
    build.keepOutputTypes = false;
    build.output = work + "/" + precision + "-" + std::to_string(builds);
    build.buildLibrary = true;
    build.cxx = request.cxx;
    ++builds;
    if (!compileModel(build, err))
      return false;
    if (specs.empty() && !prepareInputs(build.output, request.sampleInputs, 0,
                                        work + "/inputs", specs, err))
      return false;
    std::vector<NamedTensor> outputs;
    if (!runArtifact(build.output, specs, outputs, err)) {
      err = "the " + precision + " check build failed to run: " + err;
      return false;
    }
    out.clear();
    for (NamedTensor &t : outputs)
      out[t.name] = std::move(t.tensor);
    return true;
  }

  int builds = 0;

private:
  const CompileRequest &request;
  std::string work;
  std::vector<std::string> specs;
};

} // namespace

bool compileWithPrecision(CompileRequest request, std::string &error) {
  if (request.precision == "fp32" || request.compileTo != "emit" ||
      (request.precision == "fp16" && !request.precisionCheck))
    return compileModel(request, error);
  auto start = std::chrono::steady_clock::now();
  Graph g;
  if (!loadGraph(request.model, g, error))
    return false;
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-precision", dir)) {
    error = "cannot create a temporary directory: " + ec.message();
    return false;
  }
  std::string work(dir);
  llvm::sys::fs::create_directories(work + "/inputs");
  Checker checker(request, work);
  Tensors f32, f16;
  bool ok = checker.run("fp32", {}, f32, error);
  std::vector<std::string> keep = request.keepF32;
  std::set<std::string> kept(keep.begin(), keep.end());
  CompileReport::Precision &result = request.precisionChecked;
  // auto, before any f16 build: a node that reads or writes values past f16's
  // range in the f32 run cannot be f16 (a Cast of its input or output overflows).
  if (ok && request.precision == "auto") {
    std::map<std::string, double> magnitude;
    for (const auto &[name, t] : f32)
      if (isFloat(t.desc.dtype))
        for (double v : tensorValues(t))
          if (std::isfinite(v))
            magnitude[name] = std::max(magnitude[name], std::fabs(v));
    for (size_t i = 0; i < g.names.size(); ++i) {
      double m = 0;
      for (const auto *list : {&g.inputs[i], &g.outputs[i]})
        for (const std::string &t : *list)
          if (auto it = magnitude.find(t); it != magnitude.end())
            m = std::max(m, it->second);
      if (m > 65504.0 && kept.insert(g.names[i]).second) {
        keep.push_back(g.names[i]);
        request.keepF32Reasons[g.names[i]] =
            llvm::formatv("auto: range: f32 values reach {0:e1}", m).str();
      }
    }
  }
  bool outputsOk = false;
  constexpr int kMaxRounds = 12;
  for (int round = 0; ok && round < kMaxRounds; ++round) {
    if (!(ok = checker.run("fp16", keep, f16, error)))
      break;
    // Per node: its outputs' error and its float inputs' (graph inputs and
    // constants: none).
    size_t n = g.names.size();
    std::vector<TensorError> nodeError(n);
    std::vector<double> inputRelative(n, 0.0);
    std::vector<char> inputNonFinite(n, 0);
    std::string firstNonFinite;
    for (size_t i = 0; i < n; ++i)
      for (const std::string &out : g.outputs[i]) {
        auto a = f16.find(out), b = f32.find(out);
        if (a == f16.end() || b == f32.end() || !isFloat(b->second.desc.dtype))
          continue;
        TensorError e = measure(a->second, b->second);
        if (e.nonFinite && firstNonFinite.empty())
          firstNonFinite = "'" + out + "' (node '" + g.names[i] + "', " + g.ops[i] + ")";
        if (e.nonFinite || e.relative() > nodeError[i].relative())
          nodeError[i] = e;
      }
    for (size_t i = 0; i < n; ++i)
      for (const std::string &in : g.inputs[i]) {
        auto p = g.producer.find(in);
        if (p == g.producer.end())
          continue;
        const TensorError &e = nodeError[p->second];
        inputRelative[i] = std::max(inputRelative[i], e.relative());
        inputNonFinite[i] |= e.nonFinite;
      }
    outputsOk = true;
    result.outputErrors.clear();
    for (const std::string &name : g.modelOutputs) {
      auto a = f16.find(name), b = f32.find(name);
      if (a == f16.end() || b == f32.end() || !isFloat(b->second.desc.dtype))
        continue;
      TensorError e = measure(a->second, b->second);
      result.outputErrors.push_back({name, e.nonFinite ? INFINITY : e.maxAbs, e.scale});
      outputsOk &= !e.nonFinite && e.maxAbs <= request.fp16Tolerance * e.scale;
    }
    result.firstNonFinite = firstNonFinite;
    if (request.precision == "fp16" || (outputsOk && firstNonFinite.empty()))
      break;
    // Where overflow starts; else where the error grows past the tolerance; else
    // where it grows most.
    std::vector<std::pair<size_t, std::string>> culprits;
    double tol = request.fp16Tolerance;
    for (size_t i = 0; i < n; ++i)
      if (!kept.count(g.names[i]) && nodeError[i].nonFinite && !inputNonFinite[i])
        culprits.push_back({i, "range: non-finite in f16"});
    for (size_t i = 0; culprits.empty() && i < n; ++i) {
      double e = nodeError[i].relative(), in = inputRelative[i];
      if (!kept.count(g.names[i]) && !nodeError[i].nonFinite && e > tol && e > 2 * in)
        culprits.push_back({i, llvm::formatv("error {0:e1} (inputs {1:e1})", e, in).str()});
    }
    if (culprits.empty()) {
      double worst = 0;
      size_t at = n;
      for (size_t i = 0; i < n; ++i) {
        double growth = nodeError[i].relative() - inputRelative[i];
        if (!kept.count(g.names[i]) && growth > worst)
          worst = growth, at = i;
      }
      if (at == n)
        break; // nothing left to move
      culprits.push_back({at, llvm::formatv("error growth {0:e1}", worst).str()});
    }
    for (auto &[i, why] : culprits) {
      kept.insert(g.names[i]);
      keep.push_back(g.names[i]);
      request.keepF32Reasons[g.names[i]] = "auto: " + why;
    }
  }
  llvm::sys::fs::remove_directories(work);
  if (!ok)
    return false;
  if (request.precision == "fp16" && !result.firstNonFinite.empty())
    fprintf(stderr, "kiln: warning: %s: in f16, %s becomes non-finite where f32 is finite "
                    "(--precision auto keeps such ops in f32)\n",
            request.model.path.c_str(), result.firstNonFinite.c_str());
  if (request.precision == "auto" && (!outputsOk || !result.firstNonFinite.empty())) {
    fprintf(stderr, "kiln: warning: %s: no f16 version met the tolerance; compiling "
                    "in fp32\n", request.model.path.c_str());
    request.precision = "fp32";
    keep.clear();
  }
  request.keepF32 = keep;
  result.validationBuilds = checker.builds;
  result.validationSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compileModel(request, error);
}

} // namespace kiln
