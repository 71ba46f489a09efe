//===- FusionRules.h - The names of Kiln's fusion rules ---------*- C++ -*-===//
//
// The one list of fusion rules: what `kiln compile --no-fuse=RULE` and a target's
// fusionRulesLeftOut() name, and the pass that applies each (the pipeline turns a
// rule left out into that pass's option).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_FUSIONRULES_H
#define KILN_PASSES_FUSION_FUSIONRULES_H

#include <string>
#include <vector>

namespace kiln {

/// The fusion rules `--no-fuse` names (CompileRequest::noFuse) ("all" leaves every one out, so
/// that each ONNX node is a kernel of its own): the graph phase's affine
/// (kiln-fold-batchnorm, kiln-fold-affine), siblings (kiln-merge-siblings) and
/// composites (kiln-recognize-composites); elementwise and transpose
/// (kiln-fuse-elementwise); epilogue, pad, concat, reduction and attention
/// (kiln-form-kernels).
inline const std::vector<std::string> &fusionRules() {
  static const std::vector<std::string> rules = {
      "affine", "siblings", "composites", "elementwise", "transpose",
      "epilogue", "pad", "concat", "reduction", "attention"};
  return rules;
}

} // namespace kiln

#endif // KILN_PASSES_FUSION_FUSIONRULES_H
