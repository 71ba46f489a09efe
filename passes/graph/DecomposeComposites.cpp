//===- DecomposeComposites.cpp - Composite operators ---===//
//
// This file implements kiln-decompose's composite operators (Decompositions.h).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Decompositions.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {

/// MaxUnpool: the values scattered to their flat indices.
FailureOr<SmallVector<Value>> decomposeMaxUnpool(Operation *op, OnnxBuilder &ob) {
  auto in = [&](unsigned i) { return op->getOperand(i); };
  // The values scattered to their flat indices in a zero tensor of the default
  // unpooled shape ((in - 1) * stride + kernel - pads); an output_shape larger
  // than that gets zeros appended at the end of each spatial dim (as ONNX
  // Runtime and the ONNX tests do).
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto xType = cast<RankedTensorType>(in(0).getType());
  if (!out || !out.hasStaticShape())
    return SmallVector<Value>{};
  int64_t rank = xType.getRank(), spatial = rank - 2;
  auto list = [&](StringRef attr, int64_t n, int64_t def) {
    SmallVector<int64_t> v(n, def);
    if (auto a = op->getAttrOfType<ArrayAttr>(attr))
      for (auto [i, e] : llvm::enumerate(a))
        if (static_cast<int64_t>(i) < n)
          v[i] = cast<IntegerAttr>(e).getInt();
    return v;
  };
  SmallVector<int64_t> kernel = list("kernel_shape", spatial, 1),
                       strides = list("strides", spatial, 1), pads = list("pads", 2 * spatial, 0);
  SmallVector<int64_t> shape(xType.getShape().take_front(2));
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back((xType.getDimSize(d + 2) - 1) * strides[d] + kernel[d] - pads[d] -
                    pads[d + spatial]);
  Type elem = out.getElementType();
  int64_t total = 1, count = xType.getNumElements();
  for (int64_t d : shape)
    total *= d;
  Value zeros = ob.constant(DenseElementsAttr::get(
      RankedTensorType::get({total}, elem), FloatAttr::get(elem, 0.0).getValue()));
  Value flat = ob.create("ScatterElements",
                         {zeros, ob.reshape(in(1), {count}), ob.reshape(in(0), {count})},
                         elem, {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(0))});
  Value y = ob.reshape(flat, shape);
  if (ArrayRef<int64_t>(shape) != out.getShape()) {
    SmallVector<int64_t> padding(2 * rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      if (out.getDimSize(d) < shape[d]) {
        op->emitError() << "MaxUnpool's output_shape is smaller than the unpooled shape";
        return failure();
      }
      padding[rank + d] = out.getDimSize(d) - shape[d];
    }
    y = ob.create("Pad", {y, ob.ints(padding), ob.scalar(elem, 0), ob.none()}, elem,
                  {ob.b.getNamedAttr("mode", ob.b.getStringAttr("constant"))});
  }
  return SmallVector<Value>{y};
}

/// BatchNormalization in training mode (opset 14+): normalized by the batch's
/// mean and population variance over every axis but 1; the running statistics
/// come out as input * momentum + batch * (1 - momentum).
static FailureOr<SmallVector<Value>> decomposeTrainingBatchNorm(Operation *op, OnnxBuilder &ob) {
  Value x = op->getOperand(0);
  int64_t rank = rankOf(x);
  Type elem = elementOf(x);
  if (!isa<FloatType>(elem) || rank < 2) {
    op->emitError() << "training-mode BatchNormalization needs a float input of rank >= 2";
    return failure();
  }
  auto f = [&](StringRef attr, double def) {
    auto a = op->getAttrOfType<FloatAttr>(attr);
    return a ? a.getValueAsDouble() : def;
  };
  double epsilon = f("epsilon", 1e-5), momentum = f("momentum", 0.9);
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  auto keep = ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(1));
  auto mean = [&](Value v) { return ob.create("ReduceMean", {v, ob.ints(axes)}, elem, {keep}); };
  Value mu = mean(x);
  Value centered = ob.binary("Sub", x, mu);
  Value var = mean(ob.binary("Mul", centered, centered));
  Value y = ob.binary("Div", centered,
                      ob.create("Sqrt", ob.binary("Add", var, ob.scalar(elem, epsilon)), elem));
  y = ob.binary("Add", ob.binary("Mul", y, ob.alongAxis(op->getOperand(1), 1, rank)),
                ob.alongAxis(op->getOperand(2), 1, rank));
  int64_t channels = cast<RankedTensorType>(x.getType()).getDimSize(1);
  auto running = [&](Value input, Value batch) {
    return ob.binary("Add", ob.binary("Mul", input, ob.scalar(elem, momentum)),
                     ob.binary("Mul", ob.reshape(batch, {channels}),
                               ob.scalar(elem, 1 - momentum)));
  };
  SmallVector<Value> results = {y};
  if (op->getNumResults() > 1)
    results.push_back(running(op->getOperand(3), mu));
  if (op->getNumResults() > 2)
    results.push_back(running(op->getOperand(4), var));
  return results;
}

/// BatchNormalization: in training mode only (inference mode lowers directly).
FailureOr<SmallVector<Value>> decomposeBatchNormalization(Operation *op, OnnxBuilder &ob) {
  auto training = op->getAttrOfType<IntegerAttr>("training_mode");
  if (training && training.getInt())
    return decomposeTrainingBatchNorm(op, ob);
  return SmallVector<Value>{};
}

/// TfIdfVectorizer-9 on integer tokens: for each pool n-gram length n and skip s
/// (unigrams once, skips 0..max_skip_count otherwise), every window
/// X[p], X[p+s+1], ... is compared with every pool n-gram of that length at once
/// (Equal against constant rows, And over the n positions), matches are summed
/// over p, and a constant [grams, outputs] matrix maps the counts to their
/// ngram_indexes, weighted per mode (TF count, IDF weight if seen, TFIDF
/// count * weight).
FailureOr<SmallVector<Value>> decomposeTfIdf(Operation *op, OnnxBuilder &ob) {
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  auto ints = [&](StringRef attr) {
    SmallVector<int64_t> v;
    if (auto a = op->getAttrOfType<ArrayAttr>(attr))
      for (Attribute e : a)
        v.push_back(cast<IntegerAttr>(e).getInt());
    return v;
  };
  auto integer = [&](StringRef attr) {
    auto a = op->getAttrOfType<IntegerAttr>(attr);
    return a ? a.getInt() : 0;
  };
  SmallVector<int64_t> counts = ints("ngram_counts"), indexes = ints("ngram_indexes"),
                       pool = ints("pool_int64s");
  SmallVector<double> weights;
  if (auto a = op->getAttrOfType<ArrayAttr>("weights"))
    for (Attribute e : a)
      weights.push_back(cast<FloatAttr>(e).getValueAsDouble());
  auto modeAttr = op->getAttrOfType<StringAttr>("mode");
  StringRef mode = modeAttr ? modeAttr.getValue() : "";
  int64_t minN = integer("min_gram_length"), maxN = integer("max_gram_length"),
          maxSkip = integer("max_skip_count");
  if (!isa<IntegerType>(type.getElementType()) || type.getRank() < 1 || type.getRank() > 2 ||
      pool.empty()) {
    op->emitError() << "TfIdfVectorizer needs 1-D or 2-D integer tokens and pool_int64s "
                       "(string pools are not supported)";
    return failure();
  }
  if ((mode != "TF" && mode != "IDF" && mode != "TFIDF") || minN < 1 || maxN < minN ||
      maxSkip < 0 || static_cast<int64_t>(counts.size()) < maxN || indexes.empty() ||
      (!weights.empty() && weights.size() != indexes.size())) {
    op->emitError() << "TfIdfVectorizer's attributes are inconsistent (mode, gram lengths, "
                       "ngram_counts, ngram_indexes, weights)";
    return failure();
  }
  int64_t outputs = *llvm::max_element(indexes) + 1;
  Type f32 = ob.b.getF32Type(), elem = type.getElementType();
  Value rows = type.getRank() == 1 ? ob.reshape(x, {1, type.getDimSize(0)}) : x;
  int64_t batch = cast<RankedTensorType>(rows.getType()).getDimSize(0),
          length = cast<RankedTensorType>(rows.getType()).getDimSize(1);
  Value y;
  int64_t ordinal = 0; // index of the first n-gram of length n in ngram_indexes
  for (int64_t n = 1; n <= static_cast<int64_t>(counts.size()); ++n) {
    int64_t begin = counts[n - 1],
            end = n < static_cast<int64_t>(counts.size()) ? counts[n] : pool.size();
    if (begin > end || end > static_cast<int64_t>(pool.size()) || (end - begin) % n) {
      op->emitError() << "TfIdfVectorizer's ngram_counts do not partition pool_int64s";
      return failure();
    }
    int64_t grams = (end - begin) / n, first = ordinal;
    ordinal += grams;
    if (ordinal > static_cast<int64_t>(indexes.size())) {
      op->emitError() << "TfIdfVectorizer has fewer ngram_indexes than pool n-grams";
      return failure();
    }
    if (n < minN || n > maxN || grams == 0)
      continue;
    Value counted;
    for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      int64_t windows = length - (n - 1) * (skip + 1);
      if (windows <= 0)
        break;
      Value match;
      for (int64_t k = 0; k < n; ++k) {
        SmallVector<int64_t> column;
        for (int64_t g = 0; g < grams; ++g)
          column.push_back(pool[begin + g * n + k]);
        Value token = ob.slice(rows, 1, k * (skip + 1), k * (skip + 1) + windows);
        Value gramColumn = ob.castTo(ob.ints(column), elem);
        Value eq = ob.create("Equal", {ob.reshape(token, {batch, windows, 1}), gramColumn},
                             ob.b.getI1Type());
        match = match ? ob.binary("And", match, eq) : eq;
      }
      Value sum = ob.create("ReduceSum", {ob.castTo(match, f32), ob.ints({1})}, f32,
                            {ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0))});
      counted = counted ? ob.binary("Add", counted, sum) : sum;
    }
    if (!counted)
      continue;
    if (mode == "IDF")
      counted = ob.create("Min", {counted, ob.scalar(f32, 1)}, f32);
    SmallVector<float> scatter(grams * outputs, 0.0f);
    for (int64_t g = 0; g < grams; ++g) {
      int64_t to = indexes[first + g];
      if (to < 0) {
        op->emitError() << "TfIdfVectorizer has a negative ngram_index";
        return failure();
      }
      scatter[g * outputs + to] +=
          mode == "TF" || weights.empty() ? 1.0f : static_cast<float>(weights[first + g]);
    }
    Value matrix = ob.constant(DenseElementsAttr::get(
        RankedTensorType::get({grams, outputs}, f32), ArrayRef(scatter)));
    Value part = ob.create("MatMul", {counted, matrix}, f32);
    y = y ? ob.binary("Add", y, part) : part;
  }
  if (!y)
    y = ob.constant(DenseElementsAttr::get(RankedTensorType::get({batch, outputs}, f32), 0.0f));
  return SmallVector<Value>{type.getRank() == 1 ? ob.reshape(y, {outputs}) : y};
}

} // namespace kiln
