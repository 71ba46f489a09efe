//===- PrecisionCheck.cpp - `kiln compile --precision fp16|auto` ----------===//
//
// This file implements compileWithPrecision (PrecisionCheck.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/PrecisionCheck.h"
#include "compiler/driver/ArtifactRun.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/TensorFiles.h"
#include "kiln/runtime/HostLibrary.h"

#include "onnx/onnx_pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <csignal>
#include <cerrno>
#include <fstream>
#include <memory>
#include <sstream>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

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

/// The check builds. Each builds the host library at a precision with every node
/// output exposed and some nodes kept in f32, and runs it on the sample inputs, in a
/// child process of its own: the fp32 and the first fp16 build run at once (LLVM's
/// optimizer reads process-wide options, which one build at a time may set, so
/// threads would not do), and a crash in a check build is reported, not shared.
/// Where fork fails, a build runs here, in this process.
class Checker {
public:
  Checker(const CompileRequest &request, std::string work)
      : request(request), work(std::move(work)) {}

  struct Build {
    std::string precision, dir;
    pid_t pid = -1; // -1: done in this process (`done` holds its result)
    bool done = false, ok = false;
    std::string error;
    Tensors outputs;
  };

  /// Starts a check build of `precision` ("fp32" or "fp16") with `keep` in f32,
  /// one of `concurrent` builds running at once: they share the cores (oneDNN's
  /// OpenMP threads, unless OMP_NUM_THREADS or KILN_NUM_THREADS say otherwise; two
  /// builds of 2 threads each on 2 cores spun: ResNet-50's two runs took 2.3 s,
  /// 0.4 s with a thread each).
  std::unique_ptr<Build> start(const std::string &precision,
                               const std::vector<std::string> &keep, int concurrent) {
    auto build = std::make_unique<Build>();
    build->precision = precision;
    build->dir = work + "/" + precision + "-" + std::to_string(builds++);
    llvm::sys::fs::create_directories(build->dir + "/inputs");
    llvm::sys::fs::create_directories(build->dir + "/outputs");
    fflush(stdout);
    fflush(stderr);
    build->pid = fork();
    if (build->pid == 0) {
      if (concurrent > 1 && !getenv("OMP_NUM_THREADS") && !getenv("KILN_NUM_THREADS")) {
        unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        setenv("OMP_NUM_THREADS",
               std::to_string(std::max(1u, cores / static_cast<unsigned>(concurrent))).c_str(),
               0);
      }
      std::string err;
      bool ok = runHere(*build, keep, err);
      if (!ok)
        writeFile(build->dir + "/error", err);
      _exit(ok ? 0 : 1);
    }
    if (build->pid < 0) {
      build->done = true;
      build->ok = runHere(*build, keep, build->error) && readOutputs(*build, build->error);
    }
    return build;
  }

  /// Waits for `build`; its outputs by tensor name, or false with `err`.
  bool finish(Build &build, Tensors &out, std::string &err) {
    if (!build.done) {
      int status = 0;
      while (waitpid(build.pid, &status, 0) < 0 && errno == EINTR) {
      }
      build.done = true;
      if (WIFSIGNALED(status)) {
        build.error = "the " + build.precision + " check build crashed (signal " +
                      std::to_string(WTERMSIG(status)) + ")";
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        build.error = readFile(build.dir + "/error");
        if (build.error.empty())
          build.error = "the " + build.precision + " check build failed";
      } else {
        build.ok = readOutputs(build, build.error);
      }
    }
    if (!build.ok) {
      err = build.error;
      return false;
    }
    out = std::move(build.outputs);
    return true;
  }

  /// Stops a build whose result is no longer wanted.
  void cancel(Build &build) {
    if (!build.done && build.pid > 0) {
      kill(build.pid, SIGKILL);
      while (waitpid(build.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    build.done = true;
  }

  int builds = 0;
  double compileSeconds = 0, runSeconds = 0;

private:
  /// Compiles and runs one check build; the outputs go to DIR/outputs as .npy, with
  /// their names in DIR/outputs/names, and the two times to DIR/times.
  bool runHere(const Build &b, const std::vector<std::string> &keep, std::string &err) {
    CompileRequest build;
    build.model = request.model;
    build.model.exposeAllTensors = true;
    build.target = referenceTargetName();
    build.precision = b.precision;
    build.keepF32 = keep;
    // Every node output is an output: f16 ones stay f16 (a cast kernel each
    // would double the launches); the comparison widens them.
    build.keepOutputTypes = false;
    build.output = b.dir + "/artifact";
    build.buildLibrary = true;
    build.optimizeLibrary = false; // it runs once
    build.cxx = request.cxx;
    // With oneDNN here, the library calls need no fallback kernels: without them
    // the build is a third of the LLVM work (ResNet-50: 97% of its kernel code is
    // contractions). Should a call still need its kernel, the build is made again
    // with them (in a directory of its own: the first library stays loaded).
    build.targetOptions.host.fallbackKernels = !rt::hostLibraryAvailable();
    std::vector<std::string> specs;
    std::vector<NamedTensor> outputs;
    double compileSeconds = 0, runSeconds = 0;
    auto since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    for (bool ran = false; !ran;) {
      auto t0 = std::chrono::steady_clock::now();
      if (!compileOnce(build, PrecisionOutcome(), err))
        return false;
      compileSeconds += since(t0);
      auto t1 = std::chrono::steady_clock::now();
      specs.clear();
      if (!prepareInputs(build.output, request.sampleInputs, 0, b.dir + "/inputs", specs, err))
        return false;
      ran = runArtifact(build.output, specs, outputs, err);
      runSeconds += since(t1);
      if (!ran && build.targetOptions.host.fallbackKernels) {
        err = "the " + b.precision + " check build failed to run: " + err;
        return false;
      }
      build.targetOptions.host.fallbackKernels = true;
      build.output = b.dir + "/artifact-with-fallbacks";
    }
    std::string names;
    for (size_t i = 0; i < outputs.size(); ++i) {
      rt::Status s = rt::writeNpy(b.dir + "/outputs/" + std::to_string(i) + ".npy",
                                  outputs[i].tensor);
      if (!s) {
        err = s.message();
        return false;
      }
      names += outputs[i].name + '\n';
    }
    writeFile(b.dir + "/outputs/names", names);
    writeFile(b.dir + "/times",
              llvm::formatv("{0:f6} {1:f6}", compileSeconds, runSeconds).str());
    return true;
  }

  bool readOutputs(Build &b, std::string &err) {
    std::istringstream names(readFile(b.dir + "/outputs/names"));
    std::string name;
    b.outputs.clear();
    for (size_t i = 0; std::getline(names, name); ++i) {
      rt::HostTensor t;
      if (!readTensorFile(b.dir + "/outputs/" + std::to_string(i) + ".npy", t, err))
        return false;
      b.outputs[name] = std::move(t);
    }
    double c = 0, r = 0;
    if (sscanf(readFile(b.dir + "/times").c_str(), "%lf %lf", &c, &r) == 2)
      compileSeconds += c, runSeconds += r;
    // The artifact and the tensors are read: free the space for the next build.
    llvm::sys::fs::remove_directories(b.dir);
    return true;
  }

  static void writeFile(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string readFile(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  const CompileRequest &request;
  std::string work;
};

} // namespace

bool compileWithPrecision(const CompileRequest &given, std::string &error) {
  if (given.precision == "fp32" || given.compileTo != "emit" ||
      (given.precision == "fp16" && !given.precisionCheck))
    return compileOnce(given, PrecisionOutcome(), error);
  CompileRequest request = given; // its keepF32 grows with the nodes the check keeps
  PrecisionOutcome outcome;
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
  Checker checker(request, work);
  std::vector<std::string> keep = request.keepF32;
  std::set<std::string> kept(keep.begin(), keep.end());
  // The fp32 build and the first fp16 one at once; the fp16 one is discarded if
  // the range pre-pass below moves nodes to f32.
  std::unique_ptr<Checker::Build> f32Build = checker.start("fp32", {}, 2);
  std::unique_ptr<Checker::Build> f16Build = checker.start("fp16", keep, 2);
  Tensors f32, f16;
  bool ok = checker.finish(*f32Build, f32, error);
  CompileReport::Precision &result = outcome.measured;
  // auto: a node that reads or writes values past f16's range in the f32 run
  // cannot be f16 (a Cast of its input or output overflows): f32 before any f16
  // build is measured.
  if (ok && request.precision == "auto") {
    std::map<std::string, double> magnitude;
    for (const auto &[name, t] : f32)
      if (isFloat(t.desc.dtype)) {
        double m = 0;
        for (double v : tensorValues(t))
          if (std::isfinite(v))
            m = std::max(m, std::fabs(v));
        magnitude[name] = m;
      }
    for (size_t i = 0; i < g.names.size(); ++i) {
      double m = 0;
      for (const auto *list : {&g.inputs[i], &g.outputs[i]})
        for (const std::string &t : *list)
          if (auto it = magnitude.find(t); it != magnitude.end())
            m = std::max(m, it->second);
      if (m > 65504.0 && kept.insert(g.names[i]).second) {
        keep.push_back(g.names[i]);
        outcome.keepF32Reasons[g.names[i]] =
            llvm::formatv("auto: range: f32 values reach {0:e1}", m).str();
        if (f16Build)
          checker.cancel(*f16Build);
        f16Build.reset();
      }
    }
  }
  bool outputsOk = false;
  for (int round = 0; ok && round < request.fp16MaxRounds; ++round) {
    if (!f16Build)
      f16Build = checker.start("fp16", keep, 1);
    ok = checker.finish(*f16Build, f16, error);
    f16Build.reset();
    if (!ok)
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
      outcome.keepF32Reasons[g.names[i]] = "auto: " + why;
    }
  }
  if (f16Build)
    checker.cancel(*f16Build);
  if (!ok)
    return false; // the work directory stays for the logs the error names
  llvm::sys::fs::remove_directories(work);
  if (request.precision == "fp16" && !result.firstNonFinite.empty())
    fprintf(stderr, "kiln: warning: %s: in f16, %s becomes non-finite where f32 is finite "
                    "(--precision auto keeps such ops in f32)\n",
            request.model.path.c_str(), result.firstNonFinite.c_str());
  if (request.precision == "auto" && (!outputsOk || !result.firstNonFinite.empty())) {
    fprintf(stderr, "kiln: warning: %s: no f16 version met the tolerance; compiling "
                    "in fp32\n", request.model.path.c_str());
    request.precision = "fp32";
    keep.clear();
    result.fellBackToFp32 = true;
    result.outputErrors.clear(); // fp32's own: none
  }
  request.keepF32 = keep;
  result.validationBuilds = checker.builds;
  result.validationCompileSeconds = checker.compileSeconds;
  result.validationRunSeconds = checker.runSeconds;
  result.validationSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compileOnce(request, outcome, error);
}

} // namespace kiln
