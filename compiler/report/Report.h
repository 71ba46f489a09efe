//===- Report.h - The compile report ----------------------------*- C++ -*-===//
//
// What `kiln compile --report report.json` writes: per model, the node count in,
// kernels out with the ONNX nodes fused into each, streams used, arena bytes next
// to the live lower bound and the naive sum of all intermediates, weight bytes, the
// size of the target's code, and the compile time of every phase. The same as a
// picture (`--report-html`): the launches per stream in schedule order and the arena's
// occupancy over that schedule (every buffer as offset x lifetime, live bytes per step).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_REPORT_REPORT_H
#define KILN_COMPILER_REPORT_REPORT_H

#include "codegen/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct CompileReport {
  std::string model;
  std::string target;
  int64_t nodesIn = 0;
  /// Per kernel: its name and the ONNX nodes (by location name) it computes.
  std::vector<std::pair<std::string, std::vector<std::string>>> kernels;
  int64_t streams = 0;
  /// Launches as emitted: a kernel's GPU stages each launch on cuda and cuda-sim.
  int64_t launches = 0;
  /// Per inference: global-memory bytes the launches read and write (each buffer
  /// once per launch that takes it) and the arithmetic ops their loops execute.
  int64_t bytesRead = 0, bytesWritten = 0, flops = 0;
  /// The same per kernel (per launch of it; each kernel launches once a run).
  struct Traffic {
    int64_t bytesRead = 0, bytesWritten = 0, flops = 0;
  };
  std::map<std::string, Traffic> kernelTraffic;
  /// Per kernel: the cost model's estimate of its launch alone on the device (ns,
  /// kiln.estimated_ns; summed where a kernel launches more than once).
  std::map<std::string, int64_t> kernelEstimatedNs;
  /// Kernels whose launch is a library call (#kiln.library_call): the contraction
  /// kind ("conv", "matmul"); `libraryCalls` counts those launches.
  std::map<std::string, std::string> libraryKernels;
  int64_t libraryCalls = 0;
  /// Per contraction kernel: its engine ("library", or its kernel's kiln.engine:
  /// "tensor_cores", "simt") and why (kiln.engine_reason); and how many launches
  /// run Kiln's kernels on tensor cores (not library calls).
  std::map<std::string, std::pair<std::string, std::string>> kernelEngines;
  /// Per kernel on a GPU target: the GPU functions its launch runs (its stages;
  /// kernels with the same body share them).
  std::map<std::string, std::vector<std::string>> kernelFunctions;
  int64_t tensorCoreLaunches = 0;
  /// Launches and copies in a branch of an If decided at run time (guarded: the
  /// host runs one branch's), and the conditions they branch on.
  int64_t branchedSteps = 0, branchConditions = 0;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t naiveBytes = 0;
  /// Scheduling: cross-stream events, the cost model's critical path of the
  /// schedule and the sum of all launches (ns), and the sequential plan's arena and
  /// its lower bound.
  int64_t events = 0;
  int64_t estimatedNs = 0, sequentialNs = 0;
  int64_t sequentialArenaBytes = 0, sequentialLowerBoundBytes = 0;
  int64_t weightBytes = 0;
  int64_t codeBytes = 0; // the target's code
  std::string codeKind = "code"; // what it is: "object code", "PTX"
  /// GPU targets: each kernel's registers, shared memory, spills and occupancy
  /// (ptxas -v), and where they come from or why there are none.
  std::vector<KernelResources> kernelResources;
  std::string kernelResourcesFrom;
  std::vector<std::pair<std::string, double>> phaseMillis;

  /// The plan's launches (and copies) in schedule order.
  struct Step {
    std::string kernel; // "copy" for a copy
    int64_t stream = 0;
  };
  std::vector<Step> schedule;
  /// Every arena buffer: where it lives and the first and last step that touch it.
  struct Buffer {
    int64_t offset = 0, size = 0, first = 0, last = 0;
  };
  std::vector<Buffer> buffers;

  /// --precision fp16/auto: every op left computing in f32 and why (the
  /// keep-list's reason, or what the auto check measured), each output's error
  /// against the f32 build on the sample inputs, and what the check cost.
  struct Precision {
    std::string mode = "fp32";
    struct Kept {
      std::string node, op, reason;
    };
    std::vector<Kept> keptF32;
    struct OutputError {
      std::string name;
      double maxAbs = 0, scale = 0; // scale: the f32 output's max magnitude
    };
    std::vector<OutputError> outputErrors;
    double validationSeconds = 0; // all of it; of which:
    double validationCompileSeconds = 0; // the check builds (with their libraries)
    double validationRunSeconds = 0;     // running them on the sample inputs
    int validationBuilds = 0;
    /// The first tensor that became non-finite in f16 where f32 was finite.
    std::string firstNonFinite;
    /// auto found no f16 version within the tolerance and compiled fp32.
    bool fellBackToFp32 = false;
  };
  Precision precision;

  /// After the graph phase with fp16: the ops left in f32 (keptF32), with the
  /// reasons for nodes kept by name from `namedReasons`.
  void collectPrecision(mlir::ModuleOp module,
                        const std::map<std::string, std::string> &namedReasons);
  /// After the kernels phase: the kernels and the nodes inside each.
  void collectKernels(mlir::ModuleOp module);
  /// After the plan phase: streams, launches, memory figures, bytes and FLOPs.
  void collectPlan(mlir::ModuleOp module);
  /// After the codegen phase: the launches as emitted (GPU stages).
  void collectCodegen(mlir::ModuleOp module);
  /// Writes the report as JSON; false with `error` on I/O failure.
  bool write(const std::string &path, std::string &error) const;
  /// Writes the report as one self-contained HTML page (inline SVG, no scripts).
  bool writeHtml(const std::string &path, std::string &error) const;
};

} // namespace kiln

#endif // KILN_COMPILER_REPORT_REPORT_H
