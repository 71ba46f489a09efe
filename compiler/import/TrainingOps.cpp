//===- TrainingOps.cpp - The preview-training optimizers as ONNX nodes ----===//
//
// The update rules, as the ONNX operator documentation states them (per tensor X
// with gradient G; R the learning rate, T the update count, both scalars):
//
//   Adagrad   r = R / (1 + T·decay_factor);  g = norm_coefficient·X + G
//             H' = H + g²;  X' = X - r·g / (√H' + epsilon)
//   Adam      g = norm_coefficient·X + G;  V' = alpha·V + (1 - alpha)·g
//             H' = beta·H + (1 - beta)·g²
//             r = T > 0 ? R·√(1 - beta^T) / (1 - alpha^T) : R
//             X' = (1 - norm_coefficient_post)·(X - r·V' / (√H' + epsilon))
//   Momentum  g = norm_coefficient·X + G;  b = T > 0 ? beta : 1
//             V' = alpha·V + b·g
//             X' = X - R·V' (standard), X - R·(g + alpha·V') (nesterov)
//
// Inputs are R, T, then the X's, the G's and the state tensors (H for Adagrad,
// V for Momentum, V then H for Adam); outputs are the new X's, then the new states
// in the same order.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/TrainingOps.h"
#include "compiler/import/ModelLoader.h"

#include "onnx/onnx_pb.h"

#include <set>
#include <vector>

namespace kiln {
namespace {

using ::onnx::AttributeProto;
using ::onnx::GraphProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
/// The ai.onnx version given to a model that imports no default domain.
constexpr int kExpansionOpset = 13;

/// Appends default-domain nodes named after the node they replace, with fresh
/// value names.
class Expander {
public:
  Expander(const NodeProto &node, std::vector<NodeProto> &out, std::set<std::string> &names,
           int elemType)
      : node(node), out(out), names(names), elemType(elemType) {}

  std::string op(const std::string &type, const std::vector<std::string> &inputs,
                 const std::string &output = "") {
    NodeProto &n = out.emplace_back();
    n.set_op_type(type);
    n.set_name((node.name().empty() ? node.output(0) : node.name()) + "/" + type + "_" +
               std::to_string(out.size()));
    for (const std::string &in : inputs)
      n.add_input(in);
    std::string name = output.empty() ? fresh() : output;
    n.add_output(name);
    return name;
  }

  /// A scalar constant of the tensors' element type (or of `type`).
  std::string constant(double value, int type = 0) {
    type = type ? type : elemType;
    std::string name = op("Constant", {});
    AttributeProto *attr = out.back().add_attribute();
    attr->set_name("value");
    attr->set_type(AttributeProto::TENSOR);
    TensorProto *t = attr->mutable_t();
    t->set_data_type(type);
    if (type == TensorProto::DOUBLE)
      t->add_double_data(value);
    else if (type == TensorProto::INT64)
      t->add_int64_data(static_cast<int64_t>(value));
    else
      t->add_float_data(static_cast<float>(value));
    return name;
  }

  std::string cast(const std::string &v) {
    std::string name = op("Cast", {v});
    AttributeProto *attr = out.back().add_attribute();
    attr->set_name("to");
    attr->set_type(AttributeProto::INT);
    attr->set_i(elemType);
    return name;
  }

  std::string add(const std::string &a, const std::string &b, const std::string &o = "") {
    return op("Add", {a, b}, o);
  }
  std::string sub(const std::string &a, const std::string &b, const std::string &o = "") {
    return op("Sub", {a, b}, o);
  }
  std::string mul(const std::string &a, const std::string &b, const std::string &o = "") {
    return op("Mul", {a, b}, o);
  }
  std::string div(const std::string &a, const std::string &b) { return op("Div", {a, b}); }
  std::string sqrt(const std::string &a) { return op("Sqrt", {a}); }
  /// T > 0 ? a : b, with T the update count.
  std::string ifStarted(const std::string &a, const std::string &b) {
    std::string started = op("Greater", {node.input(1), constant(0, TensorProto::INT64)});
    return op("Where", {started, a, b});
  }

private:
  std::string fresh() {
    std::string base = node.output(0) + "/kiln.";
    for (;;) {
      std::string name = base + std::to_string(counter++);
      if (names.insert(name).second)
        return name;
    }
  }

  const NodeProto &node;
  std::vector<NodeProto> &out;
  std::set<std::string> &names;
  int elemType;
  int counter = 0;
};

bool hasAttr(const NodeProto &node, const char *name) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return true;
  return false;
}

/// An attribute's value, or its schema default.
float floatAttr(const NodeProto &node, const char *name, float fallback) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return a.f();
  return fallback;
}

std::string stringAttr(const NodeProto &node, const char *name, const char *fallback) {
  for (const AttributeProto &a : node.attribute())
    if (a.name() == name)
      return a.s();
  return fallback;
}

/// The element type of value `name` where the graph declares it (an input, an
/// initializer or a value_info), else float.
int elementTypeOf(const GraphProto &graph, const std::string &name) {
  for (const TensorProto &t : graph.initializer())
    if (t.name() == name)
      return t.data_type();
  for (const auto *list : {&graph.input(), &graph.value_info()})
    for (const auto &info : *list)
      if (info.name() == name && info.type().has_tensor_type())
        return info.type().tensor_type().elem_type();
  return TensorProto::FLOAT;
}

bool expandNode(const GraphProto &graph, const NodeProto &node, std::vector<NodeProto> &out,
                std::set<std::string> &names, std::string &error) {
  const std::string &type = node.op_type();
  int states = type == "Adam" ? 2 : 1;
  int groups = 2 + states; // X, G and the states
  int tensors = node.input_size() - 2;
  if (node.input_size() < 2 + groups || tensors % groups != 0 ||
      node.output_size() != tensors / groups * (1 + states)) {
    error = nodeLabel(node) + ": expects R, T and " + std::to_string(groups) +
            " inputs per optimized tensor, and " + std::to_string(1 + states) +
            " outputs per tensor";
    return false;
  }
  for (const std::string &in : node.input())
    if (in.empty()) {
      error = nodeLabel(node) + ": every input is required";
      return false;
    }
  int n = tensors / groups;
  int elemType = elementTypeOf(graph, node.input(2));
  if (elemType != TensorProto::FLOAT && elemType != TensorProto::DOUBLE) {
    error = nodeLabel(node) + ": the optimized tensors must be float or double";
    return false;
  }
  Expander e(node, out, names, elemType);
  std::string r = node.input(0);
  if (elementTypeOf(graph, r) != elemType)
    r = e.cast(r);
  auto t = [&] { return e.cast(node.input(1)); };
  float norm = floatAttr(node, "norm_coefficient", 0.0f);
  auto input = [&](int group, int i) { return node.input(2 + group * n + i); };
  auto output = [&](int group, int i) { return node.output(group * n + i); };

  if (type == "Adagrad") {
    float decay = floatAttr(node, "decay_factor", 0.0f);
    float epsilon = floatAttr(node, "epsilon", 1e-6f);
    std::string rate = e.div(r, e.add(e.constant(1), e.mul(t(), e.constant(decay))));
    for (int i = 0; i < n; ++i) {
      std::string g = e.add(e.mul(e.constant(norm), input(0, i)), input(1, i));
      std::string h = e.add(input(2, i), e.mul(g, g), output(1, i));
      std::string root = e.add(e.sqrt(h), e.constant(epsilon));
      e.sub(input(0, i), e.div(e.mul(rate, g), root), output(0, i));
    }
    return true;
  }
  if (type == "Adam") {
    float alpha = floatAttr(node, "alpha", 0.9f), beta = floatAttr(node, "beta", 0.999f);
    float epsilon = floatAttr(node, "epsilon", 1e-6f);
    float post = floatAttr(node, "norm_coefficient_post", 0.0f);
    std::string one = e.constant(1);
    std::string steps = t();
    std::string corrected =
        e.div(e.mul(r, e.sqrt(e.sub(one, e.op("Pow", {e.constant(beta), steps})))),
              e.sub(one, e.op("Pow", {e.constant(alpha), steps})));
    std::string rate = e.ifStarted(corrected, r);
    for (int i = 0; i < n; ++i) {
      std::string g = e.add(e.mul(e.constant(norm), input(0, i)), input(1, i));
      std::string v = e.add(e.mul(e.constant(alpha), input(2, i)),
                            e.mul(e.constant(1.0 - alpha), g), output(1, i));
      std::string h = e.add(e.mul(e.constant(beta), input(3, i)),
                            e.mul(e.constant(1.0 - beta), e.mul(g, g)), output(2, i));
      std::string root = e.add(e.sqrt(h), e.constant(epsilon));
      std::string x = e.sub(input(0, i), e.mul(rate, e.div(v, root)));
      e.mul(e.constant(1.0 - post), x, output(0, i));
    }
    return true;
  }
  // Momentum: every attribute is required.
  for (const char *required : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!hasAttr(node, required)) {
      error = nodeLabel(node) + ": attribute '" + required + "' is required";
      return false;
    }
  float alpha = floatAttr(node, "alpha", 0.0f), beta = floatAttr(node, "beta", 0.0f);
  std::string mode = stringAttr(node, "mode", "");
  if (mode != "standard" && mode != "nesterov") {
    error = nodeLabel(node) + ": mode '" + mode + "' is neither standard nor nesterov";
    return false;
  }
  std::string b = e.ifStarted(e.constant(beta), e.constant(1));
  for (int i = 0; i < n; ++i) {
    std::string g = e.add(e.mul(e.constant(norm), input(0, i)), input(1, i));
    std::string v = e.add(e.mul(e.constant(alpha), input(2, i)), e.mul(b, g), output(1, i));
    std::string step = mode == "standard" ? v : e.add(g, e.mul(e.constant(alpha), v));
    e.sub(input(0, i), e.mul(r, step), output(0, i));
  }
  return true;
}

void collectNames(const GraphProto &graph, std::set<std::string> &names) {
  for (const auto &v : graph.input())
    names.insert(v.name());
  for (const TensorProto &t : graph.initializer())
    names.insert(t.name());
  for (const NodeProto &node : graph.node()) {
    for (const std::string &o : node.output())
      names.insert(o);
    for (const AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectNames(a.g(), names);
      for (const GraphProto &g : a.graphs())
        collectNames(g, names);
    }
  }
}

bool expand(GraphProto &graph, int defaultOpset, std::set<std::string> &names,
            std::string &error) {
  bool any = false;
  for (const NodeProto &node : graph.node())
    any |= node.domain() == kTrainingDomain &&
           (node.op_type() == "Adagrad" || node.op_type() == "Adam" ||
            node.op_type() == "Momentum");
  for (NodeProto &node : *graph.mutable_node())
    for (AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_g() && !expand(*a.mutable_g(), defaultOpset, names, error))
        return false;
      for (GraphProto &g : *a.mutable_graphs())
        if (!expand(g, defaultOpset, names, error))
          return false;
    }
  if (!any)
    return true;
  std::vector<NodeProto> nodes;
  for (const NodeProto &node : graph.node()) {
    bool optimizer = node.domain() == kTrainingDomain &&
                     (node.op_type() == "Adagrad" || node.op_type() == "Adam" ||
                      node.op_type() == "Momentum");
    if (!optimizer) {
      nodes.push_back(node);
      continue;
    }
    if (defaultOpset < 9) {
      error = nodeLabel(node) + ": needs ai.onnx opset 9 or newer beside it (the model "
                                "imports " + std::to_string(defaultOpset) + ")";
      return false;
    }
    if (!expandNode(graph, node, nodes, names, error))
      return false;
  }
  graph.clear_node();
  for (NodeProto &n : nodes)
    *graph.add_node() = std::move(n);
  return true;
}

} // namespace

bool expandTrainingOptimizers(::onnx::ModelProto &model, std::string &error) {
  // The expansion's nodes are of the default domain; a model of training nodes
  // only (the ONNX tests are) gets the default domain at the version Kiln's
  // expansion is written against.
  int defaultOpset = 0;
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      defaultOpset = static_cast<int>(opset.version());
  if (defaultOpset == 0) {
    auto *opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kExpansionOpset);
    defaultOpset = kExpansionOpset;
  }
  std::set<std::string> names;
  collectNames(model.graph(), names);
  return expand(*model.mutable_graph(), defaultOpset, names, error);
}

} // namespace kiln
