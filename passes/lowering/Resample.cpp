//===- Resample.cpp - Lower Resize to linalg ------------------------------===//
//
// This file implements the resampling family: Resize in nearest, linear and cubic
// modes, every coordinate transformation (tf_crop_and_resize with its roi and
// extrapolation value) and nearest mode; GridSample (4-D) in bilinear, nearest and
// bicubic modes with zeros, border and reflection padding; RoiAlign (avg, fixed
// sampling ratio).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

using namespace mlir;

namespace kiln {
namespace {

/// Resize (opset 11+) in nearest, linear and cubic modes: a generic over the output
/// that maps each coordinate back to the input (coordinate_transformation_mode),
/// then picks the nearest element (nearest_mode) or weighs the neighbours of every
/// resized dim (2 for linear, 4 for cubic: Keys' kernel with cubic_coeff_a, edges
/// repeated, or with exclude_outside dropped and the rest renormalized); a dim left
/// alone reads one position. Scales come from the `scales` input (read at run
/// time) or, with `sizes`, from the static shapes. Antialias and axes are not
/// lowered.
struct ResizeLowering : OpConversionPattern<onnx::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef mode = op.getMode(), coord = op.getCoordinateTransformationMode();
    StringRef nearestMode = op.getNearestMode();
    if ((mode != "nearest" && mode != "linear" && mode != "cubic") || op.getAxes() ||
        (op.getAntialias() && *op.getAntialias() != 0) ||
        !llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                             "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"},
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
          SmallVector<Value> lo;
          Value outside = b.create<arith::ConstantIntOp>(l, 0, 1);
          // Linear and cubic: per dim the input positions read (taps) and weights.
          SmallVector<SmallVector<std::pair<Value, Value>>> taps(rank);
          for (int64_t d = 0; d < rank; ++d) {
            int64_t in = src.getDimSize(d), out = type.getDimSize(d);
            // Linear and cubic: a dim the resize leaves alone (same extent,
            // coordinate o -> o) reads one position.
            if (mode != "nearest" && in == out && coord != "tf_half_pixel_for_nn" &&
                coord != "tf_crop_and_resize") {
              taps[d].push_back({b.create<linalg::IndexOp>(l, d), fc(1)});
              continue;
            }
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
            } else if (coord == "tf_crop_and_resize") {
              // The crop [start, end] of the roi input (fractions of the extent):
              // start (in - 1) + o (end - start) (in - 1) / (out - 1), its middle
              // when out is 1; outside the input, the extrapolation value.
              auto roiAt = [&](int64_t i) {
                Value v = b.create<tensor::ExtractOp>(
                    l, adaptor.getRoi(), ValueRange{b.create<arith::ConstantIndexOp>(l, i)});
                if (v.getType().getIntOrFloatBitWidth() > 32)
                  return b.create<arith::TruncFOp>(l, f32, v).getResult();
                if (v.getType() != f32)
                  return b.create<arith::ExtFOp>(l, f32, v).getResult();
                return v;
              };
              Value start = roiAt(d), end = roiAt(rank + d);
              if (out > 1) {
                Value step = b.create<arith::DivFOp>(
                    l, b.create<arith::MulFOp>(l, b.create<arith::SubFOp>(l, end, start), fc(in - 1)),
                    fc(out - 1));
                xr = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, start, fc(in - 1)),
                                             b.create<arith::MulFOp>(l, o, step));
              } else {
                xr = b.create<arith::MulFOp>(
                    l, b.create<arith::MulFOp>(l, b.create<arith::AddFOp>(l, start, end), fc(0.5)),
                    fc(in - 1));
              }
              Value below = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLT, xr, fc(0));
              Value above = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, xr, fc(in - 1));
              outside = b.create<arith::OrIOp>(l, outside, b.create<arith::OrIOp>(l, below, above));
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
            Value t = b.create<arith::SubFOp>(l, xr, x0);
            if (mode == "linear") {
              taps[d].push_back({toIndex(x0), b.create<arith::SubFOp>(l, fc(1), t)});
              taps[d].push_back({toIndex(b.create<arith::AddFOp>(l, x0, fc(1))), t});
              continue;
            }
            // Cubic (Keys, coefficient A) at x0 - 1 .. x0 + 2, the distances being
            // 1 + t, t, 1 - t and 2 - t; positions past the edges read the edge.
            double a = op.getCubicCoeffA().convertToDouble();
            auto near = [&](Value z) { // |z| <= 1: ((A + 2) z - (A + 3)) z^2 + 1
              Value p = b.create<arith::SubFOp>(
                  l, b.create<arith::MulFOp>(l, fc(a + 2), z), fc(a + 3));
              return b.create<arith::AddFOp>(
                  l, b.create<arith::MulFOp>(l, b.create<arith::MulFOp>(l, p, z), z), fc(1));
            };
            auto far = [&](Value z) { // 1 < |z| < 2: ((A z - 5A) z + 8A) z - 4A
              Value p = b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, fc(a), z),
                                                fc(5 * a));
              p = b.create<arith::AddFOp>(l, b.create<arith::MulFOp>(l, p, z), fc(8 * a));
              return b.create<arith::SubFOp>(l, b.create<arith::MulFOp>(l, p, z), fc(4 * a));
            };
            Value oneMinus = b.create<arith::SubFOp>(l, fc(1), t);
            Value weights[4] = {far(b.create<arith::AddFOp>(l, t, fc(1))), near(t),
                                near(oneMinus), far(b.create<arith::AddFOp>(l, oneMinus, fc(1)))};
            Value positions[4];
            Value sum = fc(0);
            for (int k = 0; k < 4; ++k) {
              positions[k] = b.create<arith::AddFOp>(l, x0, fc(k - 1));
              if (op.getExcludeOutside() != 0) {
                // Positions outside the input weigh nothing; the rest renormalize.
                Value inside = b.create<arith::AndIOp>(
                    l, b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, positions[k], fc(0)),
                    b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, positions[k], last));
                weights[k] = b.create<arith::SelectOp>(l, inside, weights[k], fc(0));
              }
              sum = b.create<arith::AddFOp>(l, sum, weights[k]);
            }
            for (int k = 0; k < 4; ++k) {
              Value w = op.getExcludeOutside() != 0
                            ? b.create<arith::DivFOp>(l, weights[k], sum).getResult()
                            : weights[k];
              taps[d].push_back({toIndex(positions[k]), w});
            }
          }
          Value result;
          if (mode == "nearest") {
            result = b.create<tensor::ExtractOp>(l, x, lo);
          } else {
            // Sum over every combination of one tap per dim, weighted by the
            // product of the taps' weights.
            result = fc(0);
            int64_t combinations = 1;
            for (const auto &t : taps)
              combinations *= static_cast<int64_t>(t.size());
            for (int64_t c = 0; c < combinations; ++c) {
              SmallVector<Value> coords;
              Value w = fc(1);
              for (int64_t d = 0, rest = c; d < rank; ++d) {
                const auto &[position, wd] = taps[d][rest % taps[d].size()];
                rest /= static_cast<int64_t>(taps[d].size());
                coords.push_back(position);
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
          if (coord == "tf_crop_and_resize")
            result = b.create<arith::SelectOp>(
                l, outside,
                scalarConstant(b, l, elem, op.getExtrapolationValue().convertToDouble()),
                result);
          b.create<linalg::YieldOp>(l, result);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// f32 scalar arithmetic in a generic's body.
struct F32Math {
  OpBuilder &b;
  Location l;
  Value c(double v) const { return scalarConstant(b, l, b.getF32Type(), v); }
  Value add(Value x, Value y) const { return b.create<arith::AddFOp>(l, x, y); }
  Value sub(Value x, Value y) const { return b.create<arith::SubFOp>(l, x, y); }
  Value mul(Value x, Value y) const { return b.create<arith::MulFOp>(l, x, y); }
  Value max(Value x, Value y) const { return b.create<arith::MaximumFOp>(l, x, y); }
  Value index(int64_t d) const { return b.create<linalg::IndexOp>(l, d); }
};

/// A parallel generic over `type` (the output) whose body computes each element.
Value generateEach(OpBuilder &rewriter, Location loc, RankedTensorType type,
                   llvm::function_ref<Value(const F32Math &)> element) {
  int64_t rank = type.getRank();
  auto generic = rewriter.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
      ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange) {
        b.create<linalg::YieldOp>(l, element(F32Math{b, l}));
      });
  return generic.getResult(0);
}

/// GridSample-16 on a 4-D X: a generic over the output [N, C, Ho, Wo] that reads
/// its grid point, maps it to input pixels (align_corners), applies the padding
/// mode to the coordinates (border clamps; reflection reflects about the edges,
/// then clamps) and interpolates. Taps outside the input read 0 (zeros padding).
/// Bicubic applies the padding per tap, with Keys' kernel at a = -0.75, as PyTorch
/// (whose results the ONNX tests hold) does.
struct GridSampleLowering : OpConversionPattern<onnx::GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef mode = op.getMode(), padding = op.getPaddingMode();
    bool alignCorners = op.getAlignCorners() != 0;
    auto type = resultTypeOf(getTypeConverter(), op);
    Value x = adaptor.getX(), grid = adaptor.getGrid();
    auto src = cast<RankedTensorType>(x.getType());
    auto gridType = cast<RankedTensorType>(grid.getType());
    if (!type || src.getRank() != 4 || !src.getElementType().isF32() ||
        !gridType.getElementType().isF32() || !src.hasStaticShape() ||
        !llvm::is_contained({"bilinear", "nearest", "bicubic"}, mode) ||
        !llvm::is_contained({"zeros", "border", "reflection"}, padding))
      return failure();
    int64_t height = src.getDimSize(2), width = src.getDimSize(3);
    Location loc = op.getLoc();
    Value sampled = generateEach(rewriter, loc, type, [&](const F32Math &m) {
      OpBuilder &b = m.b;
      Location l = m.l;
      auto clamp = [&](Value v, double lo, double hi) {
        return b.create<arith::MinimumFOp>(l, b.create<arith::MaximumFOp>(l, v, m.c(lo)), m.c(hi))
            .getResult();
      };
      Value n = m.index(0), c = m.index(1);
      auto gridAt = [&](int64_t k) {
        return b.create<tensor::ExtractOp>(
            l, grid, ValueRange{n, m.index(2), m.index(3), b.create<arith::ConstantIndexOp>(l, k)})
            .getResult();
      };
      // Grid [-1, 1] -> pixel coordinates.
      auto unnormalize = [&](Value g, int64_t size) {
        if (alignCorners)
          return m.mul(m.mul(m.add(g, m.c(1)), m.c(0.5)), m.c(size - 1));
        return m.mul(m.sub(m.mul(m.add(g, m.c(1)), m.c(size)), m.c(1)), m.c(0.5));
      };
      // PyTorch's reflect_coordinates, then clip_coordinates.
      auto reflect = [&](Value v, double twiceLow, double twiceHigh, int64_t size) {
        if (twiceLow == twiceHigh)
          return m.c(0);
        double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
        Value in = b.create<math::AbsFOp>(l, m.sub(v, m.c(lo)));
        Value extra = b.create<arith::RemFOp>(l, in, m.c(span));
        Value flips = b.create<math::FloorOp>(l, b.create<arith::DivFOp>(l, in, m.c(span)));
        Value odd = b.create<arith::CmpFOp>(
            l, arith::CmpFPredicate::ONE,
            b.create<arith::RemFOp>(l, flips, m.c(2)), m.c(0));
        Value r = b.create<arith::SelectOp>(l, odd, m.add(m.sub(m.c(span), extra), m.c(lo)),
                                            m.add(extra, m.c(lo)));
        return clamp(r, 0, size - 1);
      };
      auto pad = [&](Value v, int64_t size) {
        if (padding == "border")
          return clamp(v, 0, size - 1);
        if (padding == "reflection")
          return alignCorners ? reflect(v, 0, 2 * (size - 1), size)
                              : reflect(v, -1, 2 * size - 1, size);
        return v;
      };
      // X[n, c, yi, xi] at integral float coordinates; 0 outside.
      auto read = [&](Value xf, Value yf) {
        auto inside = [&](Value v, int64_t size) {
          Value ge = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGE, v, m.c(0));
          Value le = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OLE, v, m.c(size - 1));
          return b.create<arith::AndIOp>(l, ge, le).getResult();
        };
        auto index = [&](Value v, int64_t size) {
          return b.create<arith::IndexCastOp>(
              l, b.getIndexType(),
              b.create<arith::FPToSIOp>(l, b.getI64Type(), clamp(v, 0, size - 1)));
        };
        Value ok = b.create<arith::AndIOp>(l, inside(xf, width), inside(yf, height));
        Value v = b.create<tensor::ExtractOp>(
            l, x, ValueRange{n, c, index(yf, height), index(xf, width)});
        return b.create<arith::SelectOp>(l, ok, v, m.c(0)).getResult();
      };
      Value ix = unnormalize(gridAt(0), width), iy = unnormalize(gridAt(1), height);
      Value result;
      if (mode == "nearest") {
        result = read(b.create<math::RoundEvenOp>(l, pad(ix, width)),
                      b.create<math::RoundEvenOp>(l, pad(iy, height)));
      } else if (mode == "bilinear") {
        ix = pad(ix, width);
        iy = pad(iy, height);
        Value x0 = b.create<math::FloorOp>(l, ix), y0 = b.create<math::FloorOp>(l, iy);
        Value x1 = m.add(x0, m.c(1)), y1 = m.add(y0, m.c(1));
        Value wx1 = m.sub(ix, x0), wx0 = m.sub(x1, ix), wy1 = m.sub(iy, y0), wy0 = m.sub(y1, iy);
        result = m.add(m.add(m.mul(read(x0, y0), m.mul(wx0, wy0)), m.mul(read(x1, y0), m.mul(wx1, wy0))),
                     m.add(m.mul(read(x0, y1), m.mul(wx0, wy1)), m.mul(read(x1, y1), m.mul(wx1, wy1))));
      } else {
        const double a = -0.75;
        auto near = [&](Value t) { // |t| <= 1
          return m.add(m.mul(m.mul(m.sub(m.mul(m.c(a + 2), t), m.c(a + 3)), t), t), m.c(1));
        };
        auto far = [&](Value t) { // 1 < |t| < 2
          return m.sub(m.mul(m.add(m.mul(m.sub(m.mul(m.c(a), t), m.c(5 * a)), t), m.c(8 * a)), t), m.c(4 * a));
        };
        auto coefficients = [&](Value t) {
          return SmallVector<Value>{far(m.add(t, m.c(1))), near(t), near(m.sub(m.c(1), t)),
                                    far(m.sub(m.c(2), t))};
        };
        Value fx = b.create<math::FloorOp>(l, ix), fy = b.create<math::FloorOp>(l, iy);
        SmallVector<Value> cx = coefficients(m.sub(ix, fx)), cy = coefficients(m.sub(iy, fy));
        result = m.c(0);
        for (int j = 0; j < 4; ++j) {
          Value yj = pad(m.add(fy, m.c(j - 1)), height);
          Value row = m.c(0);
          for (int i = 0; i < 4; ++i)
            row = m.add(row, m.mul(cx[i], read(pad(m.add(fx, m.c(i - 1)), width), yj)));
          result = m.add(result, m.mul(cy[j], row));
        }
      }
      return result;
    });
    rewriter.replaceOp(op, sampled);
    return success();
  }
};

/// RoiAlign, avg mode with a fixed sampling_ratio: a generic over the output
/// [rois, C, oh, ow] that averages sampling_ratio² bilinear samples of its bin
/// (half_pixel shifts the roi by half a pixel; output_half_pixel, RoiAlign-10's
/// behaviour, keeps rois at least one pixel). Samples beyond a pixel outside the
/// map count as 0, as the ONNX definition says.
struct RoiAlignLowering : OpConversionPattern<onnx::RoiAlignOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::RoiAlignOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Value x = adaptor.getX(), rois = adaptor.getRois(), batch = adaptor.getBatchIndices();
    auto src = cast<RankedTensorType>(x.getType());
    int64_t ratio = op.getSamplingRatio();
    StringRef coord = op.getCoordinateTransformationMode().value_or("output_half_pixel");
    if (!type || src.getRank() != 4 || !src.getElementType().isF32() ||
        !cast<RankedTensorType>(rois.getType()).getElementType().isF32() ||
        op.getMode() != "avg" || ratio <= 0 ||
        (coord != "half_pixel" && coord != "output_half_pixel"))
      return failure();
    int64_t height = src.getDimSize(2), width = src.getDimSize(3);
    int64_t outH = type.getDimSize(2), outW = type.getDimSize(3);
    double scale = op.getSpatialScale().convertToDouble();
    bool halfPixel = coord == "half_pixel";
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value sampled = generateEach(rewriter, loc, type, [&](const F32Math &m) {
      OpBuilder &b = m.b;
      Location l = m.l;
      auto toF = [&](Value i) {
        return b.create<arith::SIToFPOp>(
            l, f32, b.create<arith::IndexCastOp>(l, b.getI64Type(), i)).getResult();
      };
      auto cmp = [&](arith::CmpFPredicate p, Value a, Value c) {
        return b.create<arith::CmpFOp>(l, p, a, c).getResult();
      };
      Value r = m.index(0), c = m.index(1);
      auto roiAt = [&](int64_t k) {
        Value v = b.create<tensor::ExtractOp>(
            l, rois, ValueRange{r, b.create<arith::ConstantIndexOp>(l, k)});
        return m.sub(m.mul(v, m.c(scale)), m.c(halfPixel ? 0.5 : 0.0));
      };
      Value n = b.create<arith::IndexCastOp>(
          l, b.getIndexType(), b.create<tensor::ExtractOp>(l, batch, ValueRange{r}));
      Value x0 = roiAt(0), y0 = roiAt(1), x1 = roiAt(2), y1 = roiAt(3);
      Value roiW = m.sub(x1, x0), roiH = m.sub(y1, y0);
      if (!halfPixel) {
        roiW = m.max(roiW, m.c(1));
        roiH = m.max(roiH, m.c(1));
      }
      Value binW = b.create<arith::DivFOp>(l, roiW, m.c(outW));
      Value binH = b.create<arith::DivFOp>(l, roiH, m.c(outH));
      Value baseY = m.add(y0, m.mul(toF(m.index(2)), binH)), baseX = m.add(x0, m.mul(toF(m.index(3)), binW));
      // One bilinear sample at (y, x), 0 beyond a pixel outside the map.
      auto sample = [&](Value y, Value xx) {
        Value outside = b.create<arith::OrIOp>(
            l,
            b.create<arith::OrIOp>(l, cmp(arith::CmpFPredicate::OLT, y, m.c(-1)),
                                   cmp(arith::CmpFPredicate::OGT, y, m.c(height))),
            b.create<arith::OrIOp>(l, cmp(arith::CmpFPredicate::OLT, xx, m.c(-1)),
                                   cmp(arith::CmpFPredicate::OGT, xx, m.c(width))));
        auto axis = [&](Value v, int64_t size) {
          v = m.max(v, m.c(0));
          Value lo = b.create<math::FloorOp>(l, v);
          Value atEnd = cmp(arith::CmpFPredicate::OGE, lo, m.c(size - 1));
          lo = b.create<arith::SelectOp>(l, atEnd, m.c(size - 1), lo);
          Value hi = b.create<arith::SelectOp>(l, atEnd, lo, m.add(lo, m.c(1)));
          v = b.create<arith::SelectOp>(l, atEnd, lo, v);
          Value frac = m.sub(v, lo);
          auto index = [&](Value f) {
            return b.create<arith::IndexCastOp>(
                l, b.getIndexType(), b.create<arith::FPToSIOp>(l, b.getI64Type(), f))
                .getResult();
          };
          return std::make_tuple(index(lo), index(hi), frac);
        };
        auto [yl, yh, ly] = axis(y, height);
        auto [xl, xh, lx] = axis(xx, width);
        auto at = [&](Value yi, Value xi) {
          return b.create<tensor::ExtractOp>(l, x, ValueRange{n, c, yi, xi}).getResult();
        };
        Value hy = m.sub(m.c(1), ly), hx = m.sub(m.c(1), lx);
        Value v = m.add(m.add(m.mul(m.mul(hy, hx), at(yl, xl)), m.mul(m.mul(hy, lx), at(yl, xh))),
                      m.add(m.mul(m.mul(ly, hx), at(yh, xl)), m.mul(m.mul(ly, lx), at(yh, xh))));
        return b.create<arith::SelectOp>(l, outside, m.c(0), v).getResult();
      };
      Value sum = m.c(0);
      for (int64_t iy = 0; iy < ratio; ++iy) {
        Value y = m.add(baseY, m.mul(m.c((iy + 0.5) / ratio), binH));
        for (int64_t ix = 0; ix < ratio; ++ix)
          sum = m.add(sum, sample(y, m.add(baseX, m.mul(m.c((ix + 0.5) / ratio), binW))));
      }
      return m.mul(sum, m.c(1.0 / (ratio * ratio)));
    });
    rewriter.replaceOp(op, sampled);
    return success();
  }
};

} // namespace

void populateResampleLoweringPatterns(RewritePatternSet &patterns,
                                      TypeConverter &converter) {
  patterns.add<ResizeLowering, GridSampleLowering, RoiAlignLowering>(converter,
                                                                   patterns.getContext());
}

} // namespace kiln
