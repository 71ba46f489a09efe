//===- Passes.h - Kiln's target-independent passes --------------*- C++ -*-===//
//
// Every target-independent pass, by phase (each folder's Passes.td declares its
// own): graph, lowering (the tensor phase), fusion (the kernels phase) and plan;
// and their registration. The targets' codegen passes: codegen/Target.h's
// registerCodegenPasses.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "passes/fusion/Passes.h"
#include "passes/graph/Passes.h"
#include "passes/lowering/Passes.h"
#include "passes/plan/Passes.h"

namespace kiln {

/// Registers every pass of passes/ (kiln-opt).
inline void registerKilnPasses() {
  registerKilnGraphPasses();
  registerKilnLoweringPasses();
  registerKilnFusionPasses();
  registerKilnPlanPasses();
}

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
