//===- OnnxSchemas.cpp - ONNX schemas newer than the system libonnx -------===//
//
// This file implements the opset 18-21 operator versions that Debian's libonnx 1.12
// lacks. Each schema below states the signature of the newer version (inputs,
// attributes, types) and a shape-inference function, and is registered into libonnx's
// own registry after widening the default domain's version range to kMaxOnnxOpset.
// Versions that only widened the type list (int4, float8, string) need no entry: the
// registry answers them with the older schema, whose types Kiln supports anyway.
//
// libonnx throws; this file is compiled with exceptions and never lets one escape
// through a registration (a failing inference throws InferenceError into the caller,
// which catches it at the import boundary).
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxSchemas.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor/utils.h"
#include "onnx/defs/tensor_proto_util.h"

#include <algorithm>
#include <mutex>

namespace onnx {
// Exported by libonnx but not declared in its installed headers.
void convPoolShapeInference(InferenceContext &ctx, bool useDilation,
                            bool requireKernelShape, int input1Idx,
                            int input2Idx);
} // namespace onnx

using namespace onnx;

namespace kiln {
namespace {

using Types = std::vector<std::string>;

Types concat(Types a, const Types &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const Types &floatTypes() {
  static const Types t = {"tensor(float16)", "tensor(float)", "tensor(double)",
                          "tensor(bfloat16)"};
  return t;
}
const Types &intTypes() {
  static const Types t = {"tensor(int8)",   "tensor(int16)",  "tensor(int32)",
                          "tensor(int64)",  "tensor(uint8)",  "tensor(uint16)",
                          "tensor(uint32)", "tensor(uint64)"};
  return t;
}

/// Reads a constant int64 input (an initializer or a Constant's output), if known.
bool readInt64Input(InferenceContext &ctx, size_t index,
                    std::vector<int64_t> &out) {
  if (ctx.getNumInputs() <= index || !ctx.getInputType(index))
    return false;
  const TensorProto *data = ctx.getInputData(index);
  if (!data)
    return false;
  out = ParseData<int64_t>(data);
  return true;
}

bool hasInput(InferenceContext &ctx, size_t index) {
  return ctx.getNumInputs() > index && ctx.getInputType(index) != nullptr;
}

/// Reduce ops from opset 18 on take `axes` as an optional second input.
void reduceWithAxesInputInference(InferenceContext &ctx) {
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!hasNInputShapes(ctx, 1))
    return;
  int64_t keepDims = getAttribute(ctx, "keepdims", 1);
  int64_t noopWithEmptyAxes = getAttribute(ctx, "noop_with_empty_axes", 0);
  std::vector<int64_t> axes;
  if (hasInput(ctx, 1) && !readInt64Input(ctx, 1, axes))
    return; // Axes computed at run time: the rank is all that is known.
  const TensorShapeProto &shape = getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  if (axes.empty() && noopWithEmptyAxes) {
    propagateShapeFromInputToOutput(ctx, 0, 0);
    return;
  }
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
    if (axis < 0)
      axis += rank;
  }
  TensorShapeProto *out = getOutputShape(ctx, 0);
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced =
        axes.empty() || std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced)
      *out->add_dim() = shape.dim(static_cast<int>(i));
    else if (keepDims)
      out->add_dim()->set_dim_value(1);
  }
}

void registerReduce(const char *name, int version, const Types &types) {
  OpSchema schema;
  schema.SetName(name)
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc(std::string(name) + " with axes given as an input (opset 18+).")
      .Attr("keepdims", "Keep the reduced dimensions as size 1.",
            AttributeProto::INT, static_cast<int64_t>(1))
      .Attr("noop_with_empty_axes",
            "With empty axes: 1 is identity, 0 reduces every axis.",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Input(0, "data", "Input tensor.", "T")
      .Input(1, "axes", "Axes to reduce.", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "Reduced tensor.", "T")
      .TypeConstraint("T", types, "Numeric tensors.")
      .TypeAndShapeInferenceFunction(reduceWithAxesInputInference);
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void splitInference(InferenceContext &ctx) {
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i)
    propagateElemTypeFromInputToOutput(ctx, 0, i);
  if (!hasNInputShapes(ctx, 1))
    return;
  const TensorShapeProto &shape = getInputShape(ctx, 0);
  int rank = shape.dim_size();
  int64_t axis = getAttribute(ctx, "axis", 0);
  if (axis < -rank || axis >= rank)
    fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0)
    axis += rank;
  const auto &splitDim = shape.dim(static_cast<int>(axis));
  size_t numOutputs = ctx.getNumOutputs();
  std::vector<int64_t> sizes;
  if (hasInput(ctx, 1)) {
    if (!readInt64Input(ctx, 1, sizes))
      return;
    if (sizes.size() != numOutputs)
      fail_shape_inference("split has ", sizes.size(), " entries for ",
                           numOutputs, " outputs");
  } else {
    if (!splitDim.has_dim_value())
      return;
    int64_t total = splitDim.dim_value();
    int64_t numAttr = getAttribute(ctx, "num_outputs", 0);
    if (numAttr != 0 && static_cast<size_t>(numAttr) != numOutputs)
      fail_shape_inference("num_outputs is ", numAttr, " but the node has ",
                           numOutputs, " outputs");
    int64_t chunk = (total + numOutputs - 1) / numOutputs;
    for (size_t i = 0; i < numOutputs; ++i) {
      int64_t begin = std::min<int64_t>(total, chunk * i);
      sizes.push_back(std::min<int64_t>(total, begin + chunk) - begin);
    }
  }
  for (size_t i = 0; i < numOutputs; ++i) {
    TensorShapeProto *out = getOutputShape(ctx, i);
    *out = shape;
    out->mutable_dim(static_cast<int>(axis))->set_dim_value(sizes[i]);
  }
}

void padInference(InferenceContext &ctx) {
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!hasNInputShapes(ctx, 1))
    return;
  const TensorShapeProto &shape = getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  std::vector<int64_t> pads, axes;
  if (!readInt64Input(ctx, 1, pads))
    return;
  if (hasInput(ctx, 3)) {
    if (!readInt64Input(ctx, 3, axes))
      return;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    fail_shape_inference("pads has ", pads.size(), " values for ", axes.size(),
                         " axes");
  TensorShapeProto *out = getOutputShape(ctx, 0);
  *out = shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank)
      fail_shape_inference("pad axis ", axes[i], " is out of range");
    auto *dim = out->mutable_dim(static_cast<int>(axis));
    if (dim->has_dim_value())
      dim->set_dim_value(dim->dim_value() + pads[i] + pads[i + axes.size()]);
    else
      dim->Clear();
  }
}

void resizeInference(InferenceContext &ctx) {
  std::vector<int64_t> axes;
  if (!getRepeatedAttribute(ctx, "axes", axes) || axes.empty()) {
    resizeShapeInference(ctx);
    return;
  }
  propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!hasNInputShapes(ctx, 1))
    return;
  // With explicit axes, only the listed dimensions are resized.
  const TensorShapeProto &shape = getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  std::vector<int64_t> sizes;
  const TensorProto *scalesData = hasInput(ctx, 2) ? ctx.getInputData(2) : nullptr;
  TensorShapeProto *out = getOutputShape(ctx, 0);
  *out = shape;
  if (readInt64Input(ctx, 3, sizes)) {
    if (sizes.size() != axes.size())
      fail_shape_inference("sizes and axes differ in length");
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      out->mutable_dim(static_cast<int>(axis))->set_dim_value(sizes[i]);
    }
    return;
  }
  if (!scalesData) {
    out->Clear();
    return;
  }
  std::vector<float> scales = ParseData<float>(scalesData);
  if (scales.size() != axes.size())
    fail_shape_inference("scales and axes differ in length");
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    auto *dim = out->mutable_dim(static_cast<int>(axis));
    if (dim->has_dim_value())
      dim->set_dim_value(static_cast<int64_t>(dim->dim_value() * scales[i]));
  }
}

void registerResize(int version) {
  OpSchema schema;
  schema.SetName("Resize")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("Resize with axes, antialias and aspect-ratio policy.")
      .Attr("mode", "nearest, linear or cubic.", AttributeProto::STRING,
            std::string("nearest"))
      .Attr("cubic_coeff_a", "Cubic coefficient.", AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "Zero weights outside the tensor.",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("coordinate_transformation_mode", "How coordinates map.",
            AttributeProto::STRING, std::string("half_pixel"))
      .Attr("nearest_mode", "Rounding for nearest.", AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .Attr("extrapolation_value", "Value outside the input.",
            AttributeProto::FLOAT, 0.0f)
      .Attr("antialias", "Antialiasing filter when downscaling.",
            AttributeProto::INT, static_cast<int64_t>(0))
      .Attr("axes", "Axes that roi, scales and sizes refer to.",
            AttributeProto::INTS, OPTIONAL_VALUE)
      .Attr("keep_aspect_ratio_policy", "stretch, not_larger or not_smaller.",
            AttributeProto::STRING, std::string("stretch"))
      .Input(0, "X", "Input tensor.", "T1")
      .Input(1, "roi", "Region of interest.", "T2", OpSchema::Optional)
      .Input(2, "scales", "Scale per axis.", "tensor(float)", OpSchema::Optional)
      .Input(3, "sizes", "Output size per axis.", "tensor(int64)",
             OpSchema::Optional)
      .Output(0, "Y", "Resized tensor.", "T1")
      .TypeConstraint("T1", OpSchema::all_tensor_types_with_bfloat(), "Any.")
      .TypeConstraint("T2", {"tensor(float16)", "tensor(float)", "tensor(double)"},
                      "roi type.")
      .TypeAndShapeInferenceFunction(resizeInference);
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void registerScatter(const char *name, bool hasAxis) {
  OpSchema schema;
  schema.SetName(name)
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(18)
      .SetDoc(std::string(name) + " with max and min reductions.")
      .Attr("reduction", "none, add, mul, max or min.", AttributeProto::STRING,
            std::string("none"))
      .Input(0, "data", "Input tensor.", "T")
      .Input(1, "indices", "Indices.", hasAxis ? "Tind" : "tensor(int64)")
      .Input(2, "updates", "Updates.", "T")
      .Output(0, "output", "Output tensor.", "T")
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "Any.")
      .TypeAndShapeInferenceFunction(propagateShapeAndTypeFromFirstInput);
  if (hasAxis) {
    schema.Attr("axis", "Axis to scatter on.", AttributeProto::INT,
                static_cast<int64_t>(0));
    schema.TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"},
                          "Index types.");
  }
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void registerUnary(const char *name, int version, const Types &types,
                   bool withApproximate = false) {
  OpSchema schema;
  schema.SetName(name)
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc(std::string(name) + ", elementwise.")
      .Input(0, "X", "Input tensor.", "T")
      .Output(0, "Y", "Output tensor.", "T")
      .TypeConstraint("T", types, "Element types.")
      .TypeAndShapeInferenceFunction(propagateShapeAndTypeFromFirstInput);
  if (withApproximate)
    schema.Attr("approximate", "none or tanh.", AttributeProto::STRING,
                std::string("none"));
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void registerBitwiseBinary(const char *name) {
  OpSchema schema;
  schema.SetName(name)
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(18)
      .SetDoc(std::string(name) + ", elementwise with broadcasting.")
      .Input(0, "A", "First operand.", "T")
      .Input(1, "B", "Second operand.", "T")
      .Output(0, "C", "Result.", "T")
      .TypeConstraint("T", intTypes(), "Integer tensors.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (hasNInputShapes(ctx, 2))
          bidirectionalBroadcastShapeInference(getInputShape(ctx, 0),
                                               getInputShape(ctx, 1),
                                               *getOutputShape(ctx, 0));
      });
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void registerGroupNormalization(int version) {
  OpSchema schema;
  schema.SetName("GroupNormalization")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("Group normalization.")
      .Attr("epsilon", "Added to the variance.", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "Number of groups.", AttributeProto::INT)
      .Input(0, "X", "Input tensor (N, C, ...).", "T")
      .Input(1, "scale", "Scale.", "T")
      .Input(2, "bias", "Bias.", "T")
      .Output(0, "Y", "Normalized tensor.", "T")
      .TypeConstraint("T", floatTypes(), "Float tensors.")
      .TypeAndShapeInferenceFunction(propagateShapeAndTypeFromFirstInput);
  if (version >= 21)
    schema.Attr("stash_type", "Precision of the statistics.",
                AttributeProto::INT, static_cast<int64_t>(1));
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

void registerPool(const char *name, int version) {
  bool isLp = std::string(name) == "LpPool";
  OpSchema schema;
  schema.SetName(name)
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc(std::string(name) + " with dilations and ceil_mode.")
      .Attr("kernel_shape", "Kernel size per spatial axis.", AttributeProto::INTS)
      .Attr("strides", "Strides.", AttributeProto::INTS, OPTIONAL_VALUE)
      .Attr("dilations", "Dilations.", AttributeProto::INTS, OPTIONAL_VALUE)
      .Attr("pads", "Padding.", AttributeProto::INTS, OPTIONAL_VALUE)
      .Attr("auto_pad", "NOTSET, SAME_UPPER, SAME_LOWER or VALID.",
            AttributeProto::STRING, std::string("NOTSET"))
      .Attr("ceil_mode", "Use ceil for the output shape.", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Input(0, "X", "Input tensor (N, C, ...).", "T")
      .Output(0, "Y", "Pooled tensor.", "T")
      .TypeConstraint("T", floatTypes(), "Float tensors.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        propagateElemTypeFromInputToOutput(ctx, 0, 0);
        convPoolShapeInference(ctx, true, true, 0, 1);
      });
  if (isLp)
    schema.Attr("p", "Order of the norm.", AttributeProto::INT,
                static_cast<int64_t>(2));
  else
    schema.Attr("count_include_pad", "Count padding in the average.",
                AttributeProto::INT, static_cast<int64_t>(0));
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);
}

Types castTypes() {
  return concat(concat(floatTypes(), intTypes()), {"tensor(bool)", "tensor(string)"});
}

void registerCast(int version) {
  OpSchema schema;
  schema.SetName("Cast")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("Cast with saturate for float8 targets.")
      .Attr("to", "Target element type.", AttributeProto::INT)
      .Attr("saturate", "Saturate float8 conversions.", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "input", "Input tensor.", "T1")
      .Output(0, "output", "Cast tensor.", "T2")
      .TypeConstraint("T1", castTypes(), "Source types.")
      .TypeConstraint("T2", castTypes(), "Target types.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        propagateElemTypeFromAttributeToOutput(ctx, "to", 0);
        if (hasNInputShapes(ctx, 1))
          propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  OpSchemaRegistry::OpSchemaRegisterOnce registered(schema);

  OpSchema like;
  like.SetName("CastLike")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("CastLike with saturate for float8 targets.")
      .Attr("saturate", "Saturate float8 conversions.", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "input", "Input tensor.", "T1")
      .Input(1, "target_type", "Tensor whose element type is the target.", "T2")
      .Output(0, "output", "Cast tensor.", "T2")
      .TypeConstraint("T1", castTypes(), "Source types.")
      .TypeConstraint("T2", castTypes(), "Target types.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (hasNInputShapes(ctx, 1))
          propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  OpSchemaRegistry::OpSchemaRegisterOnce registeredLike(like);
}

void registerQuantize(int version) {
  Types quantized = {"tensor(int8)", "tensor(uint8)", "tensor(int32)"};
  OpSchema q;
  q.SetName("QuantizeLinear")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("Linear quantization.")
      .Attr("axis", "Axis of per-axis quantization.", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Attr("saturate", "Saturate float8 conversions.", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "x", "Input.", "T1")
      .Input(1, "y_scale", "Scale.", "T1")
      .Input(2, "y_zero_point", "Zero point.", "T2", OpSchema::Optional)
      .Output(0, "y", "Quantized output.", "T2")
      .TypeConstraint("T1", concat(floatTypes(), {"tensor(int32)"}), "Input.")
      .TypeConstraint("T2", quantized, "Quantized types.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        if (hasInput(ctx, 2))
          propagateElemTypeFromInputToOutput(ctx, 2, 0);
        else
          updateOutputElemType(ctx, 0, TensorProto::UINT8);
        if (hasNInputShapes(ctx, 1))
          propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  if (version >= 21) {
    q.Attr("block_size", "Block size of blocked quantization.",
           AttributeProto::INT, static_cast<int64_t>(0));
    q.Attr("output_dtype", "Output type when there is no zero point.",
           AttributeProto::INT, static_cast<int64_t>(0));
  }
  OpSchemaRegistry::OpSchemaRegisterOnce registeredQ(q);

  OpSchema dq;
  dq.SetName("DequantizeLinear")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(version)
      .SetDoc("Linear dequantization.")
      .Attr("axis", "Axis of per-axis quantization.", AttributeProto::INT,
            static_cast<int64_t>(1))
      .Input(0, "x", "Quantized input.", "T1")
      .Input(1, "x_scale", "Scale.", "T2")
      .Input(2, "x_zero_point", "Zero point.", "T1", OpSchema::Optional)
      .Output(0, "y", "Dequantized output.", "T2")
      .TypeConstraint("T1", quantized, "Quantized types.")
      .TypeConstraint("T2", floatTypes(), "Output types.")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        propagateElemTypeFromInputToOutput(ctx, 1, 0);
        if (hasNInputShapes(ctx, 1))
          propagateShapeFromInputToOutput(ctx, 0, 0);
      });
  if (version >= 21)
    dq.Attr("block_size", "Block size of blocked quantization.",
            AttributeProto::INT, static_cast<int64_t>(0));
  OpSchemaRegistry::OpSchemaRegisterOnce registeredDq(dq);
}

void registerAll() {
  // Widen the default domain first: the registry refuses versions beyond its range.
  using Range = OpSchemaRegistry::DomainToVersionRange;
  auto &map = const_cast<std::unordered_map<std::string, std::pair<int, int>> &>(
      Range::Instance().Map());
  map[ONNX_DOMAIN].second = std::max(map[ONNX_DOMAIN].second, kMaxOnnxOpset);
  auto &released = const_cast<std::unordered_map<std::string, int> &>(
      Range::Instance().LastReleaseVersionMap());
  released[ONNX_DOMAIN] = std::max(released[ONNX_DOMAIN], kMaxOnnxOpset);

  Types numeric = OpSchema::numeric_types_for_math_reduction_with_bfloat();
  for (const char *name :
       {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean",
        "ReduceProd", "ReduceSumSquare"})
    registerReduce(name, 18, numeric);
  for (const char *name : {"ReduceMax", "ReduceMin"}) {
    registerReduce(name, 18, numeric);
    registerReduce(name, 20, concat(numeric, {"tensor(bool)"}));
  }

  OpSchema split;
  split.SetName("Split")
      .SetDomain(ONNX_DOMAIN)
      .SinceVersion(18)
      .SetDoc("Split with num_outputs.")
      .Attr("axis", "Axis to split on.", AttributeProto::INT,
            static_cast<int64_t>(0))
      .Attr("num_outputs", "Number of equal parts.", AttributeProto::INT,
            OPTIONAL_VALUE)
      .Input(0, "input", "Input tensor.", "T")
      .Input(1, "split", "Part lengths.", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "Parts.", "T", OpSchema::Variadic)
      .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "Any.")
      .TypeAndShapeInferenceFunction(splitInference);
  OpSchemaRegistry::OpSchemaRegisterOnce registeredSplit(split);

  for (int version : {18, 19}) {
    OpSchema pad;
    pad.SetName("Pad")
        .SetDomain(ONNX_DOMAIN)
        .SinceVersion(version)
        .SetDoc("Pad with axes (18) and wrap mode (19).")
        .Attr("mode", "constant, reflect, edge or wrap.", AttributeProto::STRING,
              std::string("constant"))
        .Input(0, "data", "Input tensor.", "T")
        .Input(1, "pads", "Begin and end pads per axis.", "tensor(int64)")
        .Input(2, "constant_value", "Fill value.", "T", OpSchema::Optional)
        .Input(3, "axes", "Axes the pads refer to.", "Tind", OpSchema::Optional)
        .Output(0, "output", "Padded tensor.", "T")
        .TypeConstraint("T", OpSchema::all_tensor_types_with_bfloat(), "Any.")
        .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "Axes.")
        .TypeAndShapeInferenceFunction(padInference);
    OpSchemaRegistry::OpSchemaRegisterOnce registered(pad);
  }

  registerResize(18);
  registerResize(19);
  registerScatter("ScatterElements", /*hasAxis=*/true);
  registerScatter("ScatterND", /*hasAxis=*/false);
  registerGroupNormalization(18);
  registerGroupNormalization(21);
  registerUnary("Mish", 18, floatTypes());
  registerUnary("Gelu", 20, floatTypes(), /*withApproximate=*/true);
  for (const char *name : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    registerBitwiseBinary(name);
  registerUnary("BitwiseNot", 18, intTypes());
  registerPool("LpPool", 18);
  registerPool("AveragePool", 19);
  registerCast(19);
  registerQuantize(19);
  registerQuantize(21);
}

} // namespace

void registerOnnxSchemaExtensions() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Make sure libonnx's own schemas are loaded before ours are added.
    (void)OpSchemaRegistry::Schema("Add", 14);
    registerAll();
  });
}

int onnxSinceVersion(const std::string &opType, int opset) {
  registerOnnxSchemaExtensions();
  const OpSchema *schema = OpSchemaRegistry::Schema(opType, opset, ONNX_DOMAIN);
  return schema ? schema->SinceVersion() : 0;
}

std::vector<AttributeProto> onnxDefaultAttributes(const std::string &opType,
                                                  int opset) {
  registerOnnxSchemaExtensions();
  std::vector<AttributeProto> defaults;
  const OpSchema *schema = OpSchemaRegistry::Schema(opType, opset, ONNX_DOMAIN);
  if (!schema)
    return defaults;
  for (const auto &[name, attr] : schema->attributes())
    if (attr.default_value.has_type())
      defaults.push_back(attr.default_value);
  return defaults;
}

std::string inferencePreconditions(
    const std::string &opType,
    const std::function<const ::onnx::AttributeProto *(const std::string &)> &attribute,
    const std::vector<int64_t> &inputRanks) {
  static const char *const kWindowed[] = {"Conv",    "ConvTranspose", "ConvInteger",
                                          "QLinearConv", "MaxPool",   "AveragePool",
                                          "LpPool",  "MaxUnpool",     "DeformConv"};
  for (const char *op : kWindowed) {
    if (opType != op)
      continue;
    for (const char *name : {"strides", "dilations", "kernel_shape"})
      if (const ::onnx::AttributeProto *a = attribute(name))
        for (int64_t v : a->ints())
          if (v <= 0)
            return std::string("attribute '") + name + "' holds " + std::to_string(v) +
                   "; every value must be positive";
    // The data is N x C x spatial...; the weights (convolutions) have its rank; the
    // per-axis attributes one value per spatial axis (pads two).
    int64_t rank = inputRanks.empty() ? -1 : inputRanks[0];
    if (rank < 0)
      return "";
    if (rank < 3)
      return "input X has rank " + std::to_string(rank) +
             "; it must be N x C x at least one spatial dimension";
    size_t weights = opType == "QLinearConv" ? 3 : 1;
    bool convolution = opType.find("Conv") != std::string::npos;
    if (convolution && weights < inputRanks.size() && inputRanks[weights] >= 0 &&
        inputRanks[weights] != rank)
      return "the weights have rank " + std::to_string(inputRanks[weights]) +
             ", the input " + std::to_string(rank);
    for (const char *name : {"strides", "dilations", "kernel_shape", "pads"})
      if (const ::onnx::AttributeProto *a = attribute(name)) {
        int64_t expected = (rank - 2) * (std::string(name) == "pads" ? 2 : 1);
        if (a->ints_size() != expected)
          return std::string("attribute '") + name + "' has " +
                 std::to_string(a->ints_size()) + " values; the input's " +
                 std::to_string(rank - 2) + " spatial dimensions need " +
                 std::to_string(expected);
      }
  }
  // Signals are [batch, length, 1 or 2] (STFT) or [..., length, 1 or 2] (DFT).
  if ((opType == "STFT" && !inputRanks.empty() && inputRanks[0] >= 0 && inputRanks[0] != 3) ||
      (opType == "DFT" && !inputRanks.empty() && inputRanks[0] >= 0 && inputRanks[0] < 2))
    return "the signal has rank " + std::to_string(inputRanks[0]) +
           (opType == "STFT" ? "; STFT takes [batch, length, 1 or 2]"
                             : "; DFT takes [..., length, 1 or 2]");
  if (opType == "MaxUnpool" && inputRanks.size() > 1 && inputRanks[0] >= 0 &&
      inputRanks[1] >= 0 && inputRanks[1] != inputRanks[0])
    return "the indices have rank " + std::to_string(inputRanks[1]) + ", the input " +
           std::to_string(inputRanks[0]) + " (they index it element for element)";
  if (opType == "LayerNormalization" && !inputRanks.empty() && inputRanks[0] >= 0) {
    // libonnx normalizes `axis` against the rank and indexes the shape with it.
    int64_t rank = inputRanks[0], axis = -1;
    if (const ::onnx::AttributeProto *a = attribute("axis"))
      axis = a->i();
    if (rank == 0 || axis < -rank || axis >= rank)
      return "axis " + std::to_string(axis) + " is outside the input's rank " +
             std::to_string(rank);
  }
  if (opType == "Gemm")
    for (size_t i = 0; i < 2 && i < inputRanks.size(); ++i)
      if (inputRanks[i] >= 0 && inputRanks[i] != 2)
        return std::string("input ") + (i ? "B" : "A") + " has rank " +
               std::to_string(inputRanks[i]) + "; Gemm multiplies matrices (rank 2)";
  return "";
}

} // namespace kiln
