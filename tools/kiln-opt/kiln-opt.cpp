//===- kiln-opt.cpp - mlir-opt with Kiln's dialects and passes ------------===//
//
// This file implements kiln-opt, the driver of Kiln's lit tests: parses IR, runs the passes or phase pipelines
// named on the command line, prints the result. Registers only the dialects Kiln
// uses.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "codegen/Target.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  kiln::registerKilnPasses();
  kiln::registerCodegenPasses();
  kiln::registerPhasePipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
