//===- Indexing.cpp - Lower data-dependent indexing to linalg -------------===//
//
// This file implements the indexing family: Gather and GatherElements become
// generics over the output that read the data with tensor.extract at the
// run-time index (negative indices wrap).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

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

} // namespace

void populateIndexingLoweringPatterns(RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<GatherLowering, GatherElementsLowering>(converter, patterns.getContext());
}

} // namespace kiln
