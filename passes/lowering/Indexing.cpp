//===- Indexing.cpp - Lower data-dependent indexing to linalg -------------===//
//
// This file implements the indexing family: Gather, GatherElements, GatherND and
// ReverseSequence become generics over the output that read the data with
// tensor.extract at the run-time index (negative indices wrap; out-of-range ones are
// clamped). Scatter, ScatterElements and ScatterND turn around into gathers too:
// each output element folds, over every update, the updates whose index names it
// (last one wins, or the reduction: add, mul, max, min), starting from the data.
// That costs (output elements x updates) comparisons, and maps to every target
// like any reduction.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {
namespace {

/// Gather: out[a..., i..., b...] = data[a..., idx[i...], b...].
struct GatherLowering : OpConversionPattern<onnx::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto idxType = cast<RankedTensorType>(indices.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (!normalizeAxis(axis, dataType.getRank()))
      return failure();
    int64_t rank = type.getRank(), idxRank = idxType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < idxRank; ++i)
      idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
    AffineMap idxMap = AffineMap::get(rank, 0, idxExprs, ctx);
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    int64_t dim = dataType.getDimSize(axis);
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{type}, ValueRange{indices},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)},
        ArrayRef<AffineMap>{idxMap, AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value idx = wrapIndex(b, l, args[0], dim);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < axis; ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d));
          coords.push_back(idx);
          for (int64_t d = axis + 1; d < dataType.getRank(); ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d - 1 + idxRank));
          b.create<linalg::YieldOp>(l, b.create<tensor::ExtractOp>(l, data, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// GatherElements: out[i...] = data[i... with i_axis replaced by idx[i...]].
struct GatherElementsLowering : OpConversionPattern<onnx::GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Value data = adaptor.getData();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (!normalizeAxis(axis, rank))
      return failure();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    int64_t dim = dataType.getDimSize(axis);
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{type}, ValueRange{adaptor.getIndices()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)}, ArrayRef<AffineMap>{id, id},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value idx = wrapIndex(b, l, a[0], dim);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(d == axis ? idx : b.create<linalg::IndexOp>(l, d).getResult());
          b.create<linalg::YieldOp>(l, b.create<tensor::ExtractOp>(l, data, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// GatherND: out[i..., j...] = data[i[:b]..., idx[i..., 0..m-1]..., j...], where
/// i ranges over indices.shape[:-1] (the first b of which are batch dims shared
/// with data), m = indices.shape[-1] and j over data.shape[b + m:].
struct GatherNDLowering : OpConversionPattern<onnx::GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto idxType = cast<RankedTensorType>(indices.getType());
    int64_t b = static_cast<int64_t>(op.getBatchDims().value_or(0));
    int64_t q = idxType.getRank(), r = dataType.getRank();
    if (!type || !type.hasStaticShape() || !idxType.hasStaticShape() || q < 1 || b < 0 ||
        b >= q)
      return failure();
    int64_t m = idxType.getDimSize(q - 1);
    if (b + m > r || type.getRank() != q - 1 + r - b - m)
      return rewriter.notifyMatchFailure(op, "index depth does not fit the data");
    Location loc = op.getLoc();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    int64_t rank = type.getRank();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, getContext())},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange) {
          SmallVector<Value> outIdx;
          for (int64_t d = 0; d < rank; ++d)
            outIdx.push_back(nb.create<linalg::IndexOp>(l, d));
          SmallVector<Value> coords(outIdx.begin(), outIdx.begin() + b);
          SmallVector<Value> idxCoords(outIdx.begin(), outIdx.begin() + q - 1);
          idxCoords.push_back(Value());
          for (int64_t k = 0; k < m; ++k) {
            idxCoords.back() = nb.create<arith::ConstantIndexOp>(l, k);
            Value raw = nb.create<tensor::ExtractOp>(l, indices, idxCoords);
            coords.push_back(wrapIndex(nb, l, raw, dataType.getDimSize(b + k)));
          }
          coords.append(outIdx.begin() + q - 1, outIdx.end());
          nb.create<linalg::YieldOp>(l,
                                     nb.create<tensor::ExtractOp>(l, data, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// ReverseSequence: out[.., t, .., b, ..] = in[.., t < len[b] ? len[b] - 1 - t : t, ..].
struct ReverseSequenceLowering : OpConversionPattern<onnx::ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput(), lens = adaptor.getSequenceLens();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    int64_t timeAxis = static_cast<int64_t>(op.getTimeAxis());
    int64_t batchAxis = static_cast<int64_t>(op.getBatchAxis());
    if (!type.hasStaticShape() || rank < 2 || timeAxis == batchAxis ||
        !normalizeAxis(timeAxis, rank) || !normalizeAxis(batchAxis, rank))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    int64_t steps = type.getDimSize(timeAxis);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{lens}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, getAffineDimExpr(batchAxis, ctx)),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d)
            coords.push_back(b.create<linalg::IndexOp>(l, d));
          Value t = coords[timeAxis];
          Value len = b.create<arith::IndexCastOp>(l, b.getIndexType(), args[0]);
          Value one = b.create<arith::ConstantIndexOp>(l, 1);
          Value reversed =
              b.create<arith::SubIOp>(l, b.create<arith::SubIOp>(l, len, one), t);
          Value inside = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, t, len);
          Value source = b.create<arith::SelectOp>(l, inside, reversed, t);
          Value zero = b.create<arith::ConstantIndexOp>(l, 0);
          Value last = b.create<arith::ConstantIndexOp>(l, steps - 1);
          source = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, source, last), zero);
          coords[timeAxis] = source;
          b.create<linalg::YieldOp>(l, b.create<tensor::ExtractOp>(l, input, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// How scattered updates combine with what is there.
enum class ScatterReduction { None, Add, Mul, Max, Min };

std::optional<ScatterReduction> scatterReduction(std::optional<StringRef> name) {
  return llvm::StringSwitch<std::optional<ScatterReduction>>(name.value_or("none"))
      .Case("none", ScatterReduction::None)
      .Case("add", ScatterReduction::Add)
      .Case("mul", ScatterReduction::Mul)
      .Case("max", ScatterReduction::Max)
      .Case("min", ScatterReduction::Min)
      .Default(std::nullopt);
}

Value combineScatter(OpBuilder &b, Location l, ScatterReduction r, ElemKind kind, Value acc,
                     Value v) {
  bool isFloat = kind == ElemKind::Float;
  bool isUnsigned = kind == ElemKind::Unsigned || kind == ElemKind::Bool;
  switch (r) {
  case ScatterReduction::None:
    return v;
  case ScatterReduction::Add:
    return isFloat ? b.create<arith::AddFOp>(l, acc, v).getResult()
                   : b.create<arith::AddIOp>(l, acc, v).getResult();
  case ScatterReduction::Mul:
    return isFloat ? b.create<arith::MulFOp>(l, acc, v).getResult()
                   : b.create<arith::MulIOp>(l, acc, v).getResult();
  case ScatterReduction::Max:
    return isFloat      ? b.create<arith::MaximumFOp>(l, acc, v).getResult()
           : isUnsigned ? b.create<arith::MaxUIOp>(l, acc, v).getResult()
                        : b.create<arith::MaxSIOp>(l, acc, v).getResult();
  case ScatterReduction::Min:
    return isFloat      ? b.create<arith::MinimumFOp>(l, acc, v).getResult()
           : isUnsigned ? b.create<arith::MinUIOp>(l, acc, v).getResult()
                        : b.create<arith::MinSIOp>(l, acc, v).getResult();
  }
  return v;
}

/// The update that lands at output position `out` (the parallel loop indices) for
/// update position `at` (the reduction loop indices): whether it lands there, and
/// its value.
using ScatterHit = llvm::function_ref<std::pair<Value, Value>(
    OpBuilder &b, Location l, ArrayRef<Value> out, ArrayRef<Value> at)>;

/// out[p] = fold over the update positions (extents `updateExtents`) of the hits at
/// p, from data[p]: one generic, output dims parallel, update dims reductions.
Value scatterAsGather(OpBuilder &b, Location loc, Value data,
                      ArrayRef<int64_t> updateExtents, ScatterReduction reduction,
                      ElemKind kind, ScatterHit hit) {
  auto type = cast<RankedTensorType>(data.getType());
  int64_t rank = type.getRank(), extra = static_cast<int64_t>(updateExtents.size());
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> updateDims;
  for (int64_t i = 0; i < extra; ++i)
    updateDims.push_back(getAffineDimExpr(rank + i, ctx));
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank + extra, ctx).getMajorSubMap(rank);
  // The update dims' extents come from an operand of that shape that is never read.
  auto extentType = RankedTensorType::get(updateExtents, b.getI8Type());
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(extra, utils::IteratorType::reduction);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{emptyTensor(b, loc, extentType)}, ValueRange{data},
      ArrayRef<AffineMap>{AffineMap::get(rank + extra, 0, updateDims, ctx), outMap},
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> out, at;
        for (int64_t d = 0; d < rank; ++d)
          out.push_back(nb.create<linalg::IndexOp>(l, d));
        for (int64_t d = 0; d < extra; ++d)
          at.push_back(nb.create<linalg::IndexOp>(l, rank + d));
        auto [lands, value] = hit(nb, l, out, at);
        Value acc = args[1];
        Value next = combineScatter(nb, l, reduction, kind, acc, value);
        nb.create<linalg::YieldOp>(l, nb.create<arith::SelectOp>(l, lands, next, acc).getResult());
      });
  return generic.getResult(0);
}

/// `i` (index) < `bound`, as i1.
Value below(OpBuilder &b, Location l, Value i, int64_t bound) {
  return b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, i,
                                 b.create<arith::ConstantIndexOp>(l, bound));
}

/// Scatter (opsets 9-10) and ScatterElements: update u lands at u with its axis
/// coordinate replaced by indices[u].
template <typename ScatterOp>
struct ScatterElementsLowering : OpConversionPattern<ScatterOp> {
  using OpConversionPattern<ScatterOp>::OpConversionPattern;
  using OpAdaptor = typename ScatterOp::Adaptor;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto type = cast<RankedTensorType>(data.getType());
    auto updType = cast<RankedTensorType>(updates.getType());
    int64_t rank = type.getRank(), axis = static_cast<int64_t>(op.getAxis());
    std::optional<ScatterReduction> reduction = ScatterReduction::None;
    if constexpr (std::is_same_v<ScatterOp, onnx::ScatterElementsOp>)
      reduction = scatterReduction(op.getReduction());
    if (!reduction || !type.hasStaticShape() || !updType.hasStaticShape() ||
        updType.getRank() != rank || !normalizeAxis(axis, rank))
      return failure();
    for (int64_t d = 0; d < rank; ++d)
      if (updType.getDimSize(d) > type.getDimSize(d) && d != axis)
        return rewriter.notifyMatchFailure(op, "updates larger than the data");
    if (updType.getNumElements() == 0) {
      rewriter.replaceOp(op, data);
      return success();
    }
    Value result = scatterAsGather(
        rewriter, op.getLoc(), data, {updType.getDimSize(axis)}, *reduction,
        elemKind(op.getData().getType()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> out, ArrayRef<Value> at) {
          // The update at `out` with the axis coordinate `at`, if `out` lies inside
          // the updates' shape off the axis.
          SmallVector<Value> u(out.begin(), out.end());
          u[axis] = at[0];
          Value inside = b.create<arith::ConstantIntOp>(l, 1, 1);
          for (int64_t d = 0; d < rank; ++d) {
            if (d == axis)
              continue;
            inside = b.create<arith::AndIOp>(l, inside, below(b, l, out[d], updType.getDimSize(d)));
            Value last = b.create<arith::ConstantIndexOp>(l, updType.getDimSize(d) - 1);
            u[d] = b.create<arith::MinUIOp>(l, out[d], last);
          }
          Value target = wrapIndex(b, l, b.create<tensor::ExtractOp>(l, indices, u),
                                   type.getDimSize(axis));
          Value lands = b.create<arith::AndIOp>(
              l, inside,
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, target, out[axis]));
          return std::make_pair(lands, b.create<tensor::ExtractOp>(l, updates, u).getResult());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// ScatterND: update slice i (indices.shape[:-1]) lands at data[idx[i, 0..m-1], ...].
struct ScatterNDLowering : OpConversionPattern<onnx::ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto type = cast<RankedTensorType>(data.getType());
    auto idxType = cast<RankedTensorType>(indices.getType());
    std::optional<ScatterReduction> reduction = scatterReduction(op.getReduction());
    int64_t rank = type.getRank(), q = idxType.getRank();
    if (!reduction || !type.hasStaticShape() || !idxType.hasStaticShape() || q < 1)
      return failure();
    int64_t m = idxType.getDimSize(q - 1);
    if (m < 1 || m > rank)
      return rewriter.notifyMatchFailure(op, "index depth does not fit the data");
    ArrayRef<int64_t> positions = idxType.getShape().drop_back();
    if (llvm::is_contained(positions, 0)) {
      rewriter.replaceOp(op, data);
      return success();
    }
    SmallVector<int64_t> extents(positions.begin(), positions.end());
    if (extents.empty())
      extents.push_back(1); // a single index tuple
    bool single = positions.empty();
    Value result = scatterAsGather(
        rewriter, op.getLoc(), data, extents, *reduction, elemKind(op.getData().getType()),
        [&](OpBuilder &b, Location l, ArrayRef<Value> out, ArrayRef<Value> at) {
          SmallVector<Value> i = single ? SmallVector<Value>() : SmallVector<Value>(at);
          i.push_back(Value());
          Value lands = b.create<arith::ConstantIntOp>(l, 1, 1);
          for (int64_t k = 0; k < m; ++k) {
            i.back() = b.create<arith::ConstantIndexOp>(l, k);
            Value target = wrapIndex(b, l, b.create<tensor::ExtractOp>(l, indices, i),
                                     type.getDimSize(k));
            lands = b.create<arith::AndIOp>(
                l, lands, b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, target, out[k]));
          }
          SmallVector<Value> u = single ? SmallVector<Value>() : SmallVector<Value>(at);
          u.append(out.begin() + m, out.end());
          return std::make_pair(lands, b.create<tensor::ExtractOp>(l, updates, u).getResult());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateIndexingLoweringPatterns(RewritePatternSet &patterns,
                                      TypeConverter &converter) {
  patterns.add<GatherLowering, GatherElementsLowering, GatherNDLowering,
               ReverseSequenceLowering, ScatterElementsLowering<onnx::ScatterOp>,
               ScatterElementsLowering<onnx::ScatterElementsOp>, ScatterNDLowering>(
      converter, patterns.getContext());
}

} // namespace kiln
