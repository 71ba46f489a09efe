//===- Resample.cpp - Lower Resize to linalg ------------------------------===//
//
// This file implements the resampling family: Resize in nearest and linear
// modes, every coordinate transformation and nearest mode.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

using namespace mlir;

namespace kiln {
namespace {

/// Resize (opset 11+) in nearest and linear modes: a generic over the output that
/// maps each coordinate back to the input (coordinate_transformation_mode), then
/// picks the nearest element (nearest_mode) or interpolates the 2^rank
/// neighbours. Scales come from the `scales` input (read at run time) or, with
/// `sizes`, from the static shapes. Cubic, antialias, axes and tf_crop_and_resize
/// are not lowered.
struct ResizeLowering : OpConversionPattern<onnx::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
    StringRef nearestMode = op.getNearestMode();
    if ((mode != "nearest" && mode != "linear") || op.getAxes() ||
        (op.getAntialias() && *op.getAntialias() != 0) ||
        !llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                             "asymmetric", "tf_half_pixel_for_nn"},
                            coord))
      return failure();
    auto type = resultTypeOf(getTypeConverter(), op);
    Value x = adaptor.getX();
    auto src = cast<RankedTensorType>(x.getType());
    if (!type || !isa<FloatType>(type.getElementType()) || !src.hasStaticShape() ||
        type.getNumElements() == 0 || src.getNumElements() == 0)
      return failure();
    int64_t rank = src.getRank();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    // Per-dim scale as an f32 value.
    SmallVector<Value> scales;
    bool runtimeScales = !isa<NoneType>(adaptor.getScales().getType()) &&
                         cast<RankedTensorType>(adaptor.getScales().getType()).getNumElements() == rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (runtimeScales) {
        scales.push_back(rewriter.create<tensor::ExtractOp>(
            loc, adaptor.getScales(), ValueRange{rewriter.create<arith::ConstantIndexOp>(loc, d)}));
      } else {
        double ratio = static_cast<double>(type.getDimSize(d)) / src.getDimSize(d);
        scales.push_back(scalarConstant(rewriter, loc, f32, ratio));
      }
    }
    MLIRContext *ctx = rewriter.getContext();
    Type elem = type.getElementType();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          auto fc = [&](double v) { return scalarConstant(b, l, f32, v); };
          SmallVector<Value> lo, hi, weight;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t in = src.getDimSize(d), out = type.getDimSize(d);
            Value o = b.create<arith::UIToFPOp>(
                l, f32, b.create<arith::IndexCastOp>(l, b.getI64Type(),
                                                     b.create<linalg::IndexOp>(l, d)));
            Value s = scales[d];
            Value xr;
            if (coord == "align_corners") {
              // o * (in - 1) / (in * scale - 1): the unrounded resized length, as
              // the ONNX reference computes it (equal to out - 1 with `sizes`).
              Value denom = b.create<arith::SubFOp>(
                  l, b.create<arith::MulFOp>(l, fc(in), s), fc(1));
              Value zeroDenom = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, denom, fc(0));
              Value safe = b.create<arith::SelectOp>(l, zeroDenom, fc(1), denom);
              xr = b.create<arith::DivFOp>(l, b.create<arith::MulFOp>(l, o, fc(in - 1)), safe);
              xr = b.create<arith::SelectOp>(l, zeroDenom, fc(0), xr);
            } else if (coord == "asymmetric") {
              xr = b.create<arith::DivFOp>(l, o, s);
            } else if (coord == "tf_half_pixel_for_nn") {
              xr = b.create<arith::DivFOp>(l, b.create<arith::AddFOp>(l, o, fc(0.5)), s);
            } else {
              xr = b.create<arith::SubFOp>(
                  l, b.create<arith::DivFOp>(l, b.create<arith::AddFOp>(l, o, fc(0.5)), s), fc(0.5));
              if (coord == "pytorch_half_pixel" && out == 1)
                xr = fc(0);
            }
            Value last = fc(in - 1);
            auto toIndex = [&](Value v) {
              v = b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, v, fc(0)), last);
              return b.create<arith::IndexCastOp>(
                  l, b.getIndexType(), b.create<arith::FPToSIOp>(l, b.getI64Type(), v)).getResult();
            };
            if (mode == "nearest") {
              Value r;
              if (nearestMode == "floor") {
                r = b.create<math::FloorOp>(l, xr);
              } else if (nearestMode == "ceil") {
                r = b.create<math::CeilOp>(l, xr);
              } else {
                // round_prefer_floor / round_prefer_ceil: halves go down / up.
                Value fl = b.create<math::FloorOp>(l, xr);
                Value frac = b.create<arith::SubFOp>(l, xr, fl);
                Value half = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, frac, fc(0.5));
                Value rounded = b.create<math::FloorOp>(l, b.create<arith::AddFOp>(l, xr, fc(0.5)));
                Value tie = nearestMode == "round_prefer_ceil"
                                ? b.create<math::CeilOp>(l, xr).getResult()
                                : fl;
                r = b.create<arith::SelectOp>(l, half, tie, rounded);
              }
              lo.push_back(toIndex(r));
              continue;
            }
            Value x0 = b.create<math::FloorOp>(l, xr);
            weight.push_back(b.create<arith::SubFOp>(l, xr, x0));
            lo.push_back(toIndex(x0));
            hi.push_back(toIndex(b.create<arith::AddFOp>(l, x0, fc(1))));
          }
          Value result;
          if (mode == "nearest") {
            result = b.create<tensor::ExtractOp>(l, x, lo);
          } else {
            // Sum over the 2^rank corners, each weighted by prod(w or 1 - w).
            result = fc(0);
            for (int64_t corner = 0; corner < (int64_t(1) << rank); ++corner) {
              SmallVector<Value> coords;
              Value w = fc(1);
              for (int64_t d = 0; d < rank; ++d) {
                bool upper = corner & (int64_t(1) << d);
                coords.push_back(upper ? hi[d] : lo[d]);
                Value wd = upper ? weight[d] : b.create<arith::SubFOp>(l, fc(1), weight[d]).getResult();
                w = b.create<arith::MulFOp>(l, w, wd);
              }
              Value v = b.create<tensor::ExtractOp>(l, x, coords);
              if (elem != f32)
                v = b.create<arith::ExtFOp>(l, f32, v);
              result = b.create<arith::AddFOp>(l, result, b.create<arith::MulFOp>(l, w, v));
            }
            if (elem != f32)
              result = b.create<arith::TruncFOp>(l, elem, result);
          }
          b.create<linalg::YieldOp>(l, result);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateResampleLoweringPatterns(RewritePatternSet &patterns,
                                      TypeConverter &converter) {
  patterns.add<ResizeLowering>(converter, patterns.getContext());
}

} // namespace kiln
