//===- ConvertToFp16.cpp - Float tensors to f16 ---------------------------===//
//
// This file implements kiln-convert-to-fp16 (see Passes.td). One walk over the
// graph's top-level ops in order: an op the keep-list or the keep-f32 option
// names computes in f32 (the f16 values it reads are cast up), every other op
// with f32 tensors computes in f16 (its f32 operands are cast down, or, for
// constants, converted); each value gets at most one Cast per precision, placed
// right after its definition. Values the model itself types f16 are never
// touched, so mixed models keep their mix.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/ConvertToFp16.h"
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_CONVERTTOFP16
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

std::string fp16KeepReason(Operation *op) {
  static const llvm::StringSet<> range{
      "Exp", "Log", "Pow", "Range", "CumSum", "ReduceSum", "ReduceSumSquare", "ReduceL1",
      "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd", "ReduceMean"};
  static const llvm::StringSet<> precision{
      "Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization",
      "GroupNormalization", "BatchNormalization", "LpNormalization",
      "MeanVarianceNormalization", "LRN", "Resize", "Upsample", "GridSample",
      "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "DFT", "STFT", "Det"};
  static const llvm::StringSet<> type{
      "Cast", "CastLike", "ConstantOfShape", "EyeLike", "QuantizeLinear",
      "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
      "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix", "RandomNormal",
      "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
      "NonMaxSuppression", "TfIdfVectorizer", "Dropout"};
  if (op->getNumRegions() > 0)
    return "subgraph";
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect != "onnx" && !isa<kiln::AttentionOp>(op))
    return "type";
  std::string name = onnx::onnxOperatorName(op);
  if (range.contains(name))
    return "range";
  if (precision.contains(name))
    return "precision";
  if (type.contains(name))
    return "type";
  return "";
}

std::string onnxNodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

namespace {

bool isFloatTensor(Type t, Type elem) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.getElementType() == elem;
}

RankedTensorType withElement(Type t, Type elem) {
  auto ranked = cast<RankedTensorType>(t);
  return RankedTensorType::get(ranked.getShape(), elem);
}

class Converter {
public:
  explicit Converter(func::FuncOp fn) : block(fn.getBody().front()) {
    MLIRContext *ctx = fn.getContext();
    f16 = Float16Type::get(ctx);
    f32 = Float32Type::get(ctx);
  }

  /// The f16 version of the f32 value `v`: a converted constant, or a Cast.
  Value half(Value v) {
    if (Value known = to16.lookup(v))
      return known;
    OnnxBuilder ob(after(v));
    Value h;
    auto name = [&] { return onnxNodeName(v.getDefiningOp()) + "_f16"; };
    if (ArrayRef<char> weights = f32Weights(v); !weights.empty()) {
      h = ob.halvesOf(withElement(v.getType(), f16), weights, name());
    } else if (std::optional<std::vector<double>> values = constantValues(v)) {
      bool fits = llvm::all_of(*values, [](double d) {
        return !std::isfinite(d) || std::fabs(d) <= kHalfMax;
      });
      if (fits)
        h = ob.floats(withElement(v.getType(), f16), *values, name());
    }
    if (!h)
      h = ob.castTo(v, f16);
    converted.insert(h);
    return to16[v] = h;
  }

  /// The f32 version of the converted f16 value `v` (a Cast).
  Value single(Value v) {
    if (Value known = to32.lookup(v))
      return known;
    OnnxBuilder ob(after(v));
    return to32[v] = ob.castTo(v, f32);
  }

  void markConverted(Value v) {
    converted.insert(v);
    // Subgraphs keep f32: their reads of this value from outside go through a Cast.
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses()))
      if (use.getOwner()->getBlock() != &block)
        use.set(single(v));
  }

  void convert(Operation *op, bool keep) {
    if (keep) {
      for (OpOperand &operand : op->getOpOperands())
        if (converted.contains(operand.get()))
          operand.set(single(operand.get()));
      return;
    }
    for (OpOperand &operand : op->getOpOperands())
      if (isFloatTensor(operand.get().getType(), f32))
        operand.set(half(operand.get()));
    for (Value result : op->getResults())
      if (isFloatTensor(result.getType(), f32)) {
        result.setType(withElement(result.getType(), f16));
        markConverted(result);
      }
  }

  bool hasF32(Operation *op) {
    auto f32Tensor = [&](Value v) { return isFloatTensor(v.getType(), f32); };
    return llvm::any_of(op->getOperands(), f32Tensor) ||
           llvm::any_of(op->getResults(), f32Tensor);
  }

  bool isConverted(Value v) const { return converted.contains(v); }

  Type f16, f32;

private:
  /// Where a value's casts go: right after its definition (dominating every use).
  Operation *after(Value v) {
    if (Operation *def = v.getDefiningOp())
      return def->getNextNode();
    return &block.front();
  }

  /// The bytes of an f32 weights constant (a resource blob, as the importer keeps
  /// them); empty for anything else.
  static ArrayRef<char> f32Weights(Value v) {
    ElementsAttr attr = constantValueOf(v);
    if (!attr || !attr.getShapedType().getElementType().isF32())
      return {};
    return resourceBytes(attr);
  }

  std::optional<std::vector<double>> constantValues(Value v) {
    if (!isa_and_nonnull<onnx::ConstantOp>(v.getDefiningOp()))
      return std::nullopt;
    return floatValuesOf(v);
  }

  Block &block;
  DenseMap<Value, Value> to16, to32;
  llvm::DenseSet<Value> converted;
};

struct ConvertToFp16Pass : impl::ConvertToFp16Base<ConvertToFp16Pass> {
  using ConvertToFp16Base::ConvertToFp16Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &block = fn.getBody().front();
    Converter c(fn);
    llvm::StringSet<> keepNames;
    for (const std::string &name : keepF32)
      keepNames.insert(name);
    // A branch function of a kiln.if (private) keeps its interface: the kiln.if,
    // kept in f32, passes and receives f32 tensors.
    bool branch = fn.isPrivate();
    if (!keepInputTypes && !branch)
      for (BlockArgument arg : block.getArguments())
        if (isFloatTensor(arg.getType(), c.f32)) {
          arg.setType(withElement(arg.getType(), c.f16));
          c.markConverted(arg);
        }
    SmallVector<Operation *> ops = llvm::map_to_vector(block, [](Operation &op) { return &op; });
    for (Operation *op : ops) {
      if (isa<onnx::ConstantOp, onnx::NoValueOp>(op) || op->hasTrait<OpTrait::IsTerminator>())
        continue;
      bool keep = !fp16KeepReason(op).empty() || keepNames.contains(onnxNodeName(op));
      if (keep || c.hasF32(op))
        c.convert(op, keep);
    }
    // The graph's outputs: their declared types, or f16 for converted ones.
    Operation *terminator = block.getTerminator();
    for (OpOperand &operand : terminator->getOpOperands())
      if ((keepOutputTypes || branch) && c.isConverted(operand.get()))
        operand.set(c.single(operand.get()));
    fn.setType(FunctionType::get(fn.getContext(), block.getArgumentTypes(),
                                 terminator->getOperandTypes()));
    // f32 constants every reader of which now reads the f16 copy.
    for (Operation *op : ops)
      if (isa<onnx::ConstantOp>(op) && op->use_empty())
        op->erase();
  }
};

} // namespace
} // namespace kiln
