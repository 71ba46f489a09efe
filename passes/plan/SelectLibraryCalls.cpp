//===- SelectLibraryCalls.cpp - Contractions a library runs ---------------===//
//
// This file implements kiln-select-library-calls (see Passes.td). It reads each
// launched kernel as the kernels phase and bufferization left it and recognizes one
// shape: a convolution (2-d, NCHW, grouped or not) or matrix product (batched,
// either operand transposed or shared across the batch) of f32, or of f16 read into
// an f32 accumulator, its zero-filled accumulator, the zero padding of its input,
// and at most one elementwise epilogue of bias (per output channel), residual (same
// shape as the output) and activation (Relu, or Clip as max-then-min). Every
// operand has the one element type; an f16 epilogue may round the accumulator to
// f16 where it starts or where it ends (the library computes it in f32 and rounds
// once). Everything else in the kernel (other loops, other element types, non-zero
// padding, epilogues that compute more) keeps the launch on the kernel. The launch
// is marked #kiln.library_call; the kernel stays as the fallback.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>
#include <optional>

namespace kiln {
#define GEN_PASS_DEF_SELECTLIBRARYCALLS
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The buffer `v` views through contiguous reshapes (collapse/expand_shape).
Value throughReshapes(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      v = e.getSrc();
    else
      break;
  }
  return v;
}

/// The kernel argument a buffer is, through contiguous reshapes; -1 otherwise.
int64_t argumentIndex(Value v) {
  auto arg = dyn_cast<BlockArgument>(throughReshapes(v));
  return arg ? static_cast<int64_t>(arg.getArgNumber()) : -1;
}

/// The allocation a buffer is, through contiguous reshapes; null otherwise.
memref::AllocOp allocationOf(Value v) {
  return throughReshapes(v).getDefiningOp<memref::AllocOp>();
}

/// True when `v` is a static, identity-layout buffer of `element`s.
bool isDense(Value v, Type element) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getElementType() == element && t.getLayout().isIdentity() &&
         t.hasStaticShape();
}

bool isF32Dense(Value v) { return isDense(v, Float32Type::get(v.getContext())); }

/// `v` = extf(x) or truncf(x) (OpTy) computed in `body`: x; otherwise null.
template <typename OpTy>
Value convertedFrom(Value v, Block *body) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->getBlock() == body ? op.getIn() : Value();
}

bool isZero(Value v) {
  return matchPattern(v, m_AnyZeroFloat());
}

std::optional<double> constantOf(Value v) {
  FloatAttr f;
  if (matchPattern(v, m_Constant(&f)))
    return f.getValueAsDouble();
  return std::nullopt;
}

/// True when `op` writes zero into `buffer`: a fill or a map yielding 0.
bool isZeroFillOf(Operation *op, Value buffer) {
  if (auto f = dyn_cast<linalg::FillOp>(op))
    return f.getOutputs()[0] == buffer && isZero(f.getInputs()[0]);
  if (auto m = dyn_cast<linalg::MapOp>(op)) {
    if (!m.getInputs().empty() || m.getInit() != buffer)
      return false;
    auto yield = cast<linalg::YieldOp>(m.getMapper().front().getTerminator());
    return yield.getNumOperands() == 1 && isZero(yield.getOperand(0));
  }
  return false;
}

/// True when the body is `out + a * b` (in either order), a and b each widened
/// (extf) or not; `roundsInput`: a is an f32 rounded to f16 first (extf(truncf(a)),
/// an f32 model input read by an f16 contraction).
bool isMultiplyAdd(linalg::GenericOp g, bool &roundsInput) {
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  roundsInput = false;
  if (yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value other = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if (add.getLhs() != acc && add.getRhs() != acc)
    return false;
  auto mul = other.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  size_t conversions = 0;
  Value a = body.getArgument(0), b = body.getArgument(1);
  auto operand = [&](Value x) {
    Value from = convertedFrom<arith::ExtFOp>(x, &body);
    if (!from)
      return x;
    ++conversions;
    if (Value rounded = convertedFrom<arith::TruncFOp>(from, &body); rounded == a) {
      ++conversions;
      roundsInput = true;
      return rounded;
    }
    return from;
  };
  Value lhs = operand(mul.getLhs()), rhs = operand(mul.getRhs());
  return body.getOperations().size() == 3 + conversions &&
         ((lhs == a && rhs == b) || (lhs == b && rhs == a));
}

/// The coefficient of dim `d` in the linear expression `e` (e at the unit vector).
int64_t coefficient(AffineExpr e, unsigned d, unsigned numDims) {
  SmallVector<AffineExpr> dims;
  for (unsigned i = 0; i < numDims; ++i)
    dims.push_back(getAffineConstantExpr(i == d ? 1 : 0, e.getContext()));
  AffineExpr v = simplifyAffineExpr(e.replaceDims(dims), numDims, 0);
  auto c = dyn_cast<AffineConstantExpr>(v);
  return c ? c.getValue() : -1;
}

bool sameExpr(AffineExpr a, AffineExpr b, unsigned numDims) {
  return simplifyAffineExpr(a, numDims, 0) == simplifyAffineExpr(b, numDims, 0);
}

/// What the library computes, before the epilogue.
struct Contraction {
  std::string kind;
  SmallVector<int64_t> shape;
  int64_t input = -1, weights = -1;
  int64_t channels = 0; // output channels (conv F, matmul N): the bias's length
};

/// A 2-d convolution as ConvPool.cpp writes it: loops (n, f, oh, ow, c, kh, kw) in
/// any order, x[n, c or (f floordiv F/G) * C/G + c, oh*s + kh*d, ow*s + kw*d],
/// w[f, c, kh, kw], out[n, f, oh, ow]. `x` may be a zero-padded copy of the input.
std::optional<Contraction> matchConv(linalg::GenericOp g, int64_t input,
                                     ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
                                     ArrayRef<int64_t> inputShape) {
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  unsigned numDims = g.getNumLoops();
  if (numDims != 7 || maps[1].getNumResults() != 4 || maps[2].getNumResults() != 4 ||
      maps[0].getNumResults() != 4 || !maps[1].isProjectedPermutation() ||
      !maps[2].isProjectedPermutation())
    return std::nullopt;
  auto dim = [](AffineMap m, unsigned i) {
    return cast<AffineDimExpr>(m.getResult(i)).getPosition();
  };
  unsigned n = dim(maps[2], 0), f = dim(maps[2], 1), oh = dim(maps[2], 2), ow = dim(maps[2], 3);
  unsigned fw = dim(maps[1], 0), c = dim(maps[1], 1), kh = dim(maps[1], 2), kw = dim(maps[1], 3);
  if (fw != f)
    return std::nullopt;
  auto wType = cast<MemRefType>(g.getDpsInputs()[1].getType());
  auto oType = cast<MemRefType>(g.getDpsInits()[0].getType());
  ArrayRef<int64_t> w = wType.getShape(), o = oType.getShape();
  if (o[0] != inputShape[0] || o[1] != w[0])
    return std::nullopt;
  int64_t groupChannels = w[1], outChannels = w[0];
  int64_t inChannels = inputShape[1];
  if (groupChannels < 1 || inChannels % groupChannels != 0)
    return std::nullopt;
  int64_t groups = inChannels / groupChannels;
  if (outChannels % groups != 0)
    return std::nullopt;
  MLIRContext *ctx = g.getContext();
  AffineExpr dn = getAffineDimExpr(n, ctx), df = getAffineDimExpr(f, ctx),
             dc = getAffineDimExpr(c, ctx);
  AffineExpr channel = groups == 1 ? dc : df.floorDiv(outChannels / groups) * groupChannels + dc;
  AffineMap x = maps[0];
  if (!sameExpr(x.getResult(0), dn, numDims) || !sameExpr(x.getResult(1), channel, numDims))
    return std::nullopt;
  int64_t stride[2], dilation[2];
  unsigned out[2] = {oh, ow}, tap[2] = {kh, kw};
  for (int i = 0; i < 2; ++i) {
    AffineExpr e = x.getResult(2 + i);
    stride[i] = coefficient(e, out[i], numDims);
    dilation[i] = coefficient(e, tap[i], numDims);
    if (stride[i] < 1 || dilation[i] < 1 ||
        !sameExpr(e, getAffineDimExpr(out[i], ctx) * stride[i] +
                         getAffineDimExpr(tap[i], ctx) * dilation[i],
                  numDims))
      return std::nullopt;
  }
  // The padded copy may be larger than the windows reach (ceil_mode-style room):
  // the library pads only what the output needs.
  Contraction cn;
  cn.kind = "conv";
  int64_t padBottom[2];
  for (int i = 0; i < 2; ++i) {
    // Windows may also stop short of the input's end (a stride that does not
    // divide it): then no padding, and the library's floor division agrees.
    int64_t extent = (w[2 + i] - 1) * dilation[i] + 1;
    int64_t reach = (o[2 + i] - 1) * stride[i] + extent;
    padBottom[i] = std::max<int64_t>(0, reach - padLow[i] - inputShape[2 + i]);
    if (padBottom[i] > padHigh[i] ||
        (inputShape[2 + i] + padLow[i] + padBottom[i] - extent) / stride[i] + 1 != o[2 + i])
      return std::nullopt;
  }
  cn.shape = {inputShape[0], inChannels, inputShape[2], inputShape[3], outChannels,
              w[2],          w[3],       o[2],          o[3],          groups,
              stride[0],     stride[1],  dilation[0],   dilation[1],   padLow[0],
              padLow[1],     padBottom[0], padBottom[1]};
  cn.input = input;
  cn.channels = outChannels;
  return cn;
}

/// A (batched) matrix product: out[b..., m, n] += a[b..., m, k or k, m] *
/// b[b..., k, n or n, k], each operand batched like the output or shared.
std::optional<Contraction> matchMatmul(linalg::GenericOp g, int64_t a, int64_t b) {
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  for (AffineMap m : maps)
    if (!m.isProjectedPermutation() || m.getNumResults() < 2)
      return std::nullopt;
  if (g.getNumReductionLoops() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  auto dims = [](AffineMap m) {
    SmallVector<unsigned> d;
    for (AffineExpr e : m.getResults())
      d.push_back(cast<AffineDimExpr>(e).getPosition());
    return d;
  };
  SmallVector<unsigned> out = dims(maps[2]), lhs = dims(maps[0]), rhs = dims(maps[1]);
  unsigned m = out[out.size() - 2], n = out.back();
  unsigned k = 0;
  for (unsigned i = 0; i < g.getNumLoops(); ++i)
    if (g.getIteratorTypesArray()[i] == utils::IteratorType::reduction)
      k = i;
  ArrayRef<unsigned> batch = ArrayRef<unsigned>(out).drop_back(2);
  // An operand's last two dims, and whether its leading dims are the batch.
  auto operand = [&](ArrayRef<unsigned> d, unsigned row, int64_t &transposed,
                     int64_t &batched) {
    unsigned x = d[d.size() - 2], y = d.back();
    if (x == row && y == k)
      transposed = 0;
    else if (x == k && y == row)
      transposed = 1;
    else
      return false;
    ArrayRef<unsigned> lead = d.drop_back(2);
    if (lead.empty())
      batched = 0;
    else if (lead == batch)
      batched = 1;
    else
      return false;
    return true;
  };
  int64_t transA, transB, batchedA, batchedB;
  // The first operand holds m (A), the second n (B).
  if (!operand(lhs, m, transA, batchedA) || !operand(rhs, n, transB, batchedB))
    return std::nullopt;
  // B's rows are k: "transposed" for B means stored [n, k].
  transB = 1 - transB;
  if (!batch.empty() && !batchedA && !batchedB)
    return std::nullopt;
  int64_t batchSize = 1;
  for (unsigned d : batch)
    batchSize *= ranges[d];
  Contraction cn;
  cn.kind = "matmul";
  cn.shape = {batchSize, ranges[m], ranges[n], ranges[k], transA, transB, batchedA, batchedB};
  cn.input = a;
  cn.weights = b;
  cn.channels = ranges[n];
  return cn;
}

/// The epilogue out = act(acc + bias + residual), read from one elementwise generic.
struct Epilogue {
  int64_t bias = -1, residual = -1, output = -1;
  std::string activation = "none";
  double alpha = 0, beta = 0, scale = 1.0;
};

/// True when `v` is the constant `expected`, as closely as its type holds it (an
/// f16 GELU's 1/sqrt 2 is 0.70703).
bool isConstant(Value v, double expected) {
  FloatAttr f;
  if (!matchPattern(v, m_Constant(&f)))
    return false;
  llvm::APFloat e(expected);
  bool inexact;
  e.convert(f.getValue().getSemantics(), llvm::APFloat::rmNearestTiesToEven, &inexact);
  double want = e.convertToDouble();
  return std::abs(f.getValueAsDouble() - want) <= 1e-6 * std::abs(want);
}

/// The other operand of `v` = op(other, c) or op(c, other) with the constant c,
/// where op (OpTy) is computed in `body`.
template <typename OpTy>
std::optional<Value> withConstant(Value v, double c, Block *body) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || op->getBlock() != body)
    return std::nullopt;
  if (isConstant(op.getRhs(), c))
    return op.getLhs();
  if (isConstant(op.getLhs(), c))
    return op.getRhs();
  return std::nullopt;
}

/// The operands of `v` = a op b computed in `body`.
template <typename OpTy>
std::optional<std::pair<Value, Value>> operandsOf(Value v, Block *body) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op || op->getBlock() != body)
    return std::nullopt;
  return std::make_pair(op.getLhs(), op.getRhs());
}

/// GELU as the lowerings write it, x * 0.5 * (1 + f(x)) in either order: the x,
/// the activation ("gelu_erf": f = erf(x / sqrt 2), 5 ops; "gelu_tanh": f =
/// tanh(sqrt(2 / pi) * (x + 0.044715 x^3)), 9 ops) and its op count.
struct Gelu {
  Value x;
  std::string activation;
  size_t ops;
};
std::optional<Gelu> matchGelu(Value top, Block *body) {
  auto outer = operandsOf<arith::MulFOp>(top, body);
  if (!outer)
    return std::nullopt;
  for (auto [half, onePlus] : {*outer, std::make_pair(outer->second, outer->first)}) {
    std::optional<Value> x = withConstant<arith::MulFOp>(half, 0.5, body);
    std::optional<Value> f = withConstant<arith::AddFOp>(onePlus, 1.0, body);
    if (!x || !f || !f->getDefiningOp() || f->getDefiningOp()->getBlock() != body)
      continue;
    if (auto erf = f->getDefiningOp<math::ErfOp>()) {
      std::optional<Value> arg = withConstant<arith::MulFOp>(erf.getOperand(), 0.70710678118654752, body);
      if (arg && *arg == *x)
        return Gelu{*x, "gelu_erf", 5};
    }
    if (auto tanh = f->getDefiningOp<math::TanhOp>()) {
      std::optional<Value> inner =
          withConstant<arith::MulFOp>(tanh.getOperand(), 0.79788456080286536, body);
      auto sum = inner ? operandsOf<arith::AddFOp>(*inner, body) : std::nullopt;
      if (!sum || (sum->first != *x && sum->second != *x))
        continue;
      Value scaledCube = sum->first == *x ? sum->second : sum->first;
      std::optional<Value> cube = withConstant<arith::MulFOp>(scaledCube, 0.044715, body);
      auto cubeOps = cube ? operandsOf<arith::MulFOp>(*cube, body) : std::nullopt;
      if (!cubeOps || (cubeOps->first != *x && cubeOps->second != *x))
        continue;
      Value square = cubeOps->first == *x ? cubeOps->second : cubeOps->first;
      auto squareOps = operandsOf<arith::MulFOp>(square, body);
      if (squareOps && squareOps->first == *x && squareOps->second == *x)
        return Gelu{*x, "gelu_tanh", 9};
    }
  }
  return std::nullopt;
}

/// True when `map` reads one element per channel: every result 0 but one, the
/// loop `channelDim`.
bool isChannelBroadcast(AffineMap map, int64_t channelDim) {
  int found = 0;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (static_cast<int64_t>(d.getPosition()) != channelDim)
        return false;
      ++found;
    } else if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0)
        return false;
    } else {
      return false;
    }
  }
  return found == 1;
}

std::optional<Epilogue> matchEpilogue(linalg::GenericOp g, Value acc, const Contraction &cn,
                                      Type element, int64_t outputElements) {
  if (g.getNumReductionLoops() != 0 || g.getNumDpsInits() != 1)
    return std::nullopt;
  Epilogue ep;
  Value out = g.getDpsInits()[0];
  ep.output = argumentIndex(out);
  // An f16 call may write an f32 output (a model output), its result widened.
  bool widensOutput = element.isF16() && isF32Dense(out);
  if (ep.output < 0 || !(isDense(out, element) || widensOutput) ||
      cast<MemRefType>(out.getType()).getNumElements() != outputElements)
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps.back().isIdentity())
    return std::nullopt;
  Block &body = g.getRegion().front();
  Value v;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (allocationOf(in->get()) == allocationOf(acc) && maps[in->getOperandNumber()].isIdentity())
      v = body.getArgument(in->getOperandNumber());
  }
  if (!v)
    return std::nullopt;
  // The loop that is the output's channel: conv writes [N, F, OH, OW]; a matmul's
  // epilogue may run over a reshaped [.., N] whose last loop is the channel.
  int64_t channelDim = cn.kind == "conv" ? 1 : g.getNumLoops() - 1;
  if (cn.kind == "conv" && g.getNumLoops() != 4)
    return std::nullopt;
  if (g.getStaticLoopRanges()[channelDim] != cn.channels)
    return std::nullopt;
  // The yielded value: min/max with constants (the activation) around a tree of
  // additions whose leaves are the accumulator, at most one per-channel bias, at
  // most one residual and zeros.
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return std::nullopt;
  Value top = yield.getOperand(0);
  // f16: the f32 result rounded where the epilogue ends (before or after the
  // activation), or the accumulator where it starts; and f16 operands widened.
  size_t conversions = 0;
  if (widensOutput) {
    top = convertedFrom<arith::ExtFOp>(top, &body);
    if (!top)
      return std::nullopt;
    ++conversions;
  }
  bool rounded = false;
  auto roundedTop = [&] {
    if (Value from = convertedFrom<arith::TruncFOp>(top, &body); from && !rounded) {
      top = from;
      rounded = true;
      ++conversions;
    }
  };
  roundedTop();
  std::optional<double> lo, hi;
  for (int i = 0; i < 2; ++i) {
    Operation *op = top.getDefiningOp();
    if (!op || op->getBlock() != &body || !isa<arith::MaximumFOp, arith::MinimumFOp>(op))
      break;
    std::optional<double> bound = constantOf(op->getOperand(1));
    Value rest = op->getOperand(0);
    if (!bound) {
      bound = constantOf(op->getOperand(0));
      rest = op->getOperand(1);
    }
    std::optional<double> &slot = isa<arith::MaximumFOp>(op) ? lo : hi;
    if (!bound || slot)
      return std::nullopt;
    slot = bound;
    top = rest;
  }
  roundedTop();
  // GELU (erf or tanh form).
  std::optional<Gelu> gelu;
  size_t geluOps = 0;
  if (!lo && !hi && (gelu = matchGelu(top, &body))) {
    geluOps = gelu->ops;
    top = gelu->x;
  }
  // A constant scale of the accumulator itself (attention's 1/sqrt(d)), f16: of the
  // accumulator rounded (`roundsAccumulator`: the multiply reads truncf(acc)).
  auto scaled = [&](Value x, bool *roundsAccumulator = nullptr) -> std::optional<double> {
    auto mul = x.getDefiningOp<arith::MulFOp>();
    if (!mul || mul->getBlock() != &body)
      return std::nullopt;
    for (auto [acc, c] : {std::make_pair(mul.getLhs(), mul.getRhs()),
                          std::make_pair(mul.getRhs(), mul.getLhs())}) {
      bool throughTruncf = roundsAccumulator && !rounded &&
                           convertedFrom<arith::TruncFOp>(acc, &body) == v;
      if (acc != v && !throughTruncf)
        continue;
      if (roundsAccumulator)
        *roundsAccumulator = throughTruncf;
      return constantOf(c);
    }
    return std::nullopt;
  };
  bool sawAccumulator = false;
  SmallVector<Value> pending = {top};
  size_t additions = 0;
  while (!pending.empty()) {
    Value x = pending.pop_back_val();
    if (Value from = convertedFrom<arith::TruncFOp>(x, &body); from && !rounded &&
                                                               (from == v || scaled(from))) {
      x = from;
      rounded = true;
      ++conversions;
    } else if (Value from = convertedFrom<arith::ExtFOp>(x, &body);
               from && isa<BlockArgument>(from)) {
      x = from;
      ++conversions;
    }
    bool roundsAccumulator = false;
    std::optional<double> scale = scaled(x, &roundsAccumulator);
    if (x == v || scale) {
      if (sawAccumulator)
        return std::nullopt;
      sawAccumulator = true;
      if (scale) {
        ep.scale = *scale;
        ++additions; // the multiply, counted with the ops read
      }
      if (roundsAccumulator) {
        rounded = true;
        ++conversions;
      }
      continue;
    }
    if (isZero(x))
      continue;
    if (auto add = x.getDefiningOp<arith::AddFOp>(); add && add->getBlock() == &body) {
      ++additions;
      pending.push_back(add.getLhs());
      pending.push_back(add.getRhs());
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(x);
    if (!arg || arg.getOwner() != &body ||
        arg.getArgNumber() >= static_cast<unsigned>(g.getNumDpsInputs()))
      return std::nullopt;
    Value buffer = g.getDpsInputs()[arg.getArgNumber()];
    int64_t index = argumentIndex(buffer);
    AffineMap map = maps[arg.getArgNumber()];
    if (index < 0 || !isDense(buffer, element))
      return std::nullopt;
    int64_t elements = cast<MemRefType>(buffer.getType()).getNumElements();
    if (map.isIdentity() && ep.residual < 0 && elements == outputElements)
      ep.residual = index;
    else if (isChannelBroadcast(map, channelDim) && ep.bias < 0 && elements == cn.channels)
      ep.bias = index;
    else
      return std::nullopt;
  }
  // Every op of the body is one of those read (nothing else is computed).
  size_t ops = std::distance(body.begin(), body.end()) - 1;
  if (!sawAccumulator ||
      ops != additions + conversions + geluOps + (lo ? 1 : 0) + (hi ? 1 : 0))
    return std::nullopt;
  // The library scales before it adds the bias.
  if (ep.scale != 1.0 && ep.bias >= 0)
    return std::nullopt;
  if (gelu)
    ep.activation = gelu->activation;
  if (lo && hi && *lo <= *hi) {
    ep.activation = "clip";
    ep.alpha = *lo;
    ep.beta = *hi;
  } else if (lo && !hi && *lo == 0) {
    ep.activation = "relu";
  } else if (lo || hi) {
    return std::nullopt;
  }
  return ep;
}

/// The library call `kernel` is, if it is one.
LibraryCallAttr matchKernel(func::FuncOp kernel) {
  if (kernel.isExternal() || !kernel.getBody().hasOneBlock())
    return nullptr;
  Block &body = kernel.front();
  linalg::GenericOp contraction;
  SmallVector<linalg::GenericOp> epilogues;
  SmallVector<Operation *> others;
  for (Operation &op : body) {
    if (isa<memref::AllocOp, memref::DeallocOp, arith::ConstantOp, memref::CollapseShapeOp,
            memref::ExpandShapeOp, func::ReturnOp>(op))
      continue;
    if (auto g = dyn_cast<linalg::GenericOp>(op)) {
      if (g.getNumReductionLoops() > 0) {
        if (contraction)
          return nullptr;
        contraction = g;
      } else {
        epilogues.push_back(g);
      }
      continue;
    }
    if (isa<linalg::FillOp, linalg::MapOp, memref::SubViewOp, linalg::CopyOp>(op)) {
      others.push_back(&op);
      continue;
    }
    return nullptr;
  }
  bool roundsInput = false;
  if (!contraction || contraction.getNumDpsInputs() != 2 || contraction.getNumDpsInits() != 1 ||
      epilogues.size() > 1 || !isMultiplyAdd(contraction, roundsInput))
    return nullptr;
  Value x = contraction.getDpsInputs()[0], w = contraction.getDpsInputs()[1];
  Value acc = contraction.getDpsInits()[0];
  // f32, or f16 accumulated in f32: every operand of the weights' type, but an f16
  // call's input may be f32 rounded to f16 as it is read (and its output f32).
  Type element = cast<MemRefType>(w.getType()).getElementType();
  Type inputElement = roundsInput ? Float32Type::get(w.getContext()) : element;
  if (!(element.isF32() || element.isF16()) || (roundsInput && !element.isF16()) ||
      !isDense(x, inputElement) || !isDense(w, element) || !isF32Dense(acc))
    return nullptr;
  // Every other op: the accumulator's zero fill, or the input's zero padding.
  size_t used = 0;
  bool filled = false;
  for (Operation *op : others)
    if (isZeroFillOf(op, acc)) {
      filled = true;
      ++used;
    }
  if (!filled)
    return nullptr;
  int64_t input = argumentIndex(x);
  SmallVector<int64_t> padLow(2, 0), padHigh(2, 0), inputShape;
  if (input >= 0) {
    inputShape = llvm::to_vector(cast<MemRefType>(x.getType()).getShape());
  } else {
    // x = alloc; zero fill; subview [0, 0, t, l] with x's input's sizes; copy.
    memref::AllocOp padded = x.getDefiningOp<memref::AllocOp>();
    if (!padded || cast<MemRefType>(x.getType()).getRank() != 4)
      return nullptr;
    bool zeroed = false;
    linalg::CopyOp copy;
    memref::SubViewOp window;
    for (Operation *op : others) {
      if (isZeroFillOf(op, x)) {
        zeroed = true;
        ++used;
      } else if (auto s = dyn_cast<memref::SubViewOp>(op); s && s.getSource() == x) {
        if (window)
          return nullptr;
        window = s;
        ++used;
      } else if (auto c = dyn_cast<linalg::CopyOp>(op)) {
        copy = c;
        ++used;
      }
    }
    if (!zeroed || !window || !copy || copy.getOutputs()[0] != window.getResult() ||
        !window.hasUnitStride())
      return nullptr;
    input = argumentIndex(copy.getInputs()[0]);
    if (input < 0 || !isDense(copy.getInputs()[0], inputElement))
      return nullptr;
    inputShape = llvm::to_vector(cast<MemRefType>(copy.getInputs()[0].getType()).getShape());
    SmallVector<int64_t> offsets = llvm::to_vector(window.getStaticOffsets());
    ArrayRef<int64_t> full = cast<MemRefType>(x.getType()).getShape();
    if (inputShape.size() != 4 || offsets[0] != 0 || offsets[1] != 0 ||
        ShapedType::isDynamic(offsets[2]) || ShapedType::isDynamic(offsets[3]) ||
        full[0] != inputShape[0] || full[1] != inputShape[1])
      return nullptr;
    for (int i = 0; i < 2; ++i) {
      padLow[i] = offsets[2 + i];
      padHigh[i] = full[2 + i] - inputShape[2 + i] - padLow[i];
      if (padHigh[i] < 0)
        return nullptr;
    }
  }
  if (used != others.size())
    return nullptr;
  std::optional<Contraction> cn;
  int64_t weights = argumentIndex(w);
  if (weights < 0)
    return nullptr;
  if (inputShape.size() == 4 && contraction.getNumLoops() == 7)
    cn = matchConv(contraction, input, padLow, padHigh, inputShape);
  else if (input >= 0 && !x.getDefiningOp<memref::AllocOp>())
    cn = matchMatmul(contraction, input, weights);
  if (!cn)
    return nullptr;
  cn->weights = weights;
  int64_t outputElements = cast<MemRefType>(acc.getType()).getNumElements();
  Epilogue ep;
  if (epilogues.empty()) {
    ep.output = argumentIndex(acc);
    if (ep.output < 0 || !element.isF32())
      return nullptr;
  } else {
    if (!allocationOf(acc))
      return nullptr;
    std::optional<Epilogue> e =
        matchEpilogue(epilogues.front(), acc, *cn, element, outputElements);
    if (!e)
      return nullptr;
    ep = *e;
  }
  MLIRContext *ctx = kernel.getContext();
  Builder b(ctx);
  int64_t operands[] = {cn->input, cn->weights, ep.bias, ep.residual, ep.output};
  return LibraryCallAttr::get(ctx, b.getStringAttr(cn->kind), cn->shape, operands,
                              b.getStringAttr(ep.activation), b.getF64FloatAttr(ep.alpha),
                              b.getF64FloatAttr(ep.beta), b.getF64FloatAttr(ep.scale));
}

/// The activations an epilogue may name (LibraryCallAttr's activation).
constexpr llvm::StringLiteral kActivations[] = {"none", "relu", "clip", "gelu_erf",
                                                "gelu_tanh"};

/// What a library can run, from the pass's options (the target's engine
/// description).
struct LibraryEngine {
  bool uniformElementType = false;
  std::vector<std::string> matmulActivations, convActivations; // empty: all
  bool symmetricPadding = false;
};

/// True when `library` can run `call` of `kernel` (what a library fuses, and the
/// element types it mixes, differ).
bool libraryRuns(const LibraryEngine &library, LibraryCallAttr call, func::FuncOp kernel) {
  if (library.uniformElementType) {
    Type element;
    for (int64_t operand : call.getOperands()) {
      if (operand < 0)
        continue;
      Type t = cast<MemRefType>(kernel.getArgumentTypes()[operand]).getElementType();
      if (element && t != element)
        return false;
      element = t;
    }
  }
  bool matmul = call.getKind().getValue() == "matmul";
  const std::vector<std::string> &acts =
      matmul ? library.matmulActivations : library.convActivations;
  if (!acts.empty() && !llvm::is_contained(acts, call.getActivation().getValue().str()))
    return false;
  if (matmul || !library.symmetricPadding)
    return true;
  ArrayRef<int64_t> s = call.getShape();
  for (int i = 0; i < 2; ++i) {
    int64_t in = s[2 + i], taps = s[5 + i], out = s[7 + i], stride = s[10 + i],
            dilation = s[12 + i], before = s[14 + i], after = s[16 + i];
    int64_t extent = (taps - 1) * dilation + 1;
    if (after > before || (in + 2 * before - extent) / stride + 1 != out)
      return false;
  }
  return true;
}

struct SelectLibraryCallsPass
    : kiln::impl::SelectLibraryCallsBase<SelectLibraryCallsPass> {
  using SelectLibraryCallsBase::SelectLibraryCallsBase;

  void runOnOperation() override {
    LibraryEngine library;
    library.uniformElementType = uniformElementType;
    library.matmulActivations.assign(matmulActivations.begin(), matmulActivations.end());
    library.convActivations.assign(convActivations.begin(), convActivations.end());
    library.symmetricPadding = symmetricPadding;
    for (const std::vector<std::string> *list :
         {&library.matmulActivations, &library.convActivations})
      for (const std::string &act : *list)
        if (!llvm::is_contained(kActivations, act)) {
          getOperation().emitError()
              << "kiln-select-library-calls: unknown activation '" << act
              << "' (none, relu, clip, gelu_erf, gelu_tanh)";
          return signalPassFailure();
        }
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, LibraryCallAttr> matched;
    module.walk([&](LaunchOp launch) {
      if (launch.getGpuStages())
        return;
      StringAttr name = launch.getKernelAttr().getAttr();
      auto it = matched.find(name);
      if (it == matched.end()) {
        auto kernel = module.lookupSymbol<func::FuncOp>(name);
        LibraryCallAttr call = kernel ? matchKernel(kernel) : nullptr;
        if (call && !libraryRuns(library, call, kernel))
          call = nullptr;
        it = matched.insert({name, call}).first;
      }
      if (it->second)
        launch.setLibraryAttr(it->second);
    });
    // Without fallbacks, a matched kernel (every launch of it is a library call)
    // keeps only its signature: no code, and the run writer sees there is none.
    if (fallbackKernels)
      return;
    for (auto [name, call] : matched) {
      auto kernel = module.lookupSymbol<func::FuncOp>(name);
      if (call && kernel) {
        kernel.eraseBody();
        kernel.setPrivate();
      }
    }
  }
};

} // namespace
