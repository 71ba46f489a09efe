//===- MatMul.cpp - Lower MatMul and Gemm to linalg -----------------------===//
//
// This file implements the contraction family. MatMul is a linalg.generic with
// NumPy batch broadcasting (1-D operands are promoted and the extra dimension
// dropped again); Gemm folds transA/transB into the indexing maps and applies
// alpha, beta and the broadcast C in one elementwise epilogue. Einsum is one
// linalg.generic whose indexing maps come from the equation (ellipsis broadcast,
// repeated letters as diagonals, implicit outputs), summing a product of operands.
// Det is Gaussian elimination with partial pivoting, unrolled per matrix.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include <map>

using namespace mlir;

namespace kiln {
namespace {

/// C[batch..., m, n] = sum_k A * B. The iteration order is (batch..., m, k, n):
/// with n innermost, the loops that codegen emits stream through rows of B and C
/// (unit stride, vectorizable) instead of striding down B's columns.
/// `lhsMap` and `rhsMap` are over those dims: m = rank - 2, k = rank - 1,
/// n = rank, where rank is the result's.
Value contraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType resultType, AffineMap lhsMap, AffineMap rhsMap) {
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < rank - 1; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  outExprs.push_back(getAffineDimExpr(rank, ctx)); // n
  AffineMap outMap = AffineMap::get(rank + 1, 0, outExprs, ctx);
  SmallVector<utils::IteratorType> iterators(rank - 1, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction); // k
  iterators.push_back(utils::IteratorType::parallel);  // n
  RankedTensorType accType = accumulatorTensorType(resultType);
  Type acc = accType.getElementType();
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{accType}, ValueRange{lhs, rhs},
      ValueRange{filledTensor(b, loc, accType, 0)},
      ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
      [acc](OpBuilder &nb, Location nl, ValueRange args) {
        nb.create<linalg::YieldOp>(nl, multiplyAdd(nb, nl, castFloat(nb, nl, args[0], acc),
                                                   castFloat(nb, nl, args[1], acc), args[2]));
      });
  return fromAccumulator(b, loc, generic.getResult(0), resultType);
}

struct MatMulLowering : OpConversionPattern<onnx::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), bv = adaptor.getB();
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(bv.getType());
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    if (!aType.hasStaticShape() || !bType.hasStaticShape())
      return failure();
    // Promote 1-D operands: A [K] -> [1, K]; B [K] -> [K, 1].
    bool aVector = aType.getRank() == 1, bVector = bType.getRank() == 1;
    if (aVector) {
      aType = RankedTensorType::get({1, aType.getDimSize(0)}, aType.getElementType());
      a = reshapeTo(rewriter, loc, a, aType);
    }
    if (bVector) {
      bType = RankedTensorType::get({bType.getDimSize(0), 1}, bType.getElementType());
      bv = reshapeTo(rewriter, loc, bv, bType);
    }
    int64_t batchRank = std::max(aType.getRank(), bType.getRank()) - 2;
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < batchRank; ++i) {
      int64_t ai = i - (batchRank - (aType.getRank() - 2));
      int64_t bi = i - (batchRank - (bType.getRank() - 2));
      int64_t ad = ai >= 0 ? aType.getDimSize(ai) : 1;
      int64_t bd = bi >= 0 ? bType.getDimSize(bi) : 1;
      shape.push_back(std::max(ad, bd));
    }
    int64_t m = aType.getDimSize(aType.getRank() - 2);
    int64_t n = bType.getDimSize(bType.getRank() - 1);
    shape.push_back(m);
    shape.push_back(n);
    auto fullType = RankedTensorType::get(shape, resultType.getElementType());
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = fullType.getRank(); // dims: batch..., m, n, k
    auto operandMap = [&](RankedTensorType t, bool isLhs) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batchRank - (t.getRank() - 2);
      for (int64_t d = 0; d < t.getRank() - 2; ++d)
        exprs.push_back(t.getDimSize(d) == 1 && shape[d + offset] != 1
                            ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(d + offset, ctx));
      AffineExpr mE = getAffineDimExpr(rank - 2, ctx), kE = getAffineDimExpr(rank - 1, ctx),
                 nE = getAffineDimExpr(rank, ctx);
      if (isLhs) {
        exprs.push_back(mE);
        exprs.push_back(kE);
      } else {
        exprs.push_back(kE);
        exprs.push_back(nE);
      }
      return AffineMap::get(rank + 1, 0, exprs, ctx);
    };
    Value result = contraction(rewriter, loc, a, bv, fullType,
                               operandMap(aType, true), operandMap(bType, false));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result, resultType));
    return success();
  }
};

struct GemmLowering : OpConversionPattern<onnx::GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getY().getType()));
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr m = getAffineDimExpr(0, ctx), k = getAffineDimExpr(1, ctx),
               n = getAffineDimExpr(2, ctx);
    bool transA = op.getTransA() != 0, transB = op.getTransB() != 0;
    AffineMap aMap = AffineMap::get(3, 0, transA ? ArrayRef<AffineExpr>{k, m}
                                                 : ArrayRef<AffineExpr>{m, k}, ctx);
    AffineMap bMap = AffineMap::get(3, 0, transB ? ArrayRef<AffineExpr>{n, k}
                                                 : ArrayRef<AffineExpr>{k, n}, ctx);
    Value product = contraction(rewriter, loc, adaptor.getA(), adaptor.getB(),
                                resultType, aMap, bMap);
    double alpha = op.getAlpha().convertToDouble();
    double beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    bool hasC = isa<RankedTensorType>(c.getType()) && beta != 0;
    if (alpha == 1 && !hasC) {
      rewriter.replaceOp(op, product);
      return success();
    }
    SmallVector<Value> inputs{product};
    if (hasC)
      inputs.push_back(c);
    Type elem = resultType.getElementType();
    bool isFloat = isa<FloatType>(elem);
    Value result = buildElementwise(
        rewriter, loc, resultType, inputs,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value y = args[0];
          auto mul = [&](Value x, double f) -> Value {
            if (f == 1)
              return x;
            Value cst = scalarConstant(b, l, elem, f);
            return isFloat ? b.create<arith::MulFOp>(l, x, cst).getResult()
                           : b.create<arith::MulIOp>(l, x, cst).getResult();
          };
          y = mul(y, alpha);
          if (hasC) {
            Value cc = mul(args[1], beta);
            y = isFloat ? b.create<arith::AddFOp>(l, y, cc).getResult()
                        : b.create<arith::AddIOp>(l, y, cc).getResult();
          }
          return y;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// An Einsum equation: one term per operand and the output's, each a list of
/// letters where -1 stands for the ellipsis.
struct EinsumEquation {
  SmallVector<SmallVector<int>> inputs;
  SmallVector<int> output;
};

/// Parses `text` ("bij,bjk->bik", "...ii->...i", "i,i"); false when malformed.
bool parseEinsum(StringRef text, size_t numInputs, EinsumEquation &eq) {
  std::string clean;
  for (char c : text)
    if (c != ' ')
      clean += c;
  StringRef spec = clean;
  auto [lhs, rhs] = spec.split("->");
  bool explicitOutput = spec.contains("->");
  auto parseTerm = [](StringRef term, SmallVector<int> &out) {
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.substr(i).starts_with("...")) {
        if (llvm::is_contained(out, -1))
          return false;
        out.push_back(-1);
        i += 2;
        continue;
      }
      if (!llvm::isAlpha(term[i]))
        return false;
      out.push_back(term[i]);
    }
    return true;
  };
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != numInputs)
    return false;
  for (StringRef t : terms)
    if (!parseTerm(t, eq.inputs.emplace_back()))
      return false;
  if (explicitOutput)
    return parseTerm(rhs, eq.output);
  // Implicit output: the ellipsis, then the letters that appear once, sorted.
  std::map<int, int> counts;
  bool ellipsis = false;
  for (const auto &term : eq.inputs)
    for (int l : term)
      (l == -1 ? (void)(ellipsis = true) : (void)++counts[l]);
  if (ellipsis)
    eq.output.push_back(-1);
  for (auto [l, n] : counts)
    if (n == 1)
      eq.output.push_back(l);
  return true;
}

/// Einsum: out[output letters] = sum over the other letters of the product of the
/// operands at their letters. Ellipsis dims broadcast like NumPy's (right-aligned,
/// size 1 repeats); a letter repeated in one operand reads its diagonal.
struct EinsumLowering : OpConversionPattern<onnx::EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    ValueRange inputs = adaptor.getInputs();
    EinsumEquation eq;
    if (!type || !type.hasStaticShape() || inputs.empty() ||
        !parseEinsum(op.getEquation(), inputs.size(), eq))
      return rewriter.notifyMatchFailure(op, "malformed equation");
    // Loop dims: the ellipsis dims, the output letters, then the summed letters.
    int64_t ellipsisRank = 0;
    for (auto [term, v] : llvm::zip(eq.inputs, inputs)) {
      auto t = cast<RankedTensorType>(v.getType());
      if (!t.hasStaticShape())
        return failure();
      int64_t letters = llvm::count_if(term, [](int l) { return l != -1; });
      bool hasEllipsis = llvm::is_contained(term, -1);
      if ((!hasEllipsis && letters != t.getRank()) || letters > t.getRank())
        return rewriter.notifyMatchFailure(op, "equation does not match the ranks");
      if (hasEllipsis)
        ellipsisRank = std::max(ellipsisRank, t.getRank() - letters);
    }
    SmallVector<int> order; // letters in loop order after the ellipsis dims
    for (int l : eq.output)
      if (l != -1)
        order.push_back(l);
    int64_t numParallel = ellipsisRank + static_cast<int64_t>(order.size());
    for (const auto &term : eq.inputs)
      for (int l : term)
        if (l != -1 && !llvm::is_contained(order, l))
          order.push_back(l);
    int64_t numLoops = ellipsisRank + static_cast<int64_t>(order.size());
    SmallVector<int64_t> loopSize(numLoops, 1);
    MLIRContext *ctx = rewriter.getContext();
    auto letterDim = [&](int l) {
      return ellipsisRank + (llvm::find(order, l) - order.begin());
    };
    SmallVector<AffineMap> maps;
    SmallVector<SmallVector<std::pair<int64_t, int64_t>>> uses; // (loop, size) per input
    for (auto [term, v] : llvm::zip(eq.inputs, inputs)) {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t ellipsisDims = t.getRank() - llvm::count_if(term, [](int l) { return l != -1; });
      SmallVector<std::pair<int64_t, int64_t>> &use = uses.emplace_back();
      int64_t d = 0;
      for (int l : term) {
        if (l != -1) {
          use.push_back({letterDim(l), t.getDimSize(d++)});
          continue;
        }
        for (int64_t e = 0; e < ellipsisDims; ++e)
          use.push_back({ellipsisRank - ellipsisDims + e, t.getDimSize(d++)});
      }
      for (auto [loop, size] : use)
        if (size != 1)
          loopSize[loop] = size;
    }
    for (const auto &use : uses) {
      SmallVector<AffineExpr> exprs;
      for (auto [loop, size] : use) {
        // A letter's dims agree exactly; an ellipsis dim may also be 1 (broadcast).
        if (size != loopSize[loop] && !(loop < ellipsisRank && size == 1))
          return rewriter.notifyMatchFailure(op, "operand dimensions disagree");
        bool broadcast = loop < ellipsisRank && size == 1 && loopSize[loop] != 1;
        exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                  : getAffineDimExpr(loop, ctx));
      }
      maps.push_back(AffineMap::get(numLoops, 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    SmallVector<int64_t> outShape;
    for (int l : eq.output) {
      if (l != -1) {
        outExprs.push_back(getAffineDimExpr(letterDim(l), ctx));
        outShape.push_back(loopSize[letterDim(l)]);
        continue;
      }
      for (int64_t e = 0; e < ellipsisRank; ++e) {
        outExprs.push_back(getAffineDimExpr(e, ctx));
        outShape.push_back(loopSize[e]);
      }
    }
    if (llvm::ArrayRef<int64_t>(outShape) != type.getShape())
      return rewriter.notifyMatchFailure(op, "inferred output shape differs");
    maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators(numParallel, utils::IteratorType::parallel);
    iterators.append(numLoops - numParallel, utils::IteratorType::reduction);
    Location loc = op.getLoc();
    RankedTensorType accType = accumulatorTensorType(type);
    Type accElem = accType.getElementType();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{accType}, inputs, ValueRange{filledTensor(rewriter, loc, accType, 0)},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value product = castFloat(b, l, args[0], accElem);
          bool isFloat = isa<FloatType>(product.getType());
          for (Value x : args.drop_front().drop_back()) {
            x = castFloat(b, l, x, accElem);
            product = isFloat ? b.create<arith::MulFOp>(l, product, x).getResult()
                              : b.create<arith::MulIOp>(l, product, x).getResult();
          }
          Value acc = args.back();
          b.create<linalg::YieldOp>(
              l, isFloat ? b.create<arith::AddFOp>(l, acc, product).getResult()
                         : b.create<arith::AddIOp>(l, acc, product).getResult());
        });
    rewriter.replaceOp(op, fromAccumulator(rewriter, loc, generic.getResult(0), type));
    return success();
  }
};

/// Det of [..., n, n] (n <= kMaxDetSize): a generic over the batch dims whose body
/// loads the matrix and eliminates it in registers. Partial pivoting: before each
/// column the row with the largest magnitude below takes the pivot's place (each
/// exchange flips the sign); a zero pivot column makes the determinant 0.
struct DetLowering : OpConversionPattern<onnx::DetOp> {
  static constexpr int64_t kMaxDetSize = 16;
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(onnx::DetOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = resultTypeOf(getTypeConverter(), op);
    Value x = adaptor.getX();
    auto src = cast<RankedTensorType>(x.getType());
    int64_t rank = src.getRank();
    if (!type || rank < 2 || !isa<FloatType>(src.getElementType()))
      return failure();
    int64_t n = src.getDimSize(rank - 1);
    if (n != src.getDimSize(rank - 2) || n > kMaxDetSize || n < 1)
      return failure();
    Location loc = op.getLoc();
    int64_t batchRank = rank - 2;
    MLIRContext *ctx = rewriter.getContext();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(rewriter, loc, type)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(batchRank, ctx)},
        SmallVector<utils::IteratorType>(batchRank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Type f = src.getElementType();
          auto fc = [&](double v) { return scalarConstant(b, l, f, v); };
          SmallVector<Value> prefix;
          for (int64_t d = 0; d < batchRank; ++d)
            prefix.push_back(b.create<linalg::IndexOp>(l, d));
          std::vector<std::vector<Value>> a(n, std::vector<Value>(n));
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
              SmallVector<Value> at(prefix);
              at.push_back(b.create<arith::ConstantIndexOp>(l, i));
              at.push_back(b.create<arith::ConstantIndexOp>(l, j));
              a[i][j] = b.create<tensor::ExtractOp>(l, x, at);
            }
          Value det = fc(1);
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t i = k + 1; i < n; ++i) {
              Value larger = b.create<arith::CmpFOp>(
                  l, arith::CmpFPredicate::OGT, b.create<math::AbsFOp>(l, a[i][k]),
                  b.create<math::AbsFOp>(l, a[k][k]));
              for (int64_t j = k; j < n; ++j) {
                Value top = a[k][j];
                a[k][j] = b.create<arith::SelectOp>(l, larger, a[i][j], top);
                a[i][j] = b.create<arith::SelectOp>(l, larger, top, a[i][j]);
              }
              det = b.create<arith::SelectOp>(l, larger, b.create<arith::NegFOp>(l, det), det);
            }
            Value pivot = a[k][k];
            det = b.create<arith::MulFOp>(l, det, pivot);
            Value zero = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OEQ, pivot, fc(0));
            Value safe = b.create<arith::SelectOp>(l, zero, fc(1), pivot);
            for (int64_t i = k + 1; i < n; ++i) {
              Value factor = b.create<arith::DivFOp>(l, a[i][k], safe);
              for (int64_t j = k + 1; j < n; ++j)
                a[i][j] = b.create<arith::SubFOp>(l, a[i][j],
                                                  b.create<arith::MulFOp>(l, factor, a[k][j]));
            }
          }
          b.create<linalg::YieldOp>(l, det);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateMatMulLoweringPatterns(RewritePatternSet &patterns,
                                    TypeConverter &converter) {
  patterns.add<MatMulLowering, GemmLowering, EinsumLowering, DetLowering>(converter,
                                                                         patterns.getContext());
}

} // namespace kiln
