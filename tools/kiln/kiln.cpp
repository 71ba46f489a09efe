//===- kiln.cpp - The Kiln command-line compiler --------------------------===//
//
// This file implements `kiln`, the command users run; the work is done by the
// compile driver (compiler/driver) and the run commands (RunCommand.h):
//   kiln import MODEL    print the model as onnx-dialect IR (the import phase)
//   kiln compile MODEL   run the phases; print one (--compile-to) or emit artifacts
//   kiln run DIR         execute a compiled artifact on .npy/.pb inputs
//   kiln bench DIR       time a compiled artifact
//   kiln inspect MODEL   opset, inputs and outputs, and an op histogram
// Every failure prints one `kiln: error: ...` line and exits non-zero.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/GpuArch.h"
#include "compiler/driver/Driver.h"
#include "dialects/onnx/OnnxSchemas.h"
#include "tools/kiln/CompareCommand.h"
#include "tools/kiln/RunCommand.h"
#include "kiln/runtime/WeightsFormat.h"
#include "kiln/runtime/model_abi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <unistd.h>

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

void addModelOptions(CLI::App *cmd, kiln::ModelInput &model) {
  cmd->add_option("model", model.path,
                  "ONNX model: binary .onnx, or ONNX text syntax (.onnxtxt)")
      ->required();
  cmd->add_option("--input-shape", model.inputShapes,
                  "Pin an input's shape, e.g. input=1x3x224x224 (repeatable)")
      ->type_name("NAME=DIMS");
  cmd->add_option("--input-value", model.inputValues,
                  "Freeze an input to a constant: NAME=3, NAME=1,2,3 (numbers in its type "
                  "and shape), NAME=file.npy or NAME=file.pb (repeatable); it leaves the "
                  "compiled model's inputs")
      ->type_name("NAME=VALUE");
}

/// Runs a driver call: 0, or 1 after printing its error.
int check(bool ok, const std::string &error) { return ok ? 0 : reportError(error); }

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Kiln: an ahead-of-time compiler for deep-learning inference on "
               "NVIDIA GPUs.\nImports ONNX models into MLIR; see `kiln COMMAND "
               "--help`."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kiln 0.1 (ONNX opsets 1-" +
                                        std::to_string(kiln::kMaxOnnxOpset) + ", LLVM/MLIR " +
                                        LLVM_VERSION_STRING + ", model ABI " +
                                        std::to_string(KILN_ABI_VERSION) + ", weights format " +
                                        kiln::rt::kWeightsMagic[7] + ")");

  kiln::ImportRequest importRequest;
  CLI::App *importCmd = app.add_subcommand(
      "import", "Print a model as onnx-dialect MLIR (the import phase)");
  addModelOptions(importCmd, importRequest.model);
  importCmd->add_option("-o,--output", importRequest.output,
                        "Write the IR here (default: stdout)");
  importCmd->add_flag("--print-weights", importRequest.printWeights,
                      "Print large constants in full instead of eliding them");
  importCmd->add_flag("--print-locations", importRequest.printLocations,
                      "Print each op's location (its ONNX node name)");
  importCmd->add_flag("--timing", importRequest.timing, "Print load and import times to stderr");

  kiln::CompileRequest compileRequest;
  std::string emitKind = "src";
  std::string noFuse;
  CLI::App *compileCmd = app.add_subcommand(
      "compile", "Compile a model: artifacts in -o DIR, or one phase's IR with --compile-to");
  addModelOptions(compileCmd, compileRequest.model);
  compileCmd->add_option("-o,--output", compileRequest.output,
                         "Artifact directory (or IR file with --compile-to)");
  compileCmd->add_option("--compile-to", compileRequest.compileTo,
                         "Stop after a phase and print its IR: import, graph, tensor, "
                         "kernels, plan, codegen, emit (default: emit)");
  compileCmd->add_option("--target", compileRequest.target,
                         "Target: host (default), cuda (PTX + the CUDA runtime) or cuda-sim "
                         "(the cuda kernels run on the CPU by a SIMT simulator: a checker)");
  compileCmd->add_option("--gpu-arch", compileRequest.targetOptions.gpu.arch,
                         "cuda: " + kiln::gpuArchList() +
                             " (default: the first; the driver JITs it for newer GPUs)");
  compileCmd->add_option("--max-streams", compileRequest.maxStreams,
                         "The most streams (concurrent kernels) a run uses; 1: sequential "
                         "(default: cuda 4; host 1, its library calls use every core; with "
                         "--contractions kiln one per core up to 4)")
      ->check(CLI::Range(int64_t(1), int64_t(64)));
  compileCmd->add_option("--memory-budget", compileRequest.memoryBudget,
                         "The most arena bytes: concurrent branches are serialized until "
                         "the plan fits (an error if even one stream does not)")
      ->check(CLI::PositiveNumber);
  compileCmd->add_option("--precision", compileRequest.precision,
                         "fp32 (default), fp16 (float tensors in f16 except precision-"
                         "sensitive ops; f32 accumulation) or auto (fp16, checked against "
                         "fp32 on sample inputs on the host: ops whose error grows past "
                         "--fp16-tolerance go back to f32)")
      ->check(CLI::IsMember({"fp32", "fp16", "auto"}));
  bool keepIoTypes = true;
  compileCmd->add_flag("--keep-io-types,!--no-keep-io-types", keepIoTypes,
                       "fp16/auto: the graph's inputs and outputs keep their types "
                       "(default; casts fused into the first and last kernels)");
  compileCmd->add_flag("!--no-precision-check", compileRequest.precisionCheck,
                       "fp16: skip the host check builds (and the overflow warning)");
  compileCmd->add_option("--keep-f32", compileRequest.keepF32,
                         "fp16/auto: a node (by name) that stays in f32; repeatable");
  compileCmd->add_option("--sample-input", compileRequest.sampleInputs,
                         "auto: an input's sample value (NAME=file.npy|.pb); repeatable; "
                         "others generated")
      ->type_name("NAME=FILE");
  compileCmd->add_option("--fp16-tolerance", compileRequest.fp16Tolerance,
                         "auto: max abs error of each output relative to the f32 "
                         "output's max magnitude (default 1e-2)")
      ->check(CLI::PositiveNumber);
  compileCmd->add_option("--fp16-max-rounds", compileRequest.fp16MaxRounds,
                         "auto: the most fp16 check builds; then, if none met the "
                         "tolerance, fp32 with a warning (default 12)")
      ->check(CLI::Range(1, 1000));
  compileCmd->add_option("--device-model", compileRequest.targetOptions.deviceModel,
                         "The scheduler's cost model: h200, a100 or host (default: host "
                         "for host; h200 for cuda, or the --gpu-arch's: sm_80 a100, sm_90 "
                         "h200)");
  compileCmd->add_option("--contractions", compileRequest.targetOptions.contractions,
                         "Who runs convolutions and matrix products: auto (host: oneDNN "
                         "wherever it can; cuda, cuda-sim: per contraction, cuBLASLt/cuDNN "
                         "or Kiln's kernel, whichever the cost model estimates faster; "
                         "Kiln's kernels otherwise and as the run-time fallback), kiln "
                         "(Kiln's own kernels) or library (every call the target's library "
                         "can take; an error where the target has none)")
      ->check(CLI::IsMember({"auto", "kiln", "library"}));
  compileCmd->add_flag("--fallback-kernels,!--no-fallback-kernels",
                       compileRequest.targetOptions.host.fallbackKernels,
                       "host: each library call's own kernel stays in the artifact, run "
                       "where oneDNN is missing or cannot run the call (default); without: "
                       "a smaller artifact, compiled in a third less time, whose runs "
                       "fail there");
  compileCmd->add_flag("--allow-tf32", compileRequest.targetOptions.gpu.allowTf32,
                       "cuda, cuda-sim: f32 contractions may run on tensor cores in TF32 "
                       "(Kiln's mma.sync kernels and the cuBLASLt and cuDNN calls; "
                       "default: f32 stays f32)");
  compileCmd->add_flag("--tensor-cores,!--no-tensor-cores",
                       compileRequest.targetOptions.gpu.tensorCores,
                       "cuda, cuda-sim: Kiln's f16/bf16 contractions run on tensor cores "
                       "(mma.sync; default); without: the SIMT kernels, for comparison");
  compileCmd
      ->add_option("--tensor-cores-min-size", compileRequest.targetOptions.gpu.tensorCoreMinSize,
                   "cuda, cuda-sim: the fewest rows, columns and K a contraction needs "
                   "for tensor cores (default 16; 1: every f16 contraction, however small)")
      ->check(CLI::PositiveNumber);
  compileCmd->add_flag("--cuda-graph", compileRequest.targetOptions.gpu.cudaGraph,
                       "cuda: capture a whole run as a CUDA graph, replay it on later runs");
  compileCmd->add_flag("--embed-weights", compileRequest.embedWeights,
                       "Build the weights into the model (model_weights.S); create it "
                       "with no weights path");
  compileCmd->add_option("--name", compileRequest.modelName,
                         "Name the model (a C identifier): it exports "
                         "kiln_model_definition_NAME instead of kiln_model_create, so "
                         "that several models link into one program (kiln_add_model "
                         "names each)");
  compileCmd->add_option("--emit", emitKind,
                         "src: model.h/.cpp/.o/.weights; lib: also libmodel.so");
  compileCmd->add_option("--cpu", compileRequest.targetOptions.host.cpu,
                         "Host CPU to tune for (default: native)");
  compileCmd->add_flag("--no-fuse{all}", noFuse,
                       "Leave fusion out, for comparison: --no-fuse (one op per kernel) "
                       "or --no-fuse=RULE[,RULE] with rules " +
                           llvm::join(kiln::fusionRules(), ", "));
  compileCmd->add_option("--report", compileRequest.report,
                         "Write the compile report (kernels, memory, phase times) as JSON");
  compileCmd->add_option("--report-html", compileRequest.reportHtml,
                         "Write the report as a page: launches per stream, arena occupancy");
  compileCmd->add_flag("--print-weights", compileRequest.printWeights,
                       "With --compile-to: print large constants in full");
  bool quiet = false;
  compileCmd->add_flag("-q,--quiet", quiet,
                       "No phase progress (shown on a terminal, never when stderr is piped)");
  compileCmd->add_flag("--mlir-print-ir-after-all", compileRequest.printIrAfterAll,
                       "Print the IR after every pass to stderr");
  compileCmd->add_option("--mlir-print-ir-after", compileRequest.printIrAfter,
                         "Print the IR after the named pass (e.g. kiln-fold-affine, "
                         "canonicalize) to stderr; repeatable")
      ->type_name("PASS");
  compileCmd->add_flag("--mlir-timing", compileRequest.timing,
                       "Print the time of every pass, phase by phase, to stderr");

  kiln::RunOptions runOptions;
  CLI::App *runCmd = app.add_subcommand(
      "run", "Run a compiled model (libmodel.so) on .npy or .pb inputs");
  runCmd->add_option("artifacts", runOptions.artifactDir,
                     "Directory written by `kiln compile --emit lib`")->required();
  runCmd->add_option("--input", runOptions.inputs,
                     "NAME=file.npy|file.pb, or a file for the next input (repeatable)");
  runCmd->add_option("--output-dir", runOptions.outputDir,
                     "Where to write NAME.npy per output (default: .)");
  runCmd->add_option("--repeat", runOptions.repeat,
                     "Run N times; fail unless every run's outputs equal the first's, "
                     "bitwise (a check for races between streams)")
      ->check(CLI::Range(1, 1000000));
  runCmd->add_option("--threads", runOptions.threads,
                     "Also run --repeat times on each of N threads at once, a context "
                     "each, checking every output against the first run's")
      ->check(CLI::Range(1, 256));

  kiln::BenchOptions benchOptions;
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "Time a compiled model: latency percentiles and throughput");
  benchCmd->add_option("artifacts", benchOptions.artifactDir,
                       "Directory written by `kiln compile --emit lib`")->required();
  benchCmd->add_option("--iterations", benchOptions.iterations, "Timed runs (default 100)");
  benchCmd->add_option("--warmup", benchOptions.warmup, "Untimed runs first (default 10)");
  benchCmd->add_option("--threads", benchOptions.threads,
                       "Threads running the model at once, a context each (default 1); "
                       "throughput is their total")
      ->check(CLI::Range(1, 256));

  kiln::CompareOptions compareOptions;
  std::string compareTargets = "host,cuda-sim";
  CLI::App *compareCmd = app.add_subcommand(
      "compare", "Run a model two ways (two targets, or against expected outputs or ONNX "
                 "Runtime) and compare every output");
  addModelOptions(compareCmd, compareOptions.model);
  compareCmd->add_option("--targets", compareTargets,
                         "A,B: two Kiln targets (B is the reference); one with --expected "
                         "or --onnxruntime (default host,cuda-sim)");
  std::string comparePrecisions = "fp32";
  compareCmd->add_option("--precisions", comparePrecisions,
                         "P or A,B: each build's precision (fp32, fp16, auto), e.g. "
                         "--targets host,host --precisions auto,fp32 (default fp32)");
  compareCmd->add_option("--contractions", compareOptions.contractions,
                         "Every build's contractions: auto, kiln or library (as compile's)")
      ->check(CLI::IsMember({"auto", "kiln", "library"}));
  compareCmd->add_option("--input", compareOptions.inputs,
                         "NAME=file.npy|file.pb (repeatable); other inputs are generated")
      ->type_name("NAME=FILE");
  compareCmd->add_option("--seed", compareOptions.seed, "Seed of the generated inputs");
  compareCmd->add_option("--expected", compareOptions.expected,
                         "NAME=file.npy|file.pb: compare with these outputs (repeatable)")
      ->type_name("NAME=FILE");
  compareCmd->add_flag("--onnxruntime", compareOptions.onnxruntime,
                       "Compare with ONNX Runtime (CPU), run by python3 or $KILN_PYTHON");
  compareCmd->add_option("--atol", compareOptions.atol,
                         "Absolute tolerance (default 1e-4): |a-b| <= atol + rtol*|b|");
  compareCmd->add_option("--rtol", compareOptions.rtol, "Relative tolerance (default 1e-3)");
  compareCmd->add_flag("--all-tensors", compareOptions.allTensors,
                       "Compare every node output of the main graph and name the first "
                       "node whose output diverges");
  compareCmd->add_option("--work-dir", compareOptions.workDir,
                         "Keep the builds, inputs and outputs here (default: a temporary "
                         "directory)");
  // Testing only: breaks one node of the reference build on purpose.
  compareCmd->add_option("--inject-fault", compareOptions.injectFault)->group("");

  kiln::ModelInput inspectModel;
  CLI::App *inspectCmd = app.add_subcommand(
      "inspect", "Show a model's opsets, inputs, outputs and op histogram");
  addModelOptions(inspectCmd, inspectModel);

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

  std::string error;
  if (importCmd->parsed())
    return check(kiln::importModel(importRequest, error), error);
  if (compileCmd->parsed()) {
    if (emitKind != "src" && emitKind != "lib")
      return reportError("--emit '" + emitKind + "' must be src or lib");
    compileRequest.buildLibrary = emitKind == "lib";
    for (llvm::StringRef rest = noFuse; !rest.empty();) {
      auto [rule, tail] = rest.split(',');
      if (rule != "all" && !llvm::is_contained(kiln::fusionRules(), rule))
        return reportError("--no-fuse: unknown rule '" + rule.str() + "' (all, " +
                           llvm::join(kiln::fusionRules(), ", ") + ")");
      compileRequest.noFuse.push_back(rule.str());
      rest = tail;
    }
    if (const char *cxx = std::getenv("CXX"))
      compileRequest.cxx = cxx;
    compileRequest.keepInputTypes = compileRequest.keepOutputTypes = keepIoTypes;
    compileRequest.progress = !quiet && isatty(STDERR_FILENO);
    return check(kiln::compileModel(compileRequest, error), error);
  }
  if (compareCmd->parsed()) {
    compareOptions.targets.clear();
    for (llvm::StringRef rest = compareTargets; !rest.empty();) {
      auto [target, tail] = rest.split(',');
      compareOptions.targets.push_back(target.str());
      rest = tail;
    }
    compareOptions.precisions.clear();
    for (llvm::StringRef rest = comparePrecisions; !rest.empty();) {
      auto [precision, tail] = rest.split(',');
      if (precision != "fp32" && precision != "fp16" && precision != "auto")
        return reportError("--precisions: unknown precision '" + precision.str() +
                           "' (fp32, fp16, auto)");
      compareOptions.precisions.push_back(precision.str());
      rest = tail;
    }
    if (const char *cxx = std::getenv("CXX"))
      compareOptions.cxx = cxx;
    return kiln::compareModel(compareOptions);
  }
  if (runCmd->parsed())
    return kiln::runModel(runOptions);
  if (benchCmd->parsed())
    return kiln::benchModel(benchOptions);
  return check(kiln::inspectModel(inspectModel, llvm::outs(), error), error);
}
