//===- TrainingOps.h - The preview-training optimizers as ONNX nodes -*- C++ -*-===//
//
// Adagrad, Adam and Momentum (domain ai.onnx.preview.training, version 1) are
// element-wise update rules with no function body in the ONNX schema. The loader
// rewrites each into default-domain nodes (Mul, Add, Sqrt, Pow, Where, ...) before
// the checker runs, so they import, fuse and lower like any element-wise chain.
// Every other operator of the training domain (Gradient) is left for the node check,
// which refuses it by name.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_TRAININGOPS_H
#define KILN_COMPILER_IMPORT_TRAININGOPS_H

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace kiln {

/// Rewrites the optimizer nodes of the model's graph (and subgraphs) in place; a
/// model with no ai.onnx opset import gets one. On a malformed node, or an ai.onnx
/// opset before 9 (the expansion needs Where), returns false with `error` naming
/// the node.
bool expandTrainingOptimizers(onnx::ModelProto &model, std::string &error);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TRAININGOPS_H
