//===- CompareCommand.cpp - `kiln compare` ---------------------------------===//
//
// This file implements `kiln compare` (CompareCommand.h): each Kiln side is
// compiled with `--emit lib` into the work directory and run through its C ABI
// (RunCommand.h) on the same inputs, given or generated (floats N(0, 1), integers
// in [0, 8), booleans; seeded). The reference is the last side: the second target,
// the expected files, or ONNX Runtime run by python3. With --all-tensors both
// builds expose every node output of the main graph (ModelInput::exposeAllTensors),
// compared in node order: the first that diverges names its node.
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/CompareCommand.h"

#include "compiler/import/ModelLoader.h"
#include "compiler/driver/ArtifactRun.h"
#include "compiler/import/TensorFiles.h"

#include "onnx/onnx_pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <random>

namespace kiln {
namespace {

int error(const std::string &message) {
  fprintf(stderr, "kiln: error: %s\n", message.c_str());
  return 2;
}

} // namespace

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return "[" + s + "]";
}

struct Difference {
  bool ok = true;
  std::string note; // why not, when it is not a matter of tolerance
  double maxAbs = 0, maxRel = 0;
  size_t mismatches = 0;
};

/// Compares GOT with the reference REF: |a - b| <= atol + rtol * |b| elementwise
/// for floats (NaN only where the reference has NaN), exact for the rest.
Difference compare(const rt::HostTensor &got, const rt::HostTensor &ref, double atol,
                   double rtol) {
  Difference d;
  if (got.desc.shape != ref.desc.shape) {
    d.ok = false;
    d.note = "shape " + shapeText(got.desc.shape) + " vs " + shapeText(ref.desc.shape);
    return d;
  }
  std::vector<double> a = tensorValues(got), b = tensorValues(ref);
  bool exact = !isFloat(got.desc.dtype) && !isFloat(ref.desc.dtype);
  for (size_t i = 0; i < a.size(); ++i) {
    double diff = std::fabs(a[i] - b[i]);
    bool same;
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      same = std::isnan(a[i]) && std::isnan(b[i]);
      diff = same ? 0 : INFINITY;
    } else if (std::isinf(a[i]) || std::isinf(b[i])) {
      same = a[i] == b[i];
      diff = same ? 0 : INFINITY;
    } else {
      same = exact ? a[i] == b[i] : diff <= atol + rtol * std::fabs(b[i]);
    }
    d.maxAbs = std::max(d.maxAbs, diff);
    if (diff > 0)
      d.maxRel = std::max(d.maxRel, diff / std::max(std::fabs(b[i]), 1e-30));
    if (!same)
      ++d.mismatches;
  }
  d.ok = d.mismatches == 0;
  return d;
}

} // namespace

namespace {

/// ONNX Runtime's outputs (CPU), through python3 ($KILN_PYTHON to choose one).
bool runOnnxRuntime(const CompareOptions &options, const std::vector<std::string> &specs,
                    const std::string &dir, std::vector<NamedTensor> &outputs,
                    std::string &err) {
  static const char *script = R"(
import os, sys
try:
    import numpy as np, onnx, onnxruntime as ort
    from onnx import numpy_helper
except ImportError as e:
    sys.exit(f"onnxruntime is not importable by {sys.executable}: {e}")
model, out, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
feeds = {}
for spec in specs:
    name, path = spec.split("=", 1)
    if path.endswith(".npy"):
        feeds[name] = np.load(path)
    else:
        t = onnx.TensorProto(); t.ParseFromString(open(path, "rb").read())
        feeds[name] = numpy_helper.to_array(t)
sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
names = [o.name for o in sess.get_outputs()]
for i, v in enumerate(sess.run(names, feeds)):
    np.save(os.path.join(out, f"{i}.npy"), np.ascontiguousarray(v))
print("\n".join(names))
)";
  const char *env = std::getenv("KILN_PYTHON");
  auto python = llvm::sys::findProgramByName(env ? env : "python3");
  if (!python) {
    err = "--onnxruntime: no python3 on PATH (or $KILN_PYTHON)";
    return false;
  }
  std::string names = dir + "/names.txt", log = dir + "/python.log";
  std::vector<llvm::StringRef> args = {*python, "-c", script, options.model.path, dir};
  for (const std::string &s : specs)
    args.push_back(s);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(names),
                                                llvm::StringRef(log)};
  int rc = llvm::sys::ExecuteAndWait(*python, args, std::nullopt, redirects);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    std::string why = text ? (*text)->getBuffer().trim().str() : "";
    size_t last = why.rfind('\n');
    err = "ONNX Runtime failed: " + (last == std::string::npos ? why : why.substr(last + 1));
    return false;
  }
  auto text = llvm::MemoryBuffer::getFile(names);
  if (!text) {
    err = "ONNX Runtime wrote no output names";
    return false;
  }
  llvm::SmallVector<llvm::StringRef> lines;
  (*text)->getBuffer().trim().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    NamedTensor t;
    t.name = lines[i].str();
    rt::Status s = rt::readNpy(dir + "/" + std::to_string(i) + ".npy", t.tensor);
    if (!s) {
      err = s.message();
      return false;
    }
    outputs.push_back(std::move(t));
  }
  return true;
}

} // namespace

int compareModel(const CompareOptions &options) {
  bool twoBuilds = options.expected.empty() && !options.onnxruntime;
  if (options.targets.size() != (twoBuilds ? 2u : 1u))
    return error(twoBuilds ? "--targets needs two targets (A,B), or one with --expected "
                             "or --onnxruntime"
                           : "--targets takes one target with --expected or --onnxruntime");
  if (!options.expected.empty() && options.onnxruntime)
    return error("--expected and --onnxruntime are two references: choose one");
  if (options.precisions.size() != 1 && options.precisions.size() != options.targets.size())
    return error("--precisions takes one precision or one per target");
  if (options.allTensors && !twoBuilds)
    return error("--all-tensors compares two Kiln builds (two --targets)");
  std::string work = options.workDir;
  if (work.empty()) {
    llvm::SmallString<128> dir;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-compare", dir))
      return error("cannot create a temporary directory: " + ec.message());
    work = std::string(dir);
  }
  llvm::sys::fs::create_directories(work + "/inputs");

  // The Kiln builds.
  std::vector<std::string> dirs;
  for (size_t i = 0; i < options.targets.size(); ++i) {
    CompileRequest request;
    request.model = options.model;
    request.model.exposeAllTensors = options.allTensors;
    bool last = i + 1 == options.targets.size();
    request.model.injectFault = last ? options.injectFault : "";
    request.target = options.targets[i];
    request.precision = options.precisions[options.precisions.size() == 1 ? 0 : i];
    request.targetOptions.contractions = options.contractions;
    request.output = work + "/" + std::to_string(i) + "-" + options.targets[i];
    request.buildLibrary = true;
    request.cxx = options.cxx;
    std::string err;
    if (!compileModel(request, err))
      return error(err);
    dirs.push_back(request.output);
  }
  std::vector<std::string> specs;
  std::string err;
  if (!prepareInputs(dirs[0], options.inputs, options.seed, work + "/inputs", specs, err))
    return error(err);

  std::vector<NamedTensor> got, ref;
  if (!runArtifact(dirs[0], specs, got, err))
    return error(options.targets[0] + ": " + err);
  std::string refName;
  if (twoBuilds) {
    refName = options.targets[1];
    if (!runArtifact(dirs[1], specs, ref, err))
      return error(refName + ": " + err);
  } else if (options.onnxruntime) {
    refName = "onnxruntime";
    llvm::sys::fs::create_directories(work + "/onnxruntime");
    if (!runOnnxRuntime(options, specs, work + "/onnxruntime", ref, err))
      return error(err);
  } else {
    refName = "expected";
    for (const std::string &spec : options.expected) {
      size_t eq = spec.find('=');
      if (eq == std::string::npos)
        return error("--expected '" + spec + "' is not of the form NAME=file.npy|file.pb");
      NamedTensor t{spec.substr(0, eq), {}};
      if (!readTensorFile(spec.substr(eq + 1), t.tensor, err))
        return error(err);
      ref.push_back(std::move(t));
    }
  }
  std::map<std::string, const rt::HostTensor *> refByName;
  for (const NamedTensor &t : ref)
    refByName[t.name] = &t.tensor;

  // The model's own outputs come first in `got`; with --all-tensors the rest are
  // the node outputs in node order.
  onnx::ModelProto proto;
  LoadOptions load;
  load.inferShapes = false;
  if (!loadOnnxModel(options.model.path, load, proto, err))
    return error(err);
  size_t modelOutputs = static_cast<size_t>(proto.graph().output_size());

  auto side = [&](size_t i) {
    std::string p = options.precisions[options.precisions.size() == 1 ? 0 : i];
    return options.targets[i] + (p == "fp32" ? "" : " " + p);
  };
  if (twoBuilds)
    refName = side(1);
  printf("kiln compare: %s, %s vs %s (reference), atol %g rtol %g\n",
         options.model.path.c_str(), side(0).c_str(), refName.c_str(), options.atol,
         options.rtol);
  printf("%-24s %-6s %-16s %12s %12s  %s\n", "output", "dtype", "shape", "max abs",
         "max rel", "result");
  bool allOk = true;
  size_t compared = 0;
  for (size_t i = 0; i < got.size() && i < modelOutputs; ++i) {
    auto it = refByName.find(got[i].name);
    if (it == refByName.end()) {
      if (!options.expected.empty())
        continue; // outputs without an expected file are not compared
      return error(refName + " has no output '" + got[i].name + "'");
    }
    Difference d = compare(got[i].tensor, *it->second, options.atol, options.rtol);
    ++compared;
    allOk &= d.ok;
    printf("%-24s %-6s %-16s %12.3g %12.3g  %s\n", got[i].name.c_str(),
           rt::dtypeName(got[i].tensor.desc.dtype), shapeText(got[i].tensor.desc.shape).c_str(),
           d.maxAbs, d.maxRel,
           d.ok ? "ok" : !d.note.empty() ? d.note.c_str()
                                         : ("FAIL (" + std::to_string(d.mismatches) +
                                            " elements)").c_str());
  }
  if (compared == 0)
    return error("nothing to compare: no --expected file names an output of the model");
  if (options.allTensors) {
    // In node order, so that the first divergence is where the error starts.
    std::map<std::string, size_t> position;
    for (int i = 0; i < proto.graph().node_size(); ++i)
      for (const std::string &out : proto.graph().node(i).output())
        position[out] = static_cast<size_t>(i);
    std::vector<const NamedTensor *> order;
    for (const NamedTensor &t : got)
      if (refByName.count(t.name) && position.count(t.name))
        order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [&](const NamedTensor *a, const NamedTensor *b) {
      return position[a->name] < position[b->name];
    });
    for (const NamedTensor *t : order) {
      Difference d = compare(t->tensor, *refByName[t->name], options.atol, options.rtol);
      if (d.ok)
        continue;
      const onnx::NodeProto &node = proto.graph().node(static_cast<int>(position[t->name]));
      printf("first divergence: node '%s' (%s), output '%s': max abs %.3g, max rel %.3g%s\n",
             node.name().c_str(), node.op_type().c_str(), t->name.c_str(), d.maxAbs,
             d.maxRel, d.note.empty() ? "" : (" (" + d.note + ")").c_str());
      printf("FAIL\n");
      return 1;
    }
    printf("all %zu node outputs within tolerance\n", order.size());
  }
  printf("%s\n", allOk ? "PASS" : "FAIL");
  return allOk ? 0 : 1;
}

} // namespace kiln
