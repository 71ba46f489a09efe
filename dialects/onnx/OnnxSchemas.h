//===- OnnxSchemas.h - ONNX schemas newer than the system libonnx ---------===//
//
// Debian's libonnx (1.12) knows the default domain up to opset 17. Exporters write
// opsets 18 to 21. This file extends libonnx's schema registry with the operator
// versions Kiln handles from those opsets, so the checker, shape inference and the
// dialect generator all see one consistent registry.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_ONNX_ONNXSCHEMAS_H
#define KILN_DIALECTS_ONNX_ONNXSCHEMAS_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace onnx {
class AttributeProto;
} // namespace onnx

namespace kiln {

/// The newest default-domain opset Kiln imports.
constexpr int kMaxOnnxOpset = 21;
/// The newest ONNX IR version Kiln imports.
constexpr int kMaxOnnxIrVersion = 10;

/// Registers the extension schemas (idempotent, thread-safe). Must run before any
/// libonnx checker or shape-inference call.
void registerOnnxSchemaExtensions();

/// The version of default-domain operator `opType` that a model importing `opset`
/// uses (its schema's since_version), or 0 when the operator is unknown.
int onnxSinceVersion(const std::string &opType, int opset);

/// The attributes of that operator version that have default values.
std::vector<::onnx::AttributeProto> onnxDefaultAttributes(const std::string &opType,
                                                         int opset);

/// What libonnx 1.12's shape-inference functions assume without checking: a stride,
/// dilation or kernel extent of 0 divides by zero (convPoolShapeInference); a
/// convolution's or pool's input of rank < 3, a Gemm operand of rank other than 2,
/// MaxUnpool indices of another rank than the input, an STFT or DFT signal without
/// its length and component axes and a LayerNormalization axis outside the input's
/// rank are indexed past the dimensions. Empty when the node
/// meets them, else what is wrong, for an error naming the node. `attribute` looks
/// an attribute up by name (null when absent); `inputRanks[i]` is -1 where unknown.
/// Both the loader (before libonnx's model-wide inference) and Kiln's own shape
/// functions (before a schema's inference function) ask it; the fuzz target
/// fuzz-model found both.
std::string inferencePreconditions(
    const std::string &opType,
    const std::function<const ::onnx::AttributeProto *(const std::string &)> &attribute,
    const std::vector<int64_t> &inputRanks);

} // namespace kiln

#endif // KILN_DIALECTS_ONNX_ONNXSCHEMAS_H
