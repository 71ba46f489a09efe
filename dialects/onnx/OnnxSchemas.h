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

} // namespace kiln

#endif // KILN_DIALECTS_ONNX_ONNXSCHEMAS_H
