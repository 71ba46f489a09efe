//===- Inspect.cpp - `kiln inspect` ---------------------------------------===//
//
// This file implements inspectModel (Driver.h): a model's opsets, inputs and
// outputs, weights and op histogram; and countNodes (DriverInternal.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/DriverInternal.h"

#include "llvm/Support/Format.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace kiln {

static std::string describeType(const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return "(non-tensor)";
  const auto &t = type.tensor_type();
  std::string s = onnx::TensorProto_DataType_Name(t.elem_type());
  for (char &c : s)
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  s += "[";
  if (!t.has_shape())
    return s + "?]";
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto &d = t.shape().dim(i);
    s += (i ? "x" : "");
    s += d.has_dim_value() ? std::to_string(d.dim_value())
         : d.has_dim_param() ? d.dim_param()
                             : "?";
  }
  return s + "]";
}

static void countOps(const onnx::GraphProto &graph, std::map<std::string, int> &histogram,
              int &nodes) {
  for (const auto &node : graph.node()) {
    ++nodes;
    ++histogram[node.domain().empty() ? node.op_type()
                                      : node.domain() + "." + node.op_type()];
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        countOps(attr.g(), histogram, nodes);
      for (const auto &g : attr.graphs())
        countOps(g, histogram, nodes);
    }
  }
}

int64_t countNodes(const onnx::GraphProto &graph) {
  std::map<std::string, int> histogram;
  int nodes = 0;
  countOps(graph, histogram, nodes);
  return nodes;
}

bool inspectModel(const ModelInput &input, llvm::raw_ostream &os, std::string &error) {
  onnx::ModelProto model;
  if (!loadModel(input, model, error))
    return false;
  const onnx::GraphProto &graph = model.graph();
  os << "model:      " << input.path << "\n";
  os << "ir_version: " << model.ir_version() << "\n";
  os << "opsets:    ";
  for (const auto &o : model.opset_import())
    os << " " << (o.domain().empty() ? "ai.onnx" : o.domain()) << "=" << o.version();
  os << "\n";
  if (!model.producer_name().empty())
    os << "producer:   " << model.producer_name() << " " << model.producer_version()
       << "\n";

  std::set<std::string> initNames;
  uint64_t weightBytes = 0;
  for (const auto &t : graph.initializer()) {
    initNames.insert(t.name());
    weightBytes += t.ByteSizeLong();
  }
  os << "inputs:\n";
  for (const auto &in : graph.input())
    if (!initNames.count(in.name()))
      os << "  " << in.name() << ": " << describeType(in.type()) << "\n";
  os << "outputs:\n";
  for (const auto &out : graph.output())
    os << "  " << out.name() << ": " << describeType(out.type()) << "\n";
  std::map<std::string, int> histogram;
  int nodes = 0;
  countOps(graph, histogram, nodes);
  os << "initializers: " << graph.initializer_size() << " ("
     << llvm::format("%.2f", weightBytes / 1048576.0) << " MiB)\n";
  os << "nodes: " << nodes << "\n";
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto &[op, count] : histogram)
    sorted.push_back({-count, op});
  std::sort(sorted.begin(), sorted.end());
  for (const auto &[negCount, op] : sorted)
    os << llvm::format("  %-24s %d\n", op.c_str(), -negCount);
  return true;
}

} // namespace kiln
