//===- CompareRewrites.cpp - `kiln compare`'s rewrites of a model ---------===//
//
// This file implements rewriteForCompare (DriverInternal.h): every node output
// exposed as a graph output (--all-tensors), and a fault injected after a named node
// (--inject-fault, for testing the comparison itself).
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/DriverInternal.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <set>

namespace kiln {

bool rewriteForCompare(const ModelInput &input, onnx::ModelProto &model,
                       std::string &error) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int32_t> elemType; // what shape inference knows
  std::set<std::string> notTensors;          // sequences, optionals, maps
  for (const auto *list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &v : *list) {
      if (v.type().has_tensor_type())
        elemType[v.name()] = v.type().tensor_type().elem_type();
      else if (v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
        notTensors.insert(v.name());
    }
  if (!input.injectFault.empty()) {
    int at = -1;
    for (int i = 0; i < graph.node_size() && at < 0; ++i)
      if (graph.node(i).name() == input.injectFault)
        at = i;
    if (at < 0 || graph.node(at).output_size() == 0) {
      error = "--inject-fault: the main graph has no node named '" + input.injectFault + "'";
      return false;
    }
    std::string out = graph.node(at).output(0);
    if (elemType.count(out) && elemType[out] != onnx::TensorProto::FLOAT) {
      error = "--inject-fault: node '" + input.injectFault + "' does not output float32";
      return false;
    }
    std::string faulty = out + "__kiln_fault", one = out + "__kiln_fault_one";
    graph.mutable_node(at)->set_output(0, faulty);
    onnx::TensorProto *c = graph.add_initializer();
    c->set_name(one);
    c->set_data_type(onnx::TensorProto::FLOAT);
    c->add_float_data(1.0f);
    onnx::NodeProto *add = graph.add_node();
    add->set_op_type("Add");
    add->set_name(input.injectFault + "__kiln_fault");
    add->add_input(faulty);
    add->add_input(one);
    add->add_output(out);
    for (int i = graph.node_size() - 1; i > at + 1; --i) // right after the node
      graph.mutable_node()->SwapElements(i, i - 1);
  }
  if (input.exposeAllTensors) {
    std::set<std::string> outputs;
    for (const onnx::ValueInfoProto &v : graph.output())
      outputs.insert(v.name());
    for (const onnx::NodeProto &node : graph.node())
      for (const std::string &out : node.output())
        if (!out.empty() && !notTensors.count(out) && outputs.insert(out).second)
          graph.add_output()->set_name(out);
  }
  return true;
}

} // namespace kiln
