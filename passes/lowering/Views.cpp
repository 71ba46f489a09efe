//===- Views.cpp - Lower views and copies to tensor/linalg ----------------===//
//
// This file implements the views-and-copies family: Reshape, Flatten,
// Squeeze/Unsqueeze (all versions) become collapse/expand reshapes to the inferred
// result type; Transpose a linalg.transpose; Concat and Split insert/extract
// slices; Slice, Tile and Expand linalg.generics whose indexing maps do the
// addressing; Pad tensor.pad or a generic; DepthToSpace/SpaceToDepth reshape,
// transpose, reshape. Operands that decide shapes (Slice's starts, Tile's repeats,
// ...) must be compile-time constants unless the output shape is static anyway.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

using namespace mlir;

namespace kiln {
namespace {

/// Ops whose result is their input with another static shape.
struct ReshapeLikeLowering : ConversionPattern {
  ReshapeLikeLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    if (!llvm::is_contained({"onnx.Reshape", "onnx.ReshapeV1", "onnx.Flatten",
                             "onnx.Squeeze", "onnx.SqueezeV11", "onnx.Unsqueeze",
                             "onnx.UnsqueezeV11"},
                            name))
      return failure();
    RankedTensorType type = resultTypeOf(getTypeConverter(), op);
    auto src = dyn_cast<RankedTensorType>(operands[0].getType());
    if (!type || !src || !type.hasStaticShape() || !src.hasStaticShape() ||
        type.getNumElements() != src.getNumElements())
      return failure();
    rewriter.replaceOp(op, reshapeTo(rewriter, op->getLoc(), operands[0], type));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<onnx::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    int64_t rank = type.getRank();
    SmallVector<int64_t> perm;
    if (auto p = op.getPerm()) {
      for (Attribute a : *p)
        perm.push_back(cast<IntegerAttr>(a).getInt());
    } else {
      for (int64_t i = rank - 1; i >= 0; --i)
        perm.push_back(i);
    }
    auto t = rewriter.create<linalg::TransposeOp>(
        op.getLoc(), adaptor.getData(), emptyTensor(rewriter, op.getLoc(), type), perm);
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<onnx::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    int64_t axis = op.getAxis() ? static_cast<int64_t>(*op.getAxis()) : 1;
    if (!normalizeAxis(axis, type.getRank()))
      return failure();
    Location loc = op.getLoc();
    Value result = emptyTensor(rewriter, loc, type);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto t = cast<RankedTensorType>(in.getType());
      if (t.getNumElements() == 0)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(type.getRank(), rewriter.getIndexAttr(1));
      for (int64_t d : t.getShape())
        sizes.push_back(rewriter.getIndexAttr(d));
      offsets[axis] = rewriter.getIndexAttr(offset);
      result = rewriter.create<tensor::InsertSliceOp>(loc, in, result, offsets, sizes, strides);
      offset += t.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Split (opset 13 and 18, with or without a `split` input) and SplitV11 (attr).
struct SplitLowering : ConversionPattern {
  SplitLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    if (name != "onnx.Split" && name != "onnx.SplitV11")
      return failure();
    auto src = cast<RankedTensorType>(operands[0].getType());
    int64_t axis = 0;
    if (auto a = op->getAttrOfType<IntegerAttr>("axis"))
      axis = a.getInt();
    if (!normalizeAxis(axis, src.getRank()))
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> results;
    int64_t offset = 0;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      RankedTensorType type = resultTypeOf(getTypeConverter(), op, i);
      if (!type)
        return failure();
      SmallVector<OpFoldResult> offsets(src.getRank(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(src.getRank(), rewriter.getIndexAttr(1));
      for (int64_t d : type.getShape())
        sizes.push_back(rewriter.getIndexAttr(d));
      offsets[axis] = rewriter.getIndexAttr(offset);
      results.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, type, operands[0], offsets, sizes, strides));
      offset += type.getDimSize(axis);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

LogicalResult lowerRuntimeSlice(onnx::SliceOp op, onnx::SliceOp::Adaptor adaptor,
                                RankedTensorType type,
                                ConversionPatternRewriter &rewriter);

/// Slice with constant starts/ends/axes/steps: a generic reading
/// input[start + step * i] per sliced axis (negative steps included).
struct SliceLowering : OpConversionPattern<onnx::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    auto src = cast<RankedTensorType>(adaptor.getData().getType());
    int64_t rank = src.getRank();
    SmallVector<int64_t> starts, ends, axes, steps;
    bool constant = getConstantInts(op.getStarts(), starts);
    if (!isa<NoneType>(op.getAxes().getType())) {
      constant &= getConstantInts(op.getAxes(), axes);
    } else {
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
    }
    if (!isa<NoneType>(op.getSteps().getType())) {
      constant &= getConstantInts(op.getSteps(), steps);
    } else {
      steps.assign(starts.size(), 1);
    }
    if (!constant)
      return lowerRuntimeSlice(op, adaptor, type, rewriter);
    SmallVector<int64_t> begin(rank, 0), stride(rank, 1);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i];
      if (!normalizeAxis(axis, rank) || steps[i] == 0)
        return failure();
      int64_t dim = src.getDimSize(axis), s = starts[i];
      if (s < 0)
        s += dim;
      // Clamp as ONNX does: [0, dim] for positive steps, [0, dim-1] for negative.
      s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      begin[axis] = s;
      stride[axis] = steps[i];
    }
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    // Forward steps are a strided tensor.extract_slice. (A generic reading
    // input[d * 1 + 0] would have linalg infer the loop range from the input's
    // larger extent.) Backward steps then read the slice through a generic.
    Location loc = op.getLoc();
    SmallVector<int64_t> offsets(rank, 0), sizes(src.getShape()), strides(rank, 1);
    bool backward = false;
    for (int64_t d = 0; d < rank; ++d) {
      if (stride[d] < 0) {
        backward = true;
        continue;
      }
      offsets[d] = begin[d];
      sizes[d] = type.getDimSize(d);
      strides[d] = stride[d];
    }
    Value data = adaptor.getData();
    if (sizes != SmallVector<int64_t>(src.getShape()) ||
        llvm::any_of(offsets, [](int64_t o) { return o != 0; }) ||
        llvm::any_of(strides, [](int64_t t) { return t != 1; })) {
      auto sliceType = RankedTensorType::get(sizes, src.getElementType());
      data = rewriter.create<tensor::ExtractSliceOp>(loc, sliceType, data, ValueRange{},
                                                     ValueRange{}, ValueRange{}, offsets,
                                                     sizes, strides);
    }
    if (!backward) {
      rewriter.replaceOp(op, data);
      return success();
    }
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(stride[d] < 0 ? getAffineDimExpr(d, ctx) * stride[d] + begin[d]
                                    : getAffineDimExpr(d, ctx));
    AffineMap in = AffineMap::get(rank, 0, exprs, ctx);
    AffineMap out = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{type}, ValueRange{data},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)},
        ArrayRef<AffineMap>{in, out},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Slice whose starts/axes/steps are run-time values (the output shape is still
/// static): each output dim's start and step are computed at run time and a
/// generic reads data[start + step * i] with tensor.extract.
LogicalResult lowerRuntimeSlice(onnx::SliceOp op, onnx::SliceOp::Adaptor adaptor,
                                RankedTensorType type,
                                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData();
  auto src = cast<RankedTensorType>(data.getType());
  int64_t rank = src.getRank();
  if (type.getNumElements() == 0) {
    rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
    return success();
  }
  auto lengthOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getNumElements();
  };
  int64_t n = lengthOf(adaptor.getStarts());
  auto read = [&](Value tensor, int64_t j) -> Value {
    Value idx = rewriter.create<arith::ConstantIndexOp>(loc, j);
    Value v = rewriter.create<tensor::ExtractOp>(loc, tensor, ValueRange{idx});
    if (!v.getType().isInteger(64))
      v = rewriter.create<arith::ExtSIOp>(loc, rewriter.getI64Type(), v);
    return rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), v);
  };
  auto cst = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  bool hasAxes = !isa<NoneType>(adaptor.getAxes().getType());
  bool hasSteps = !isa<NoneType>(adaptor.getSteps().getType());
  SmallVector<Value> begin, stride;
  for (int64_t d = 0; d < rank; ++d) {
    begin.push_back(cst(0));
    stride.push_back(cst(1));
  }
  using P = arith::CmpIPredicate;
  for (int64_t j = 0; j < n; ++j) {
    Value axis = hasAxes ? read(adaptor.getAxes(), j) : cst(j);
    Value start = read(adaptor.getStarts(), j);
    Value step = hasSteps ? read(adaptor.getSteps(), j) : cst(1);
    for (int64_t d = 0; d < rank; ++d) {
      Value isD = rewriter.create<arith::OrIOp>(
          loc, rewriter.create<arith::CmpIOp>(loc, P::eq, axis, cst(d)),
          rewriter.create<arith::CmpIOp>(loc, P::eq, axis, cst(d - rank)));
      // start < 0 counts from the end; clamp to [0, dim] (step > 0) or
      // [0, dim - 1] (step < 0).
      int64_t dim = src.getDimSize(d);
      Value s = rewriter.create<arith::SelectOp>(
          loc, rewriter.create<arith::CmpIOp>(loc, P::slt, start, cst(0)),
          rewriter.create<arith::AddIOp>(loc, start, cst(dim)), start);
      Value positive = rewriter.create<arith::CmpIOp>(loc, P::sgt, step, cst(0));
      Value hi = rewriter.create<arith::SelectOp>(loc, positive, cst(dim), cst(dim - 1));
      s = rewriter.create<arith::MaxSIOp>(loc, s, cst(0));
      s = rewriter.create<arith::MinSIOp>(loc, s, hi);
      begin[d] = rewriter.create<arith::SelectOp>(loc, isD, s, begin[d]);
      stride[d] = rewriter.create<arith::SelectOp>(loc, isD, step, stride[d]);
    }
  }
  MLIRContext *ctx = rewriter.getContext();
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = b.create<linalg::IndexOp>(l, d);
          coords.push_back(b.create<arith::AddIOp>(
              l, begin[d], b.create<arith::MulIOp>(l, stride[d], i)));
        }
        b.create<linalg::YieldOp>(l, b.create<tensor::ExtractOp>(l, data, coords).getResult());
      });
  rewriter.replaceOp(op, generic.getResult(0));
  return success();
}

/// Expand and Tile: generics whose input map broadcasts (Expand) or wraps (Tile).
struct ExpandLowering : OpConversionPattern<onnx::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    rewriter.replaceOp(op, buildElementwise(rewriter, op.getLoc(), type,
                                            ValueRange{adaptor.getInput()},
                                            [](OpBuilder &, Location, ValueRange a) {
                                              return a[0];
                                            }));
    return success();
  }
};

struct TileLowering : OpConversionPattern<onnx::TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    auto src = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = src.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) % src.getDimSize(d));
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), type));
      return success();
    }
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{type}, ValueRange{adaptor.getInput()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), type)},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, exprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Pad in constant mode with constant pads: tensor.pad.
struct PadLowering : OpConversionPattern<onnx::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<int64_t> constantPads;
    if (op.getMode() != "constant" || !getConstantInts(op.getPads(), constantPads))
      return lowerGeneral(op, adaptor, rewriter);
    auto type = resultTypeOf(getTypeConverter(), op);
    auto src = cast<RankedTensorType>(adaptor.getData().getType());
    int64_t rank = src.getRank();
    SmallVector<int64_t> pads, axes;
    if (!getConstantInts(op.getPads(), pads))
      return failure();
    if (!isa<NoneType>(op.getAxes().getType())) {
      if (!getConstantInts(op.getAxes(), axes))
        return failure();
    } else {
      for (int64_t i = 0; i < rank; ++i)
        axes.push_back(i);
    }
    if (pads.size() != 2 * axes.size())
      return failure();
    SmallVector<int64_t> low(rank, 0), high(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i];
      if (!normalizeAxis(axis, rank) || pads[i] < 0 || pads[i + axes.size()] < 0)
        return failure(); // negative pads (cropping) are not lowered yet
      low[axis] = pads[i];
      high[axis] = pads[i + axes.size()];
    }
    Location loc = op.getLoc();
    Value fill;
    if (!isa<NoneType>(op.getConstantValue().getType())) {
      Value cv = adaptor.getConstantValue();
      auto cvType = cast<RankedTensorType>(cv.getType());
      SmallVector<Value> zeros(cvType.getRank(),
                               rewriter.create<arith::ConstantIndexOp>(loc, 0));
      fill = rewriter.create<tensor::ExtractOp>(loc, cv, zeros);
    } else {
      fill = scalarConstant(rewriter, loc, type.getElementType(), 0);
    }
    auto pad = rewriter.create<tensor::PadOp>(loc, type, adaptor.getData(), low, high,
                                              ValueRange{}, ValueRange{});
    Block *block = rewriter.createBlock(&pad.getRegion());
    for (int64_t i = 0; i < rank; ++i)
      block->addArgument(rewriter.getIndexType(), loc);
    rewriter.setInsertionPointToEnd(block);
    rewriter.create<tensor::YieldOp>(loc, fill);
    rewriter.setInsertionPointAfter(pad);
    rewriter.replaceOp(op, pad.getResult());
    return success();
  }

  /// Any mode, pads known only at run time: a generic over the output computes
  /// each element's source coordinate (shifted by the low pad) and, outside the
  /// input, the constant (constant), the nearest edge (edge), the mirror image
  /// (reflect) or the wrapped-around element (wrap).
  LogicalResult lowerGeneral(onnx::PadOp op, OpAdaptor adaptor,
                             ConversionPatternRewriter &rewriter) const {
    StringRef mode = op.getMode();
    if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
      return failure();
    auto type = resultTypeOf(getTypeConverter(), op);
    Value data = adaptor.getData();
    auto src = cast<RankedTensorType>(data.getType());
    int64_t rank = src.getRank();
    Location loc = op.getLoc();
    if (type.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, type));
      return success();
    }
    if (src.getNumElements() == 0 && mode != "constant")
      return failure();
    auto pads = cast<RankedTensorType>(adaptor.getPads().getType());
    int64_t numAxes = pads.getNumElements() / 2;
    bool hasAxes = !isa<NoneType>(adaptor.getAxes().getType());
    auto cst = [&](int64_t v) { return rewriter.create<arith::ConstantIndexOp>(loc, v).getResult(); };
    auto read = [&](Value t, int64_t j) -> Value {
      Value v = rewriter.create<tensor::ExtractOp>(loc, t, ValueRange{cst(j)});
      if (!v.getType().isInteger(64))
        v = rewriter.create<arith::ExtSIOp>(loc, rewriter.getI64Type(), v);
      return rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), v);
    };
    SmallVector<Value> low(rank, cst(0));
    for (int64_t j = 0; j < numAxes; ++j) {
      Value axis = hasAxes ? read(adaptor.getAxes(), j) : cst(j);
      Value begin = read(adaptor.getPads(), j);
      for (int64_t d = 0; d < rank; ++d) {
        Value isD = rewriter.create<arith::OrIOp>(
            loc, rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, axis, cst(d)),
            rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, axis, cst(d - rank)));
        low[d] = rewriter.create<arith::SelectOp>(loc, isD, begin, low[d]);
      }
    }
    Type elem = type.getElementType();
    Value fill;
    if (!isa<NoneType>(adaptor.getConstantValue().getType())) {
      auto cvType = cast<RankedTensorType>(adaptor.getConstantValue().getType());
      SmallVector<Value> zeros(cvType.getRank(), cst(0));
      fill = rewriter.create<tensor::ExtractOp>(loc, adaptor.getConstantValue(), zeros);
    } else {
      fill = scalarConstant(rewriter, loc, elem, 0);
    }
    MLIRContext *ctx = rewriter.getContext();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          using P = arith::CmpIPredicate;
          Value inside = b.create<arith::ConstantOp>(l, b.getBoolAttr(true));
          SmallVector<Value> coords;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t dim = src.getDimSize(d);
            Value c = b.create<arith::SubIOp>(l, b.create<linalg::IndexOp>(l, d), low[d]);
            Value zero = b.create<arith::ConstantIndexOp>(l, 0);
            Value last = b.create<arith::ConstantIndexOp>(l, dim - 1);
            Value below = b.create<arith::CmpIOp>(l, P::slt, c, zero);
            Value above = b.create<arith::CmpIOp>(l, P::sgt, c, last);
            if (mode == "constant") {
              inside = b.create<arith::AndIOp>(
                  l, inside, b.create<arith::XOrIOp>(
                                 l, b.create<arith::OrIOp>(l, below, above),
                                 b.create<arith::ConstantOp>(l, b.getBoolAttr(true))));
              c = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, c, last), zero);
            } else if (mode == "edge") {
              c = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, c, last), zero);
            } else if (mode == "reflect") {
              // Mirror without repeating the edge: -c below, 2*(dim-1) - c above.
              Value mirrored = b.create<arith::SelectOp>(
                  l, below, b.create<arith::SubIOp>(l, zero, c), c);
              Value twice = b.create<arith::ConstantIndexOp>(l, 2 * (dim - 1));
              mirrored = b.create<arith::SelectOp>(
                  l, b.create<arith::CmpIOp>(l, P::sgt, mirrored, last),
                  b.create<arith::SubIOp>(l, twice, mirrored), mirrored);
              c = b.create<arith::MaxSIOp>(l, b.create<arith::MinSIOp>(l, mirrored, last), zero);
            } else { // wrap
              Value size = b.create<arith::ConstantIndexOp>(l, dim);
              Value r = b.create<arith::RemSIOp>(l, c, size);
              c = b.create<arith::SelectOp>(l, b.create<arith::CmpIOp>(l, P::slt, r, zero),
                                            b.create<arith::AddIOp>(l, r, size), r);
            }
            coords.push_back(c);
          }
          Value v = src.getNumElements() == 0
                        ? fill
                        : b.create<tensor::ExtractOp>(l, data, coords).getResult();
          if (mode == "constant" && src.getNumElements() != 0)
            v = b.create<arith::SelectOp>(l, inside, v, fill);
          b.create<linalg::YieldOp>(l, v);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// DepthToSpace / SpaceToDepth: reshape, transpose, reshape.
struct DepthSpaceLowering : ConversionPattern {
  DepthSpaceLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    bool toSpace = name == "onnx.DepthToSpace";
    if (!toSpace && name != "onnx.SpaceToDepth")
      return failure();
    auto src = cast<RankedTensorType>(operands[0].getType());
    RankedTensorType type = resultTypeOf(getTypeConverter(), op);
    auto bs = op->getAttrOfType<IntegerAttr>("blocksize");
    if (!type || !bs || src.getRank() != 4)
      return failure();
    int64_t b = bs.getInt(), n = src.getDimSize(0), c = src.getDimSize(1),
            h = src.getDimSize(2), w = src.getDimSize(3);
    SmallVector<int64_t> shape, perm;
    if (toSpace) {
      bool crd = false;
      if (auto m = op->getAttrOfType<StringAttr>("mode"))
        crd = m.getValue() == "CRD";
      if (crd) {
        shape = {n, c / (b * b), b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        shape = {n, b, b, c / (b * b), h, w};
        perm = {0, 3, 4, 1, 5, 2};
      }
    } else {
      shape = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
    }
    Location loc = op->getLoc();
    Type elem = src.getElementType();
    Value x = reshapeTo(rewriter, loc, operands[0], RankedTensorType::get(shape, elem));
    SmallVector<int64_t> tShape;
    for (int64_t p : perm)
      tShape.push_back(shape[p]);
    auto tType = RankedTensorType::get(tShape, elem);
    Value t = rewriter.create<linalg::TransposeOp>(loc, x, emptyTensor(rewriter, loc, tType), perm)
                  .getResult()[0];
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, t, type));
    return success();
  }
};

} // namespace

void populateViewLoweringPatterns(RewritePatternSet &patterns,
                                  TypeConverter &converter) {
  patterns.add<ReshapeLikeLowering, TransposeLowering, ConcatLowering, SplitLowering,
               SliceLowering, ExpandLowering, TileLowering, PadLowering, DepthSpaceLowering>(converter, patterns.getContext());
}

} // namespace kiln
