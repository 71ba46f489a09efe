//===- Elementwise.cpp - Lower elementwise onnx ops to linalg -------------===//
//
// This file implements the elementwise family: unary math and activations, binary
// arithmetic and comparisons with NumPy broadcasting, variadic Max/Min/Sum/Mean,
// Where, Clip, Cast and the bitwise ops. Every op becomes one linalg.generic whose
// body is built from a scalar recipe; signedness comes from the onnx op's own
// (unconverted) types.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;

namespace kiln {
namespace {

/// Context for a scalar recipe.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Operation *op;      // the onnx op (for attributes)
  ElemKind kind;      // of the first input
  Type elem;          // converted element type of the first input

  Value cst(double v) const { return scalarConstant(b, loc, elem, v); }
  double fattr(StringRef name, double dflt) const {
    if (auto a = op->getAttrOfType<FloatAttr>(name))
      return a.getValueAsDouble();
    return dflt;
  }
  int64_t iattr(StringRef name, int64_t dflt) const {
    if (auto a = op->getAttrOfType<IntegerAttr>(name))
      return a.getInt();
    return dflt;
  }
  bool isFloat() const { return kind == ElemKind::Float; }
  bool isUnsigned() const { return kind == ElemKind::Unsigned || kind == ElemKind::Bool; }
};

Value maxOf(const Scalar &s, Value a, Value b) {
  if (s.isFloat())
    return s.b.create<arith::MaximumFOp>(s.loc, a, b);
  if (s.isUnsigned())
    return s.b.create<arith::MaxUIOp>(s.loc, a, b);
  return s.b.create<arith::MaxSIOp>(s.loc, a, b);
}

Value minOf(const Scalar &s, Value a, Value b) {
  if (s.isFloat())
    return s.b.create<arith::MinimumFOp>(s.loc, a, b);
  if (s.isUnsigned())
    return s.b.create<arith::MinUIOp>(s.loc, a, b);
  return s.b.create<arith::MinSIOp>(s.loc, a, b);
}

Value compare(const Scalar &s, arith::CmpFPredicate f, arith::CmpIPredicate si,
              arith::CmpIPredicate ui, Value a, Value b) {
  if (s.isFloat())
    return s.b.create<arith::CmpFOp>(s.loc, f, a, b);
  return s.b.create<arith::CmpIOp>(s.loc, s.isUnsigned() ? ui : si, a, b);
}

/// Converts scalar `v` of ONNX element kind `from` to element type `to` (whose
/// kind is `toKind`), with ONNX Cast semantics.
Value castScalar(OpBuilder &b, Location loc, Value v, ElemKind from, Type to,
                 ElemKind toKind) {
  Type src = v.getType();
  if (src == to)
    return v;
  if (toKind == ElemKind::Bool) {
    if (from == ElemKind::Float)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v,
                                     scalarConstant(b, loc, src, 0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                   scalarConstant(b, loc, src, 0));
  }
  if (from == ElemKind::Float && toKind == ElemKind::Float) {
    unsigned sw = src.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
    if (sw < tw)
      return b.create<arith::ExtFOp>(loc, to, v);
    if (sw > tw)
      return b.create<arith::TruncFOp>(loc, to, v);
    // f16 <-> bf16: through f32.
    Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), v);
    return b.create<arith::TruncFOp>(loc, to, wide);
  }
  if (from == ElemKind::Float) {
    if (toKind == ElemKind::Unsigned)
      return b.create<arith::FPToUIOp>(loc, to, v);
    return b.create<arith::FPToSIOp>(loc, to, v);
  }
  bool srcUnsigned = from == ElemKind::Unsigned || from == ElemKind::Bool;
  if (toKind == ElemKind::Float) {
    if (srcUnsigned)
      return b.create<arith::UIToFPOp>(loc, to, v);
    return b.create<arith::SIToFPOp>(loc, to, v);
  }
  unsigned sw = src.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (sw == tw)
    return v;
  if (sw > tw)
    return b.create<arith::TruncIOp>(loc, to, v);
  if (srcUnsigned)
    return b.create<arith::ExtUIOp>(loc, to, v);
  return b.create<arith::ExtSIOp>(loc, to, v);
}

using Recipe = std::function<Value(const Scalar &, ValueRange)>;

/// The scalar recipe for `name`, or null when the op is not elementwise here.
Recipe recipeFor(StringRef name) {
  using P = arith::CmpFPredicate;
  using I = arith::CmpIPredicate;
  auto floatOnly = [](auto fn) -> Recipe {
    return [fn](const Scalar &s, ValueRange a) -> Value {
      return s.isFloat() ? fn(s, a) : Value();
    };
  };
  static const llvm::StringMap<Recipe> table = [&] {
    llvm::StringMap<Recipe> t;
    // Unary.
    t["Identity"] = [](const Scalar &s, ValueRange a) { return a[0]; };
    t["Relu"] = [](const Scalar &s, ValueRange a) { return maxOf(s, a[0], s.cst(0)); };
    t["Neg"] = [](const Scalar &s, ValueRange a) -> Value {
      if (s.isFloat())
        return s.b.create<arith::NegFOp>(s.loc, a[0]);
      return s.b.create<arith::SubIOp>(s.loc, s.cst(0), a[0]);
    };
    t["Abs"] = [](const Scalar &s, ValueRange a) -> Value {
      if (s.isFloat())
        return s.b.create<math::AbsFOp>(s.loc, a[0]);
      if (s.isUnsigned())
        return a[0];
      return s.b.create<math::AbsIOp>(s.loc, a[0]);
    };
    t["Sign"] = [](const Scalar &s, ValueRange a) -> Value {
      Value zero = s.cst(0), one = s.cst(1), minus = s.cst(-1);
      Value pos = compare(s, P::OGT, I::sgt, I::ugt, a[0], zero);
      Value neg = compare(s, P::OLT, I::slt, I::ult, a[0], zero);
      Value r = s.b.create<arith::SelectOp>(s.loc, neg, minus, zero);
      r = s.b.create<arith::SelectOp>(s.loc, pos, one, r);
      if (s.isFloat()) // NaN stays NaN
        r = s.b.create<arith::SelectOp>(
            s.loc, s.b.create<arith::CmpFOp>(s.loc, P::UNO, a[0], a[0]), a[0], r);
      return r;
    };
#define KILN_FLOAT_UNARY(NAME, OP)                                             \
  t[NAME] = floatOnly([](const Scalar &s, ValueRange a) -> Value {             \
    return s.b.create<OP>(s.loc, a[0]);                                        \
  });
    KILN_FLOAT_UNARY("Exp", math::ExpOp)
    KILN_FLOAT_UNARY("Log", math::LogOp)
    KILN_FLOAT_UNARY("Sqrt", math::SqrtOp)
    KILN_FLOAT_UNARY("Tanh", math::TanhOp)
    KILN_FLOAT_UNARY("Erf", math::ErfOp)
    KILN_FLOAT_UNARY("Sin", math::SinOp)
    KILN_FLOAT_UNARY("Cos", math::CosOp)
    KILN_FLOAT_UNARY("Tan", math::TanOp)
    KILN_FLOAT_UNARY("Atan", math::AtanOp)
    KILN_FLOAT_UNARY("Ceil", math::CeilOp)
    KILN_FLOAT_UNARY("Floor", math::FloorOp)
    KILN_FLOAT_UNARY("Round", math::RoundEvenOp)
#undef KILN_FLOAT_UNARY
    t["Asin"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      // asin(x) = atan2(x, sqrt(1 - x^2))
      Value x2 = s.b.create<arith::MulFOp>(s.loc, a[0], a[0]);
      Value r = s.b.create<math::SqrtOp>(s.loc, s.b.create<arith::SubFOp>(s.loc, s.cst(1), x2));
      return s.b.create<math::Atan2Op>(s.loc, a[0], r);
    });
    t["Acos"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value x2 = s.b.create<arith::MulFOp>(s.loc, a[0], a[0]);
      Value r = s.b.create<math::SqrtOp>(s.loc, s.b.create<arith::SubFOp>(s.loc, s.cst(1), x2));
      return s.b.create<math::Atan2Op>(s.loc, r, a[0]);
    });
    t["Sinh"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value e = s.b.create<math::ExpOp>(s.loc, a[0]);
      Value em = s.b.create<math::ExpOp>(s.loc, s.b.create<arith::NegFOp>(s.loc, a[0]));
      return s.b.create<arith::MulFOp>(s.loc, s.cst(0.5), s.b.create<arith::SubFOp>(s.loc, e, em));
    });
    t["Cosh"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value e = s.b.create<math::ExpOp>(s.loc, a[0]);
      Value em = s.b.create<math::ExpOp>(s.loc, s.b.create<arith::NegFOp>(s.loc, a[0]));
      return s.b.create<arith::MulFOp>(s.loc, s.cst(0.5), s.b.create<arith::AddFOp>(s.loc, e, em));
    });
    t["Asinh"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value x2 = s.b.create<arith::MulFOp>(s.loc, a[0], a[0]);
      Value r = s.b.create<math::SqrtOp>(s.loc, s.b.create<arith::AddFOp>(s.loc, x2, s.cst(1)));
      return s.b.create<math::LogOp>(s.loc, s.b.create<arith::AddFOp>(s.loc, a[0], r));
    });
    t["Acosh"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value x2 = s.b.create<arith::MulFOp>(s.loc, a[0], a[0]);
      Value r = s.b.create<math::SqrtOp>(s.loc, s.b.create<arith::SubFOp>(s.loc, x2, s.cst(1)));
      return s.b.create<math::LogOp>(s.loc, s.b.create<arith::AddFOp>(s.loc, a[0], r));
    });
    t["Atanh"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value num = s.b.create<arith::AddFOp>(s.loc, s.cst(1), a[0]);
      Value den = s.b.create<arith::SubFOp>(s.loc, s.cst(1), a[0]);
      Value l = s.b.create<math::LogOp>(s.loc, s.b.create<arith::DivFOp>(s.loc, num, den));
      return s.b.create<arith::MulFOp>(s.loc, s.cst(0.5), l);
    });
    t["Reciprocal"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<arith::DivFOp>(s.loc, s.cst(1), a[0]);
    });
    t["Sigmoid"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value e = s.b.create<math::ExpOp>(s.loc, s.b.create<arith::NegFOp>(s.loc, a[0]));
      return s.b.create<arith::DivFOp>(s.loc, s.cst(1), s.b.create<arith::AddFOp>(s.loc, s.cst(1), e));
    });
    t["Softplus"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<math::Log1pOp>(s.loc, s.b.create<math::ExpOp>(s.loc, a[0]));
    });
    t["Softsign"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value d = s.b.create<arith::AddFOp>(s.loc, s.cst(1), s.b.create<math::AbsFOp>(s.loc, a[0]));
      return s.b.create<arith::DivFOp>(s.loc, a[0], d);
    });
    t["LeakyRelu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value neg = s.b.create<arith::CmpFOp>(s.loc, P::OLT, a[0], s.cst(0));
      Value scaled = s.b.create<arith::MulFOp>(s.loc, a[0], s.cst(s.fattr("alpha", 0.01)));
      return s.b.create<arith::SelectOp>(s.loc, neg, scaled, a[0]);
    });
    t["ThresholdedRelu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value gt = s.b.create<arith::CmpFOp>(s.loc, P::OGT, a[0], s.cst(s.fattr("alpha", 1.0)));
      return s.b.create<arith::SelectOp>(s.loc, gt, a[0], s.cst(0));
    });
    t["Elu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value neg = s.b.create<arith::CmpFOp>(s.loc, P::OLT, a[0], s.cst(0));
      Value em1 = s.b.create<math::ExpM1Op>(s.loc, a[0]);
      Value scaled = s.b.create<arith::MulFOp>(s.loc, em1, s.cst(s.fattr("alpha", 1.0)));
      return s.b.create<arith::SelectOp>(s.loc, neg, scaled, a[0]);
    });
    t["Celu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      double alpha = s.fattr("alpha", 1.0);
      Value x = s.b.create<arith::DivFOp>(s.loc, a[0], s.cst(alpha));
      Value em1 = s.b.create<math::ExpM1Op>(s.loc, x);
      Value neg = minOf(s, s.cst(0), s.b.create<arith::MulFOp>(s.loc, em1, s.cst(alpha)));
      return s.b.create<arith::AddFOp>(s.loc, maxOf(s, s.cst(0), a[0]), neg);
    });
    t["Selu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      double alpha = s.fattr("alpha", 1.67326319217681884765625);
      double gamma = s.fattr("gamma", 1.05070102214813232421875);
      Value neg = s.b.create<arith::CmpFOp>(s.loc, P::OLE, a[0], s.cst(0));
      Value e = s.b.create<arith::SubFOp>(
          s.loc, s.b.create<arith::MulFOp>(s.loc, s.b.create<math::ExpOp>(s.loc, a[0]), s.cst(alpha)),
          s.cst(alpha));
      Value r = s.b.create<arith::SelectOp>(s.loc, neg, e, a[0]);
      return s.b.create<arith::MulFOp>(s.loc, r, s.cst(gamma));
    });
    t["HardSigmoid"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value y = s.b.create<arith::AddFOp>(
          s.loc, s.b.create<arith::MulFOp>(s.loc, a[0], s.cst(s.fattr("alpha", 0.2))),
          s.cst(s.fattr("beta", 0.5)));
      return minOf(s, s.cst(1), maxOf(s, s.cst(0), y));
    });
    t["HardSwish"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value y = s.b.create<arith::AddFOp>(
          s.loc, s.b.create<arith::MulFOp>(s.loc, a[0], s.cst(1.0 / 6)), s.cst(0.5));
      Value hs = minOf(s, s.cst(1), maxOf(s, s.cst(0), y));
      return s.b.create<arith::MulFOp>(s.loc, a[0], hs);
    });
    t["Mish"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value sp = s.b.create<math::Log1pOp>(s.loc, s.b.create<math::ExpOp>(s.loc, a[0]));
      return s.b.create<arith::MulFOp>(s.loc, a[0], s.b.create<math::TanhOp>(s.loc, sp));
    });
    t["Gelu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      auto approx = s.op->getAttrOfType<StringAttr>("approximate");
      Value x = a[0];
      if (approx && approx.getValue() == "tanh") {
        Value x3 = s.b.create<arith::MulFOp>(s.loc, x, s.b.create<arith::MulFOp>(s.loc, x, x));
        Value inner = s.b.create<arith::AddFOp>(
            s.loc, x, s.b.create<arith::MulFOp>(s.loc, x3, s.cst(0.044715)));
        inner = s.b.create<arith::MulFOp>(s.loc, inner, s.cst(std::sqrt(2.0 / M_PI)));
        Value t = s.b.create<arith::AddFOp>(s.loc, s.cst(1), s.b.create<math::TanhOp>(s.loc, inner));
        return s.b.create<arith::MulFOp>(s.loc, s.b.create<arith::MulFOp>(s.loc, x, s.cst(0.5)), t);
      }
      Value e = s.b.create<math::ErfOp>(s.loc, s.b.create<arith::MulFOp>(s.loc, x, s.cst(M_SQRT1_2)));
      Value t = s.b.create<arith::AddFOp>(s.loc, s.cst(1), e);
      return s.b.create<arith::MulFOp>(s.loc, s.b.create<arith::MulFOp>(s.loc, x, s.cst(0.5)), t);
    });
    t["IsNaN"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<arith::CmpFOp>(s.loc, P::UNO, a[0], a[0]);
    });
    t["IsInf"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value inf = s.cst(INFINITY), ninf = s.cst(-INFINITY);
      Value pos = s.b.create<arith::CmpFOp>(s.loc, P::OEQ, a[0], inf);
      Value neg = s.b.create<arith::CmpFOp>(s.loc, P::OEQ, a[0], ninf);
      Value f = s.b.create<arith::ConstantOp>(s.loc, s.b.getBoolAttr(false));
      if (!s.iattr("detect_positive", 1))
        pos = f;
      if (!s.iattr("detect_negative", 1))
        neg = f;
      return s.b.create<arith::OrIOp>(s.loc, pos, neg);
    });
    t["Shrink"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      double lambd = s.fattr("lambd", 0.5), bias = s.fattr("bias", 0.0);
      Value below = s.b.create<arith::CmpFOp>(s.loc, P::OLT, a[0], s.cst(-lambd));
      Value above = s.b.create<arith::CmpFOp>(s.loc, P::OGT, a[0], s.cst(lambd));
      Value plus = s.b.create<arith::AddFOp>(s.loc, a[0], s.cst(bias));
      Value minus = s.b.create<arith::SubFOp>(s.loc, a[0], s.cst(bias));
      Value r = s.b.create<arith::SelectOp>(s.loc, above, minus, s.cst(0));
      return s.b.create<arith::SelectOp>(s.loc, below, plus, r);
    });
    t["Not"] = [](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<arith::XOrIOp>(s.loc, a[0], s.b.create<arith::ConstantOp>(s.loc, s.b.getBoolAttr(true)));
    };
    t["BitwiseNot"] = [](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<arith::XOrIOp>(s.loc, a[0], s.cst(-1));
    };

    // Binary and variadic.
    auto fold = [](std::function<Value(const Scalar &, Value, Value)> f) -> Recipe {
      return [f](const Scalar &s, ValueRange a) {
        Value r = a[0];
        for (Value v : a.drop_front())
          r = f(s, r, v);
        return r;
      };
    };
    auto arithBinary = [&](auto fop, auto iop) {
      return fold([fop, iop](const Scalar &s, Value x, Value y) -> Value {
        if (s.isFloat())
          return fop(s, x, y);
        return iop(s, x, y);
      });
    };
    t["Add"] = t["Sum"] = arithBinary(
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::AddFOp>(s.loc, x, y).getResult(); },
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::AddIOp>(s.loc, x, y).getResult(); });
    t["Sub"] = arithBinary(
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::SubFOp>(s.loc, x, y).getResult(); },
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::SubIOp>(s.loc, x, y).getResult(); });
    t["Mul"] = arithBinary(
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::MulFOp>(s.loc, x, y).getResult(); },
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::MulIOp>(s.loc, x, y).getResult(); });
    t["Div"] = arithBinary(
        [](const Scalar &s, Value x, Value y) { return s.b.create<arith::DivFOp>(s.loc, x, y).getResult(); },
        [](const Scalar &s, Value x, Value y) -> Value {
          if (s.isUnsigned())
            return s.b.create<arith::DivUIOp>(s.loc, x, y);
          return s.b.create<arith::DivSIOp>(s.loc, x, y);
        });
    t["Max"] = fold([](const Scalar &s, Value x, Value y) { return maxOf(s, x, y); });
    t["Min"] = fold([](const Scalar &s, Value x, Value y) { return minOf(s, x, y); });
    t["Mean"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value r = a[0];
      for (Value v : a.drop_front())
        r = s.b.create<arith::AddFOp>(s.loc, r, v);
      return s.b.create<arith::DivFOp>(s.loc, r, s.cst(static_cast<double>(a.size())));
    });
    t["Pow"] = [](const Scalar &s, ValueRange a) -> Value {
      Value base = a[0], exp = a[1];
      if (s.isFloat()) {
        if (!isa<FloatType>(exp.getType()))
          exp = s.b.create<arith::SIToFPOp>(s.loc, base.getType(), exp);
        else if (exp.getType() != base.getType())
          exp = castScalar(s.b, s.loc, exp, ElemKind::Float, base.getType(), ElemKind::Float);
        return s.b.create<math::PowFOp>(s.loc, base, exp);
      }
      if (isa<FloatType>(exp.getType())) {
        Value fb = s.b.create<arith::SIToFPOp>(s.loc, exp.getType(), base);
        Value p = s.b.create<math::PowFOp>(s.loc, fb, exp);
        return s.b.create<arith::FPToSIOp>(s.loc, base.getType(), p);
      }
      if (exp.getType() != base.getType())
        exp = castScalar(s.b, s.loc, exp, ElemKind::Signed, base.getType(), ElemKind::Signed);
      return s.b.create<math::IPowIOp>(s.loc, base, exp);
    };
    t["PRelu"] = floatOnly([](const Scalar &s, ValueRange a) -> Value {
      Value neg = s.b.create<arith::CmpFOp>(s.loc, P::OLT, a[0], s.cst(0));
      return s.b.create<arith::SelectOp>(s.loc, neg, s.b.create<arith::MulFOp>(s.loc, a[0], a[1]), a[0]);
    });
    t["Mod"] = [](const Scalar &s, ValueRange a) -> Value {
      Value x = a[0], y = a[1];
      if (s.isFloat()) // fmod must be 1 for floats: C fmod, sign of the dividend
        return s.b.create<arith::RemFOp>(s.loc, x, y);
      if (s.isUnsigned())
        return s.b.create<arith::RemUIOp>(s.loc, x, y);
      Value r = s.b.create<arith::RemSIOp>(s.loc, x, y);
      if (s.iattr("fmod", 0))
        return r;
      // Python modulo: the result takes the divisor's sign.
      Value zero = s.cst(0);
      Value rNonZero = s.b.create<arith::CmpIOp>(s.loc, I::ne, r, zero);
      Value signsDiffer = s.b.create<arith::CmpIOp>(
          s.loc, I::slt, s.b.create<arith::XOrIOp>(s.loc, r, y), zero);
      Value fix = s.b.create<arith::AndIOp>(s.loc, rNonZero, signsDiffer);
      return s.b.create<arith::SelectOp>(s.loc, fix, s.b.create<arith::AddIOp>(s.loc, r, y), r);
    };
    t["BitShift"] = [](const Scalar &s, ValueRange a) -> Value {
      auto dir = s.op->getAttrOfType<StringAttr>("direction");
      if (dir && dir.getValue() == "LEFT")
        return s.b.create<arith::ShLIOp>(s.loc, a[0], a[1]);
      return s.b.create<arith::ShRUIOp>(s.loc, a[0], a[1]);
    };
    t["And"] = t["BitwiseAnd"] = fold([](const Scalar &s, Value x, Value y) {
      return s.b.create<arith::AndIOp>(s.loc, x, y).getResult();
    });
    t["Or"] = t["BitwiseOr"] = fold([](const Scalar &s, Value x, Value y) {
      return s.b.create<arith::OrIOp>(s.loc, x, y).getResult();
    });
    t["Xor"] = t["BitwiseXor"] = fold([](const Scalar &s, Value x, Value y) {
      return s.b.create<arith::XOrIOp>(s.loc, x, y).getResult();
    });
    t["Equal"] = [](const Scalar &s, ValueRange a) {
      return compare(s, P::OEQ, I::eq, I::eq, a[0], a[1]);
    };
    t["Less"] = [](const Scalar &s, ValueRange a) {
      return compare(s, P::OLT, I::slt, I::ult, a[0], a[1]);
    };
    t["LessOrEqual"] = [](const Scalar &s, ValueRange a) {
      return compare(s, P::OLE, I::sle, I::ule, a[0], a[1]);
    };
    t["Greater"] = [](const Scalar &s, ValueRange a) {
      return compare(s, P::OGT, I::sgt, I::ugt, a[0], a[1]);
    };
    t["GreaterOrEqual"] = [](const Scalar &s, ValueRange a) {
      return compare(s, P::OGE, I::sge, I::uge, a[0], a[1]);
    };
    t["Where"] = [](const Scalar &s, ValueRange a) -> Value {
      return s.b.create<arith::SelectOp>(s.loc, a[0], a[1], a[2]);
    };
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? Recipe() : it->second;
}

/// One pattern for every elementwise op: the recipe table decides.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getDialect()->getNamespace() != "onnx" || op->getNumResults() != 1)
      return failure();
    StringRef name = op->getName().stripDialect();
    Recipe recipe = recipeFor(name);
    if (!recipe)
      return failure();
    auto resultType = dyn_cast_or_null<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    if (!resultType || !resultType.hasStaticShape())
      return failure();
    SmallVector<Value> inputs;
    for (Value v : operands)
      if (isa<RankedTensorType>(v.getType()))
        inputs.push_back(v);
    if (inputs.empty())
      return failure();
    // Where's condition is bool; the data kind is that of its second input.
    Value kindSource = name == "Where" ? op->getOperand(1) : op->getOperand(0);
    Scalar s{rewriter, op->getLoc(), op, elemKind(kindSource.getType()),
             getElementTypeOrSelf(name == "Where" ? inputs[1] : inputs[0])};
    bool failedBody = false;
    Value result = buildElementwise(
        rewriter, op->getLoc(), resultType, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Scalar inner{b, loc, op, s.kind, s.elem};
          Value v = recipe(inner, args);
          if (!v) {
            failedBody = true;
            return args[0];
          }
          return v;
        });
    if (failedBody) {
      rewriter.eraseOp(result.getDefiningOp());
      return failure();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Clip with optional min/max inputs (Clip-11+) or attributes (ClipV6).
struct ClipLowering : ConversionPattern {
  ClipLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    if (name != "onnx.Clip" && name != "onnx.ClipV6")
      return failure();
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op->getResult(0).getType()));
    ElemKind kind = elemKind(op->getOperand(0).getType());
    Type elem = resultType.getElementType();
    SmallVector<Value> inputs{operands[0]};
    int minIndex = -1, maxIndex = -1;
    if (name == "onnx.Clip") {
      if (operands.size() > 1 && isa<RankedTensorType>(operands[1].getType())) {
        minIndex = inputs.size();
        inputs.push_back(operands[1]);
      }
      if (operands.size() > 2 && isa<RankedTensorType>(operands[2].getType())) {
        maxIndex = inputs.size();
        inputs.push_back(operands[2]);
      }
    }
    auto minAttr = op->getAttrOfType<FloatAttr>("min");
    auto maxAttr = op->getAttrOfType<FloatAttr>("max");
    Value result = buildElementwise(
        rewriter, op->getLoc(), resultType, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Scalar s{b, loc, op, kind, elem};
          Value x = args[0];
          if (minIndex >= 0)
            x = maxOf(s, x, args[minIndex]);
          else if (minAttr)
            x = maxOf(s, x, s.cst(minAttr.getValueAsDouble()));
          if (maxIndex >= 0)
            x = minOf(s, x, args[maxIndex]);
          else if (maxAttr)
            x = minOf(s, x, s.cst(maxAttr.getValueAsDouble()));
          return x;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Cast and CastLike.
struct CastLowering : ConversionPattern {
  CastLowering(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name = op->getName().getStringRef();
    if (name != "onnx.Cast" && name != "onnx.CastLike")
      return failure();
    Type onnxResult = op->getResult(0).getType();
    if (!isa<RankedTensorType>(onnxResult))
      return failure();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(onnxResult));
    ElemKind from = elemKind(op->getOperand(0).getType());
    ElemKind to = elemKind(onnxResult);
    Value result = buildElementwise(
        rewriter, op->getLoc(), resultType, ValueRange{operands[0]},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return castScalar(b, loc, args[0], from, resultType.getElementType(), to);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateElementwiseLoweringPatterns(RewritePatternSet &patterns,
                                         TypeConverter &converter) {
  patterns.add<ElementwiseLowering, ClipLowering, CastLowering>(
      converter, patterns.getContext());
}

} // namespace kiln
