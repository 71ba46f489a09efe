//===- ModelLoader.h - Read, check and shape-infer an ONNX model -*- C++ -*-===//
//
// The loader is Kiln's only contact with libonnx's throwing API. It reads a model
// (binary protobuf or ONNX text syntax), pulls in external data safely, freezes inputs
// given a value into constants, pins symbolic input dimensions, runs the ONNX checker
// and shape inference, and hands back a
// ModelProto whose every value has a known type. Every failure is one line of text.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_MODELLOADER_H
#define KILN_COMPILER_IMPORT_MODELLOADER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace kiln {

struct LoadOptions {
  /// Input name -> dimensions that replace the input's (symbolic) shape.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Input name -> a value that freezes the input into a constant (it leaves the
  /// model's interface): "3", "1,2,3" (numbers in the input's element type and
  /// declared shape; a rank-1 input of unknown length takes their count), or a
  /// .npy or ONNX TensorProto .pb file.
  std::map<std::string, std::string> inputValues;
  /// Skip shape inference (for `kiln inspect`, which needs no shapes).
  bool inferShapes = true;
};

/// Loads `path` into `model`. On failure returns false and sets `error` to one
/// line that names the file and, where one is at fault, the node.
bool loadOnnxModel(const std::string &path, const LoadOptions &options,
                   onnx::ModelProto &model, std::string &error);

/// The same for a model held in memory, named `name` in errors; a `name` ending in
/// .onnxtxt, .onnxtext or .txt is ONNX text syntax. External data is refused (there
/// is no folder to read it from).
bool loadOnnxModelFromMemory(const std::string &bytes, const std::string &name,
                             const LoadOptions &options, onnx::ModelProto &model,
                             std::string &error);

/// `text` as one printable line: newlines and tabs become spaces, other control
/// characters \xNN (a model's names are the user's bytes, and errors quote them).
std::string oneLine(const std::string &text);

/// "node 'conv1' (Conv)"; an unnamed node is named by its first output. Every
/// import error names its node this way.
std::string nodeLabel(const onnx::NodeProto &node);

/// Splits `NAME=VALUE` (an --input-value); false when there is no name or value.
bool parseInputValue(const std::string &text, std::string &name, std::string &value);

/// Parses a `NAME=1x3x224x224` shape pin. Returns false on malformed text.
bool parseInputShape(const std::string &text, std::string &name,
                     std::vector<int64_t> &dims);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_MODELLOADER_H
