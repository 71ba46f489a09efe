//===- Driver.h - The compile driver ---------------------------*- C++ -*-===//
//
// What `kiln import`, `kiln compile` and `kiln inspect` do, as a library that the
// CLI and the tests call (the Python package runs the kiln executable, in its own
// process): load and check the model, import it, check fp16 against fp32 where
// asked (PrecisionCheck.h), run the phases (each timed for the report), print a
// phase's IR or emit the artifacts for a target. Every failure is one line in `error` naming the file and,
// where there is one, the ONNX node; nothing here exits or throws.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_DRIVER_H
#define KILN_COMPILER_DRIVER_DRIVER_H

#include "codegen/Target.h"
#include "passes/fusion/FusionRules.h"
#include "compiler/report/Report.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// A model file and the shapes its inputs are pinned to.
struct ModelInput {
  /// Binary .onnx, or the ONNX text syntax (.onnxtxt).
  std::string path;
  /// NAME=1x3x224x224, one per pinned input.
  std::vector<std::string> inputShapes;
  /// NAME=3 | NAME=1,2 | NAME=file.npy | NAME=file.pb, one per input frozen into a
  /// constant (it leaves the compiled model's interface).
  std::vector<std::string> inputValues;
  /// `kiln compare --all-tensors`: every node output of the main graph becomes a
  /// model output too (after the model's own, in node order).
  bool exposeAllTensors = false;
  /// Testing `kiln compare`: the float output of the node so named gets 1 added
  /// (a deliberately broken node).
  std::string injectFault;
};

struct ImportRequest {
  ModelInput model;
  /// Where the IR goes ("" or "-": stdout).
  std::string output;
  bool printWeights = false;
  bool printLocations = false;
  /// Print load and import times to stderr.
  bool timing = false;
};

/// `kiln import`: the model as onnx-dialect IR.
bool importModel(const ImportRequest &request, std::string &error);

/// `kiln inspect`: opsets, inputs and outputs, and an op histogram, to `os`.
bool inspectModel(const ModelInput &model, llvm::raw_ostream &os, std::string &error);

struct CompileRequest {
  ModelInput model;
  /// The phase to stop after and print ("emit": write the artifacts).
  std::string compileTo = "emit";
  std::string target = "host";
  TargetOptions targetOptions;
  /// Fusion rules left out (CompileOptions::noFuse; "all": one op per kernel).
  std::vector<std::string> noFuse;
  /// Scheduling: the most streams at once (0: the target's default) and the
  /// arena budget in bytes (0: none) (CompileOptions).
  int64_t maxStreams = 0;
  int64_t memoryBudget = 0;
  /// fp32, fp16 (kiln-convert-to-fp16) or auto (fp16, checked against fp32 on
  /// sample inputs; ops whose error grows past the tolerance move back to f32).
  std::string precision = "fp32";
  /// fp16/auto: keep the graph's input and output types; nodes kept in f32.
  bool keepInputTypes = true, keepOutputTypes = true;
  std::vector<std::string> keepF32;
  /// auto: sample inputs (NAME=file.npy|.pb; others generated) and the tolerance
  /// (max abs error <= tolerance x the f32 output's max magnitude).
  std::vector<std::string> sampleInputs;
  double fp16Tolerance = 1e-2;
  /// auto: the most fp16 check builds before falling back to fp32.
  int fp16MaxRounds = 12;
  /// fp16: skip the host check builds (no overflow warning).
  bool precisionCheck = true;
  /// The artifact directory, or with compileTo the IR file ("" or "-": stdout).
  std::string output;
  /// Also build libmodel.so (its C++ at -O1, or -O0 without optimizeLibrary).
  bool buildLibrary = false, optimizeLibrary = true;
  bool embedWeights = false;
  /// The model's name, a C identifier (EmitOptions::modelName): a named model
  /// exports kiln_model_definition_<name> and links beside others. Empty: unnamed.
  std::string modelName;
  /// With compileTo: print large constants in full.
  bool printWeights = false;
  /// The compile report as JSON and as a page (full compiles only).
  std::string report, reportHtml;
  /// The C++ compiler that builds libmodel.so.
#ifdef KILN_MODEL_CXX
  std::string cxx = KILN_MODEL_CXX; // a sanitizer build's compiler (one runtime)
#else
  std::string cxx = "c++";
#endif
  /// Phase progress on stderr (the CLI: on a terminal, unless --quiet).
  bool progress = false;
  /// MLIR's instrumentation, as mlir-opt has it: the IR after every pass or after
  /// the passes named (by their argument, e.g. kiln-fold-affine), to stderr; the
  /// pass timing report on stderr at the end.
  bool printIrAfterAll = false;
  std::vector<std::string> printIrAfter;
  bool timing = false;
};

/// `kiln compile`, for every precision: fp32 as it is, fp16 and auto after the
/// precision check (PrecisionCheck.h; full compiles only: with compileTo the IR
/// is printed unchecked, and precisionCheck false skips it for fp16).
bool compileModel(const CompileRequest &request, std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_DRIVER_H
