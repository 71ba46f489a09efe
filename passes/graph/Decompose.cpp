//===- Decompose.cpp - Composite onnx ops into simpler ones ---------------===//
//
// This file implements kiln-decompose (see Passes.td): operators that are defined
// as compositions of others are rewritten into them, so that one lowering per
// primitive serves them all and fusion sees their insides:
//
//   QuantizeLinear    saturate(round(x / scale) + zero_point)
//   DequantizeLinear  (int32(x) - zero_point) * scale
//   DynamicQuantizeLinear  scale and zero point from min/max, then QuantizeLinear
//   MatMulInteger     int32 MatMul of (A - a_zp) and (B - b_zp)
//   ConvInteger       Conv of (x - x_zp) and (w - w_zp) in f64 (exact: every
//                     product and sum of 8-bit differences is an integer below 2^53)
//   QLinearMatMul     MatMulInteger, times a_scale * b_scale / y_scale, QuantizeLinear
//   QLinearConv       ConvInteger + bias, times x_scale * w_scale / y_scale, QuantizeLinear
//   Upsample, Resize-10  Resize with asymmetric coordinates (and floor for nearest)
//   BatchNormalization (training mode)  batch mean and variance, running statistics
//   TfIdfVectorizer   n-gram matches by Equal/And against the pool, counts mapped
//                     to the outputs by a constant matrix
//   Compress, NonZero where the model declares the output size: the selected
//                     positions by an exclusive CumSum and a match table, then
//                     Gather or unravel
//   Unique where the model declares the count: an equality table of the slices,
//                     first occurrences taken in order or by lexicographic rank
//   NonMaxSuppression where the model declares how many boxes it selects: the
//                     boxes in score order (TopK), the greedy selection as a Scan
//                     over them (a time loop), then the selected boxes in
//                     (batch, class, score) order
//   Reduce* with run-time axes, no keepdims, shapes that fit several axis sets:
//                     one reduction per fitting set, Where picks by the axes input
//
// Each new op is typed by its shape function, so the pass runs after
// kiln-infer-shapes and leaves static types.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace kiln {
#define GEN_PASS_DEF_DECOMPOSE
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

int64_t axisOf(Operation *op, int64_t rank) {
  auto attr = op->getAttrOfType<IntegerAttr>("axis");
  int64_t axis = attr ? attr.getInt() : 1;
  return axis < 0 ? axis + rank : axis;
}

/// Elements the ops of an If's branches compute (constants excluded).
int64_t branchElements(onnx::IfOp ifOp) {
  int64_t total = 0;
  ifOp->walk([&](Operation *op) {
    if (op == ifOp.getOperation() || isa<onnx::ConstantOp, onnx::NoValueOp>(op))
      return;
    for (Type t : op->getResultTypes()) {
      auto type = dyn_cast<RankedTensorType>(t);
      total += type && type.hasStaticShape() ? type.getNumElements() : int64_t{1} << 40;
    }
  });
  return total;
}

/// An If decided at run time whose branches compute next to nothing (a
/// short-circuit `and` of a loop's condition: constants, a comparison): both
/// branches run and Where selects, cheaper than branching on the host (on cuda a
/// synchronization). Empty where the branches differ in type.
FailureOr<SmallVector<Value>> selectBranches(onnx::IfOp ifOp, OnnxBuilder &ob) {
  Operation *thenYield = ifOp.getThenBranch().front().getTerminator();
  Operation *elseYield = ifOp.getElseBranch().front().getTerminator();
  for (auto [a, b] : llvm::zip(thenYield->getOperands(), elseYield->getOperands())) {
    auto type = dyn_cast<RankedTensorType>(a.getType());
    if (a.getType() != b.getType() || !type || !type.hasStaticShape())
      return SmallVector<Value>{};
  }
  for (Region *branch : {&ifOp.getThenBranch(), &ifOp.getElseBranch()})
    for (Operation &inner : llvm::make_early_inc_range(branch->front().without_terminator()))
      inner.moveBefore(ifOp);
  Value cond = ob.reshape(ifOp.getCond(), {});
  SmallVector<Value> results;
  for (auto [a, b] : llvm::zip(thenYield->getOperands(), elseYield->getOperands()))
    results.push_back(ob.create("Where", {cond, a, b}, elementOf(a)));
  return results;
}

/// An If whose condition is known only at run time: each branch becomes a function
/// of the values the branches capture (constants are cloned in, not passed), and
/// kiln.if picks one on the host (kiln-build-plan guards each branch's launches).
/// Every result needs one static type, the same from both branches.
FailureOr<SmallVector<Value>> outlineBranches(onnx::IfOp ifOp, OnnxBuilder &ob) {
  Region *branches[] = {&ifOp.getThenBranch(), &ifOp.getElseBranch()};
  SmallVector<Type> resultTypes;
  for (unsigned k = 0; k < ifOp.getNumResults(); ++k) {
    Type thenType = branches[0]->front().getTerminator()->getOperand(k).getType();
    Type elseType = branches[1]->front().getTerminator()->getOperand(k).getType();
    auto type = dyn_cast<RankedTensorType>(thenType);
    if (thenType != elseType || !type || !type.hasStaticShape()) {
      ifOp.emitError() << "If decided at run time: result " << k << " is " << thenType
                       << " from then_branch and " << elseType
                       << " from else_branch; Kiln needs one static type for both "
                          "(pin the inputs, or freeze the condition with --input-value)";
      return failure();
    }
    resultTypes.push_back(thenType);
  }
  // What the branches read from outside, in first-use order: passed as arguments,
  // but for constants (and absent optionals), which each function makes itself.
  llvm::SetVector<Value> captured;
  for (Region *branch : branches)
    getUsedValuesDefinedAbove(*branch, captured);
  auto cloned = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
           isMemoryEffectFree(def);
  };
  SmallVector<Value> inputs;
  for (Value v : captured)
    if (!cloned(v))
      inputs.push_back(v);

  auto module = ifOp->getParentOfType<ModuleOp>();
  auto parent = ifOp->getParentOfType<func::FuncOp>();
  SymbolTable symbols(module);
  // <function>_if<k>_then and _else, k the first free number (a nested If is
  // outlined first, from inside its branch).
  auto name = [&](int k, StringRef suffix) {
    return (parent.getName() + "_if" + std::to_string(k) + "_" + suffix).str();
  };
  int k = 0;
  while (symbols.lookup(name(k, "then")) || symbols.lookup(name(k, "else")))
    ++k;
  FunctionType type = ob.b.getFunctionType(ValueRange(inputs).getTypes(), resultTypes);
  SmallVector<Attribute> names;
  const char *suffixes[] = {"then", "else"};
  for (auto [branch, suffix] : llvm::zip(branches, suffixes)) {
    OpBuilder mb(module.getBodyRegion());
    mb.setInsertionPointAfter(parent);
    auto fn = mb.create<func::FuncOp>(ifOp.getLoc(), name(k, suffix), type);
    fn.setPrivate();
    symbols.insert(fn);
    fn.getBody().takeBody(*branch);
    Block &body = fn.getBody().front();
    OpBuilder fb = OpBuilder::atBlockBegin(&body);
    for (Value v : captured) {
      Value inside = cloned(v) ? Value(fb.clone(*v.getDefiningOp())->getResult(0))
                               : Value(body.addArgument(v.getType(), v.getLoc()));
      v.replaceUsesWithIf(inside, [&](OpOperand &use) {
        return fn->isProperAncestor(use.getOwner()) && use.get() == v;
      });
    }
    Operation *yield = body.getTerminator();
    fb.setInsertionPoint(yield);
    fb.create<func::ReturnOp>(yield->getLoc(), yield->getOperands());
    yield->erase();
    names.push_back(FlatSymbolRefAttr::get(fn.getSymNameAttr()));
  }
  // Branch regions must keep a block for the If to stay valid until it is erased.
  for (Region *branch : branches) {
    Block *block = new Block();
    branch->push_back(block);
    OpBuilder::atBlockEnd(block).create<onnx::YieldOp>(ifOp.getLoc(), ValueRange{});
  }
  Value cond = ob.reshape(ifOp.getCond(), {});
  auto kilnIf = ob.b.create<kiln::IfOp>(ifOp.getLoc(), resultTypes, cond, inputs,
                                        cast<FlatSymbolRefAttr>(names[0]),
                                        cast<FlatSymbolRefAttr>(names[1]));
  return SmallVector<Value>(kilnIf.getResults());
}

/// A reduction without keepdims whose axes are a run-time input and whose static
/// shapes fit more than one set of axes ([3,2,2] -> [3,2] reduces axis 1 or 2):
/// each fitting reduction with constant axes, and Where picks the one whose axes
/// the input holds. Empty when the shapes decide (the lowering reads them off).
FailureOr<SmallVector<Value>> selectRuntimeAxes(Operation *op, OnnxBuilder &ob) {
  if (op->getNumOperands() < 2 || absent(op->getOperand(1)) ||
      kiln::constantValueOf(op->getOperand(1)))
    return SmallVector<Value>{};
  auto keep = op->getAttrOfType<IntegerAttr>("keepdims");
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto axesType = cast<RankedTensorType>(op->getOperand(1).getType());
  if (!keep || keep.getInt() || !result || !result.hasStaticShape() ||
      axesType.getRank() != 1 || src.getRank() > 8)
    return SmallVector<Value>{};
  int64_t rank = src.getRank(), count = axesType.getDimSize(0);
  SmallVector<SmallVector<int64_t>> candidates;
  for (int64_t mask = 1; mask < (int64_t(1) << rank); ++mask) {
    SmallVector<int64_t> kept, axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (mask & (int64_t(1) << d))
        axes.push_back(d);
      else
        kept.push_back(src.getDimSize(d));
    }
    if (static_cast<int64_t>(axes.size()) == count && ArrayRef<int64_t>(kept) == result.getShape())
      candidates.push_back(axes);
  }
  if (candidates.size() < 2)
    return SmallVector<Value>{};
  Type i64 = ob.b.getI64Type();
  Value axes = ob.castTo(op->getOperand(1), i64);
  Value normalized = ob.create(
      "Where", {ob.binary("Less", axes, ob.scalar(i64, 0)),
                ob.binary("Add", axes, ob.scalar(i64, static_cast<double>(rank))), axes},
      i64);
  Value chosen;
  for (const SmallVector<int64_t> &candidate : llvm::reverse(candidates)) {
    Value constantAxes = ob.ints(candidate);
    Operation *reduce = ob.b.clone(*op);
    reduce->setOperand(1, constantAxes);
    reduce->getResult(0).setType(result);
    if (!chosen) { // The last candidate: taken when no other matches.
      chosen = reduce->getResult(0);
      continue;
    }
    // Every run-time axis is one of the candidate's (axes are distinct in ONNX).
    Value hits;
    for (int64_t d : candidate) {
      Value hit = ob.castTo(ob.binary("Equal", normalized, ob.scalar(i64, d)), i64);
      hits = hits ? ob.binary("Add", hits, hit) : hit;
    }
    Value all = ob.create("ReduceMin", {hits, ob.none()}, i64,
                          {ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0))});
    chosen = ob.create("Where", {ob.binary("Equal", all, ob.scalar(i64, 1)),
                                 reduce->getResult(0), chosen},
                       result.getElementType());
  }
  return SmallVector<Value>{chosen};
}

/// The positions of the first `count` true entries of the 1-D bool `mask`, as i64
/// [count]: entry i is the j-th selected when mask[i] and i has j true entries
/// before it (an exclusive CumSum); a [count, L] match table summed against iota.
Value selectedPositions(OnnxBuilder &ob, Value mask, int64_t count) {
  Type i64 = ob.b.getI64Type();
  int64_t length = cast<RankedTensorType>(mask.getType()).getDimSize(0);
  Value ones = ob.castTo(mask, i64);
  Value before = ob.create("CumSum", {ones, ob.scalar(i64, 0)}, i64,
                           {ob.b.getNamedAttr("exclusive", ob.b.getI64IntegerAttr(1)),
                            ob.b.getNamedAttr("reverse", ob.b.getI64IntegerAttr(0))});
  SmallVector<int64_t> rows, columns;
  for (int64_t j = 0; j < count; ++j)
    rows.push_back(j);
  for (int64_t i = 0; i < length; ++i)
    columns.push_back(i);
  Value nth = ob.binary("Equal", ob.reshape(before, {1, length}), ob.reshape(ob.ints(rows), {count, 1}));
  Value match = ob.castTo(ob.binary("And", nth, ob.reshape(mask, {1, length})), i64);
  return ob.create("ReduceSum", {ob.binary("Mul", match, ob.reshape(ob.ints(columns), {1, length})),
                                 ob.ints({1})},
                   i64, {ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0))});
}

/// Compress and NonZero, whose output sizes depend on the data, where the model
/// declares them (a graph output's type): the selected positions are computed for
/// the declared count, then gathered (Compress) or unravelled (NonZero). Kiln
/// trusts the declared count as it trusts every declared type. Larger than 2^24
/// table entries is refused.
FailureOr<SmallVector<Value>> decomposeSelection(Operation *op, OnnxBuilder &ob) {
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result || !result.hasStaticShape())
    return SmallVector<Value>{};
  std::string name = kiln::onnx::onnxOperatorName(op);
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  Type i64 = ob.b.getI64Type();
  auto tooLarge = [&](int64_t count, int64_t length) {
    if (count * length <= (int64_t{1} << 24))
      return false;
    op->emitError() << name << " selecting " << count << " of " << length
                    << " entries is too large for Kiln's selection table";
    return true;
  };
  if (name == "NonZero") {
    int64_t rank = type.getRank(), total = type.getNumElements();
    int64_t count = result.getDimSize(1);
    if (rank == 0 || tooLarge(count, total)) {
      if (rank == 0)
        op->emitError() << "NonZero of a scalar is not supported";
      return failure();
    }
    Value flat = ob.reshape(x, {total});
    Value mask = type.getElementType().isInteger(1)
                     ? flat
                     : ob.create("Not", {ob.binary("Equal", flat, ob.scalar(type.getElementType(), 0))},
                                 ob.b.getI1Type());
    Value positions = selectedPositions(ob, mask, count);
    SmallVector<Value> coordinates;
    int64_t stride = total;
    for (int64_t d = 0; d < rank; ++d) {
      stride /= type.getDimSize(d);
      Value c = ob.binary("Div", positions, ob.scalar(i64, static_cast<double>(stride)));
      c = ob.binary("Mod", c, ob.scalar(i64, static_cast<double>(type.getDimSize(d))));
      coordinates.push_back(ob.reshape(c, {1, count}));
    }
    return SmallVector<Value>{ob.concat(coordinates, 0)};
  }
  // Compress: along `axis`, or over the flattened input.
  Value condition = op->getOperand(1);
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  if (!axisAttr) {
    x = ob.reshape(x, {type.getNumElements()});
    type = cast<RankedTensorType>(x.getType());
  }
  int64_t rank = type.getRank();
  int64_t axis = axisAttr ? axisAttr.getInt() : 0;
  if (axis < 0)
    axis += rank;
  int64_t length = cast<RankedTensorType>(condition.getType()).getDimSize(0);
  int64_t count = result.getDimSize(axis);
  if (length > type.getDimSize(axis)) {
    op->emitError() << "Compress's condition is longer than the axis it selects on";
    return failure();
  }
  if (tooLarge(count, length))
    return failure();
  Value positions = selectedPositions(ob, condition, count);
  return SmallVector<Value>{ob.create("Gather", {x, positions}, type.getElementType(),
                                      {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(axis))})};
}

/// NonMaxSuppression where the model declares how many boxes are selected
/// (selected_indices [M, 3]; Kiln trusts it as it trusts every declared type).
/// Per batch and class the boxes are put in score order (TopK: equal scores keep
/// the lower index first, as NonMaxSuppression ranks them); greedy selection then
/// walks that order one box at a time, a Scan (one kernel, the tensor phase's time
/// loop) carrying the kept boxes and their count: box q is kept when its score
/// passes the threshold, fewer than max_output_boxes_per_class are kept and no kept
/// box overlaps it by more than the IoU threshold (boxes of no area suppress
/// nothing). Each step compares box q with every box, O(N) work and memory, so the
/// whole selection is O(N^2) per class without an N x N table. The kept boxes, in
/// score order within each (batch, class), are the output rows.
FailureOr<SmallVector<Value>> decomposeNonMaxSuppression(Operation *op, OnnxBuilder &ob) {
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto boxesType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto scoresType = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  if (!result || !result.hasStaticShape() || !boxesType || !boxesType.hasStaticShape() ||
      !scoresType || !scoresType.hasStaticShape())
    return SmallVector<Value>{};
  if (boxesType.getRank() != 3 || boxesType.getDimSize(2) != 4 || scoresType.getRank() != 3 ||
      scoresType.getDimSize(0) != boxesType.getDimSize(0) ||
      scoresType.getDimSize(2) != boxesType.getDimSize(1) || result.getRank() != 2 ||
      result.getDimSize(1) != 3) {
    op->emitError() << "NonMaxSuppression takes boxes [B, N, 4] and scores [B, C, N] into "
                       "[M, 3]; got "
                    << boxesType << ", " << scoresType << " into " << result;
    return failure();
  }
  int64_t nb = boxesType.getDimSize(0), n = boxesType.getDimSize(1);
  int64_t nc = scoresType.getDimSize(1), m = result.getDimSize(0);
  Type i64 = ob.b.getI64Type(), i1 = ob.b.getI1Type(), f32 = ob.b.getF32Type();
  if (m > nb * nc * n) {
    op->emitError() << "NonMaxSuppression declares " << m << " selected boxes of " << nb * nc * n;
    return failure();
  }
  if (m == 0 || n == 0)
    return SmallVector<Value>{ob.constant(DenseElementsAttr::get(
        RankedTensorType::get({m, 3}, i64), ArrayRef<int64_t>{}))};
  if (m * nb * nc * n > (int64_t{1} << 24)) {
    op->emitError() << "NonMaxSuppression selecting " << m << " of " << nb * nc * n
                    << " boxes is too large for Kiln's selection table";
    return failure();
  }
  auto operand = [&](unsigned i) -> Value {
    return i < op->getNumOperands() && !absent(op->getOperand(i)) ? op->getOperand(i) : Value();
  };
  auto keep0 = ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0));
  auto reduce = [&](StringRef name, Value v, int64_t axis) {
    return ob.create(name, {v, ob.ints({axis})}, elementOf(v), {keep0});
  };
  Value boxes = ob.castTo(op->getOperand(0), f32), scores = ob.castTo(op->getOperand(1), f32);
  // Corners [B, N] (y1 <= y2, x1 <= x2).
  SmallVector<Value> c;
  for (int64_t k = 0; k < 4; ++k)
    c.push_back(ob.pick(boxes, 2, k));
  Value y1, y2, x1, x2;
  auto center = op->getAttrOfType<IntegerAttr>("center_point_box");
  if (center && center.getInt() == 1) {
    Value half = ob.scalar(f32, 0.5);
    Value hw = ob.binary("Mul", c[2], half), hh = ob.binary("Mul", c[3], half);
    x1 = ob.binary("Sub", c[0], hw), x2 = ob.binary("Add", c[0], hw);
    y1 = ob.binary("Sub", c[1], hh), y2 = ob.binary("Add", c[1], hh);
  } else {
    y1 = ob.binary("Min", c[0], c[2]), y2 = ob.binary("Max", c[0], c[2]);
    x1 = ob.binary("Min", c[1], c[3]), x2 = ob.binary("Max", c[1], c[3]);
  }
  Value zero = ob.scalar(f32, 0);
  Value area = ob.binary("Mul", ob.binary("Sub", y2, y1), ob.binary("Sub", x2, x1));
  // Score order per batch and class [B, C, N]: order[b][c][p] is the box at p.
  auto attr = [&](StringRef name, int64_t v) {
    return ob.b.getNamedAttr(name, ob.b.getI64IntegerAttr(v));
  };
  SmallVector<Value> top = ob.createResults("TopK", {scores, ob.ints({n})}, {f32, i64},
                                            {attr("axis", 2), attr("largest", 1), attr("sorted", 1)});
  Value sortedScores = top[0], order = top[1];
  // A box's value [B, N] for each class in score order [B, C, N].
  auto sorted = [&](Value v) {
    Value perClass = ob.create("Expand", {ob.reshape(v, {nb, 1, n}), ob.ints({nb, nc, n})}, f32);
    return ob.create("GatherElements", {perClass, order}, f32, {attr("axis", 2)});
  };
  Value sy1 = sorted(y1), sx1 = sorted(x1), sy2 = sorted(y2), sx2 = sorted(x2);
  Value sArea = sorted(area);
  // Boxes whose score passes the threshold (every box without one).
  Value valid = ob.constant(DenseElementsAttr::get(RankedTensorType::get({nb, nc, n}, i1), true));
  if (Value t = operand(4))
    valid = ob.binary("Greater", sortedScores, ob.reshape(ob.castTo(t, f32), {1, 1, 1}));
  Value limit = operand(2) ? ob.reshape(ob.castTo(operand(2), i64), {1, 1})
                           : ob.reshape(ob.ints({0}), {1, 1});
  Value iouThreshold = ob.reshape(operand(3) ? ob.castTo(operand(3), f32) : zero, {1, 1, 1});
  SmallVector<int64_t> iota;
  for (int64_t i = 0; i < n; ++i)
    iota.push_back(i);
  Value positions = ob.ints(iota);
  Value none = ob.constant(DenseElementsAttr::get(RankedTensorType::get({nb, nc, n}, i1), false));
  Value noCount = ob.constant(DenseElementsAttr::get(RankedTensorType::get({nb, nc}, i64),
                                                     ArrayRef<int64_t>(SmallVector<int64_t>(nb * nc, 0))));
  // One step: box q (its corners, area, validity [B, C]) against every box.
  auto step = [&](ValueRange carried, ValueRange q) -> SmallVector<Value> {
    Value kept = carried[0], count = carried[1];
    auto col = [&](Value v) { return ob.reshape(v, {nb, nc, 1}); };
    auto overlap = [&](Value lo, Value loQ, Value hi, Value hiQ) {
      return ob.binary("Max", zero, ob.binary("Sub", ob.binary("Min", col(hiQ), hi),
                                              ob.binary("Max", col(loQ), lo)));
    };
    Value inter = ob.binary("Mul", overlap(sy1, q[0], sy2, q[2]), overlap(sx1, q[1], sx2, q[3]));
    Value unionArea = ob.binary("Sub", ob.binary("Add", col(q[4]), sArea), inter);
    Value over = ob.binary("Greater", ob.binary("Div", inter, unionArea), iouThreshold);
    over = ob.binary("And", over, ob.binary("And", ob.binary("Greater", col(q[4]), zero),
                                            ob.binary("Greater", sArea, zero)));
    Value suppressed = ob.castTo(
        reduce("ReduceMax", ob.castTo(ob.binary("And", kept, over), i64), 2), i1);
    Value keep = ob.binary("And", q[5], ob.binary("And", ob.create("Not", {suppressed}, i1),
                                                    ob.binary("Less", count, limit)));
    Value at = ob.binary("Equal", positions, q[6]);
    Value keptNext = ob.binary("Or", kept, ob.binary("And", at, col(keep)));
    Value countNext = ob.binary("Add", count, ob.castTo(keep, i64));
    return {keptNext, countNext, keep};
  };
  SmallVector<Value> scanned =
      ob.scan({none, noCount},
              {{sy1, 2}, {sx1, 2}, {sy2, 2}, {sx2, 2}, {sArea, 2}, {valid, 2}, {positions, 0}},
              {{RankedTensorType::get({nb, nc, n}, i1), {Value(), 2}}}, step);
  Value keptSorted = scanned[2];
  Value flat = selectedPositions(ob, ob.reshape(keptSorted, {nb * nc * n}), m);
  Value batch = ob.binary("Div", flat, ob.scalar(i64, static_cast<double>(nc * n)));
  Value cls = ob.binary("Mod", ob.binary("Div", flat, ob.scalar(i64, static_cast<double>(n))),
                        ob.scalar(i64, static_cast<double>(nc)));
  Value box = ob.create("Gather", {ob.reshape(order, {nb * nc * n}), flat}, i64,
                        {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(0))});
  return SmallVector<Value>{ob.concat({ob.reshape(batch, {m, 1}), ob.reshape(cls, {m, 1}),
                                       ob.reshape(box, {m, 1})},
                                      1)};
}

/// Unique where the model declares how many distinct values (or slices along
/// `axis`) there are. Over the N slices, each flattened to S elements: an N x N
/// equality table; slice i is a first occurrence when no earlier slice equals it.
/// Unsorted, the first occurrences are taken in order; sorted, by rank, the number
/// of distinct slices lexicographically below (an element is compared when every
/// element before it is equal). Y gathers them, inverse_indices and counts read the
/// equality table's columns for them.
FailureOr<SmallVector<Value>> decomposeUnique(Operation *op, OnnxBuilder &ob) {
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  auto sortedAttr = op->getAttrOfType<IntegerAttr>("sorted");
  bool sorted = !sortedAttr || sortedAttr.getInt() != 0;
  int64_t rank = type.getRank();
  int64_t axis = axisAttr ? axisAttr.getInt() : 0;
  if (axis < 0)
    axis += rank;
  Value flat = axisAttr ? x : ob.reshape(x, {type.getNumElements()});
  auto flatType = cast<RankedTensorType>(flat.getType());
  if (axis < 0 || axis >= flatType.getRank()) {
    op->emitError() << "Unique's axis is out of range";
    return failure();
  }
  int64_t n = flatType.getDimSize(axis), slice = n ? flatType.getNumElements() / n : 0;
  // The count of distinct slices, from whichever output the model declares.
  int64_t count = ShapedType::kDynamic;
  for (auto [result, dim] : {std::pair<unsigned, int64_t>{0, axis}, {1, 0}, {3, 0}}) {
    auto t = dyn_cast<RankedTensorType>(op->getResult(result).getType());
    if (t && t.getRank() > dim && !t.isDynamicDim(dim)) {
      count = t.getDimSize(dim);
      break;
    }
  }
  if (ShapedType::isDynamic(count))
    return SmallVector<Value>{};
  if (n * n * std::max<int64_t>(slice, 1) > (int64_t{1} << 24) || count > n) {
    op->emitError() << "Unique of " << n << " slices of " << slice
                    << " elements into " << count << " is beyond Kiln's equality table";
    return failure();
  }
  Type i64 = ob.b.getI64Type();
  SmallVector<int64_t> perm = {axis};
  for (int64_t d = 0; d < flatType.getRank(); ++d)
    if (d != axis)
      perm.push_back(d);
  Value rows = axis ? ob.transpose(flat, perm) : flat;
  rows = ob.reshape(rows, {n, slice});
  Value a = ob.reshape(rows, {n, 1, slice}), b = ob.reshape(rows, {1, n, slice});
  Value equalElems = ob.binary("Equal", a, b);
  auto keep0 = ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0));
  Value equal = ob.create("ReduceMin", {ob.castTo(equalElems, i64), ob.ints({2})}, i64, {keep0});
  SmallVector<int64_t> lower, iota;
  for (int64_t i = 0; i < n; ++i) {
    iota.push_back(i);
    for (int64_t j = 0; j < n; ++j)
      lower.push_back(j < i);
  }
  Value earlier = ob.reshape(ob.ints(lower), {n, n});
  Value repeats = ob.create("ReduceMax", {ob.binary("Mul", equal, earlier), ob.ints({1})}, i64, {keep0});
  Value first = ob.binary("Equal", repeats, ob.scalar(i64, 0));
  Value indices;
  if (!sorted) {
    indices = selectedPositions(ob, first, count);
  } else {
    Value less = ob.binary("Less", b, a); // slice j's element below slice i's
    Value differ = ob.castTo(ob.create("Not", {equalElems}, ob.b.getI1Type()), i64);
    Value differBefore = ob.create("CumSum", {differ, ob.scalar(i64, 2)}, i64,
                                   {ob.b.getNamedAttr("exclusive", ob.b.getI64IntegerAttr(1)),
                                    ob.b.getNamedAttr("reverse", ob.b.getI64IntegerAttr(0))});
    Value decides = ob.binary("And", less, ob.binary("Equal", differBefore, ob.scalar(i64, 0)));
    Value below = ob.create("ReduceMax", {ob.castTo(decides, i64), ob.ints({2})}, i64, {keep0});
    Value firsts = ob.reshape(ob.castTo(first, i64), {1, n});
    Value position = ob.create("ReduceSum", {ob.binary("Mul", below, firsts), ob.ints({1})}, i64, {keep0});
    SmallVector<int64_t> ks;
    for (int64_t k = 0; k < count; ++k)
      ks.push_back(k);
    Value match = ob.binary("And", ob.binary("Equal", ob.reshape(position, {1, n}),
                                             ob.reshape(ob.ints(ks), {count, 1})),
                            ob.reshape(first, {1, n}));
    indices = ob.create("ReduceSum", {ob.binary("Mul", ob.castTo(match, i64), ob.reshape(ob.ints(iota), {1, n})),
                                      ob.ints({1})},
                        i64, {keep0});
  }
  Value y = ob.create("Gather", {flat, indices}, type.getElementType(),
                      {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(axis))});
  Value hits = ob.create("Gather", {equal, indices}, i64,
                         {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(1))}); // [n, count]
  SmallVector<int64_t> ks;
  for (int64_t k = 0; k < count; ++k)
    ks.push_back(k);
  Value inverse = ob.create("ReduceSum", {ob.binary("Mul", hits, ob.reshape(ob.ints(ks), {1, count})),
                                          ob.ints({1})},
                            i64, {keep0});
  Value counts = ob.create("ReduceSum", {hits, ob.ints({0})}, i64, {keep0});
  SmallVector<Value> results = {y, indices, inverse, counts};
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (isa<NoneType>(result.getType()))
      results[i] = Value();
  return results;
}

/// DFT-17 as two MatMuls with constant cosine and sine matrices (computed in
/// double): Y = X · e^{∓2πi nk/L} over the signal axis, 1/L for the inverse, the
/// first L/2 + 1 frequencies when onesided; dft_length (a constant) pads or cuts.
FailureOr<SmallVector<Value>> decomposeDft(Operation *op, OnnxBuilder &ob) {
  Value x = op->getOperand(0);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), axis = axisOf(op, rank);
  Type elem = type.getElementType();
  if (axis < 0 || axis >= rank - 1 || !elem.isF32()) {
    op->emitError() << "DFT needs an f32 signal and an axis before the last";
    return failure();
  }
  int64_t n = type.getDimSize(axis), length = n;
  if (!absent(op->getOperand(1))) {
    auto value = dyn_cast_or_null<DenseElementsAttr>(kiln::constantValueOf(op->getOperand(1)));
    if (!value || value.getNumElements() != 1) {
      op->emitError() << "DFT's dft_length must be a constant (freeze it with --input-value)";
      return failure();
    }
    length = (*value.template getValues<APInt>().begin()).getSExtValue();
  }
  bool inverse = op->getAttrOfType<IntegerAttr>("inverse").getInt() != 0;
  bool onesided = op->getAttrOfType<IntegerAttr>("onesided").getInt() != 0;
  int64_t bins = onesided ? length / 2 + 1 : length;
  if (length <= 0 || length * bins > (int64_t{1} << 22)) {
    op->emitError() << "DFT length " << length << " is out of the supported range";
    return failure();
  }
  // The signal axis next to the complex one, cut or zero-padded to `length`.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[axis], perm[rank - 2]);
  Value signal = axis == rank - 2 ? x : ob.transpose(x, perm);
  if (length < n)
    signal = ob.slice(signal, rank - 2, 0, length);
  if (length > n) {
    SmallVector<int64_t> pads(2 * rank, 0);
    pads[rank + rank - 2] = length - n;
    signal = ob.create("Pad", {signal, ob.ints(pads), ob.scalar(elem, 0), ob.none()}, elem,
                       {ob.b.getNamedAttr("mode", ob.b.getStringAttr("constant"))});
  }
  Value re = ob.pick(signal, rank - 1, 0);
  Value im = type.getDimSize(rank - 1) == 2 ? ob.pick(signal, rank - 1, 1) : Value();
  SmallVector<float> cosines, sines;
  for (int64_t t = 0; t < length; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * static_cast<double>((t * k) % length) / length;
      cosines.push_back(static_cast<float>(std::cos(angle)));
      sines.push_back(static_cast<float>(std::sin(angle)));
    }
  auto matrixType = RankedTensorType::get({length, bins}, elem);
  Value c = ob.constant(DenseElementsAttr::get(matrixType, ArrayRef(cosines)));
  Value sn = ob.constant(DenseElementsAttr::get(matrixType, ArrayRef(sines)));
  auto matmul = [&](Value a, Value m) { return ob.create("MatMul", {a, m}, elem); };
  // Forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin) / L.
  Value yr = matmul(re, c), yi = matmul(re, sn);
  if (!inverse)
    yi = ob.create("Neg", yi, elem);
  if (im) {
    yr = ob.binary(inverse ? "Sub" : "Add", yr, matmul(im, sn));
    yi = ob.binary("Add", yi, matmul(im, c));
  }
  if (inverse) {
    yr = ob.binary("Mul", yr, ob.scalar(elem, 1.0 / length));
    yi = ob.binary("Mul", yi, ob.scalar(elem, 1.0 / length));
  }
  auto withUnit = [&](Value v) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
    shape.push_back(1);
    return ob.reshape(v, shape);
  };
  Value y = ob.concat({withUnit(yr), withUnit(yi)}, rank - 1);
  return SmallVector<Value>{axis == rank - 2 ? y : ob.transpose(y, perm)};
}

/// STFT-17 with a constant frame step and length (the model's, or frozen with
/// --input-value): the frames gathered by constant indices, times the window, then
/// a DFT over each frame (decomposed as above).
FailureOr<SmallVector<Value>> decomposeStft(Operation *op, OnnxBuilder &ob) {
  auto scalarOf = [](Value v) -> std::optional<int64_t> {
    auto d = dyn_cast_or_null<DenseElementsAttr>(kiln::constantValueOf(v));
    if (!d || d.getNumElements() != 1)
      return std::nullopt;
    return (*d.template getValues<APInt>().begin()).getSExtValue();
  };
  Value signal = op->getOperand(0), window = op->getOperand(2);
  auto type = cast<RankedTensorType>(signal.getType());
  std::optional<int64_t> step = scalarOf(op->getOperand(1));
  std::optional<int64_t> length =
      !absent(window) ? cast<RankedTensorType>(window.getType()).getDimSize(0)
                      : (absent(op->getOperand(3)) ? std::nullopt : scalarOf(op->getOperand(3)));
  if (!step || !length) {
    op->emitError() << "STFT needs a constant frame_step and frame length (a window, or "
                       "frame_length frozen with --input-value)";
    return failure();
  }
  int64_t samples = type.getDimSize(1);
  if (*step <= 0 || *length <= 0 || *length > samples) {
    op->emitError() << "STFT frame_step " << *step << " and frame length " << *length
                    << " do not fit a signal of " << samples;
    return failure();
  }
  int64_t frames = (samples - *length) / *step + 1;
  SmallVector<int64_t> indices;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < *length; ++j)
      indices.push_back(f * *step + j);
  auto indexType = RankedTensorType::get({frames, *length}, ob.b.getI64Type());
  Type elem = type.getElementType();
  Value framed = ob.create("Gather", {signal, ob.constant(DenseElementsAttr::get(indexType, ArrayRef(indices)))},
                           elem, {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(1))});
  if (!absent(window))
    framed = ob.binary("Mul", framed, ob.reshape(window, {1, 1, *length, 1}));
  Value dft = ob.create(
      "DFT", {framed, ob.none()}, elem,
      {ob.b.getNamedAttr("axis", ob.b.getI64IntegerAttr(2)),
       ob.b.getNamedAttr("inverse", ob.b.getI64IntegerAttr(0)),
       ob.b.getNamedAttr("onesided", op->getAttrOfType<IntegerAttr>("onesided"))});
  Operation *dftOp = dft.getDefiningOp();
  OnnxBuilder atDft(dftOp);
  FailureOr<SmallVector<Value>> spectrum = decomposeDft(dftOp, atDft);
  if (failed(spectrum))
    return failure();
  dftOp->erase();
  return spectrum;
}

/// BatchNormalization in training mode (opset 14+): normalized by the batch's
/// mean and population variance over every axis but 1; the running statistics
/// come out as input * momentum + batch * (1 - momentum).
FailureOr<SmallVector<Value>> decomposeTrainingBatchNorm(Operation *op, OnnxBuilder &ob) {
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

/// The decomposition of `op`, or an empty list when it is not one to decompose.
/// Fails (after reporting) when the op is one but in a form Kiln lacks.
FailureOr<SmallVector<Value>> decompose(Operation *op) {
  std::string name = kiln::onnx::onnxOperatorName(op);
  OnnxBuilder ob(op);
  ob.foldConstants = true;
  auto in = [&](unsigned i) { return op->getOperand(i); };
  Type f32 = ob.b.getF32Type(), i32 = ob.b.getI32Type(),
       u8 = IntegerType::get(op->getContext(), 8, IntegerType::Unsigned);
  auto isStatic = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return isa<NoneType>(v.getType()) || (t && t.hasStaticShape());
  };
  if (!llvm::all_of(op->getOperands(), isStatic))
    return SmallVector<Value>{};

  if (name == "QuantizeLinear" || name == "DequantizeLinear") {
    if (auto block = op->getAttrOfType<IntegerAttr>("block_size"); block && block.getInt()) {
      op->emitError() << "blocked quantization (block_size) is not supported";
      return failure();
    }
    int64_t rank = rankOf(in(0)), axis = axisOf(op, rank);
    if (name == "DequantizeLinear")
      return SmallVector<Value>{ob.binary(
          "Mul", ob.castTo(ob.minusZeroPoint(in(0), in(2), axis, rank), elementOf(in(1))),
          ob.alongAxis(in(1), axis, rank))};
    Type out = cast<TensorType>(op->getResult(0).getType()).getElementType();
    Value x = ob.castTo(in(0), elementOf(in(1)));
    return SmallVector<Value>{ob.quantize(x, in(1), in(2), axis, out)};
  }
  if (name == "DynamicQuantizeLinear") {
    Value x = in(0);
    SmallVector<NamedAttribute> all = {
        ob.b.getNamedAttr("keepdims", ob.b.getI64IntegerAttr(0))};
    Value zero = ob.scalar(f32, 0), qmax = ob.scalar(f32, 255);
    Value lo = ob.create("Min", {ob.create("ReduceMin", {x, ob.none()}, f32, all), zero}, f32);
    Value hi = ob.create("Max", {ob.create("ReduceMax", {x, ob.none()}, f32, all), zero}, f32);
    Value scale = ob.binary("Div", ob.binary("Sub", hi, lo), qmax);
    Value zp = ob.binary("Sub", zero, ob.binary("Div", lo, scale));
    zp = ob.create("Min", {ob.create("Max", {zp, zero}, f32), qmax}, f32);
    zp = ob.castTo(ob.create("Round", zp, f32), u8);
    return SmallVector<Value>{ob.quantize(x, scale, zp, 1, u8), scale, zp};
  }
  if (name == "MatMulInteger") {
    int64_t ra = rankOf(in(0)), rb = rankOf(in(1));
    return SmallVector<Value>{ob.create(
        "MatMul",
        {ob.minusZeroPoint(in(0), in(2), ra - 2, ra), ob.minusZeroPoint(in(1), in(3), rb - 1, rb)},
        i32)};
  }
  if (name == "QLinearMatMul") {
    int64_t ra = rankOf(in(0)), rb = rankOf(in(3));
    Value acc = ob.create(
        "MatMul",
        {ob.minusZeroPoint(in(0), in(2), ra - 2, ra), ob.minusZeroPoint(in(3), in(5), rb - 1, rb)},
        i32);
    Value scale = ob.binary("Div",
                            ob.binary("Mul", ob.alongAxis(in(1), ra - 2, ra),
                                      ob.alongAxis(in(4), rb - 1, rb)),
                            in(6));
    Value y = ob.binary("Mul", ob.castTo(acc, f32), scale);
    return SmallVector<Value>{ob.quantize(y, ob.scalar(f32, 1), in(7), 1, elementOf(in(7)))};
  }
  if (name == "ConvInteger")
    return SmallVector<Value>{
        ob.castTo(ob.integerConv(op, in(0), in(2), in(1), in(3), Value()), i32)};
  if (name == "QLinearConv") {
    Value acc = ob.castTo(ob.integerConv(op, in(0), in(2), in(3), in(5), in(8)), f32);
    int64_t rank = rankOf(acc);
    Value scale = ob.binary("Div", ob.binary("Mul", in(1), ob.alongAxis(in(4), 1, rank)),
                            in(6));
    Value y = ob.binary("Mul", acc, scale);
    return SmallVector<Value>{ob.quantize(y, ob.scalar(f32, 1), in(7), 1, elementOf(in(7)))};
  }
  if (name == "Upsample" || (name == "Resize" && op->getNumOperands() == 2)) {
    auto mode = op->getAttrOfType<StringAttr>("mode");
    SmallVector<NamedAttribute> attrs = {
        ob.b.getNamedAttr("mode", mode ? mode : ob.b.getStringAttr("nearest")),
        ob.b.getNamedAttr("coordinate_transformation_mode", ob.b.getStringAttr("asymmetric")),
        ob.b.getNamedAttr("nearest_mode", ob.b.getStringAttr("floor"))};
    return SmallVector<Value>{ob.create("Resize", {in(0), ob.none(), in(1), ob.none()},
                                        elementOf(in(0)), attrs)};
  }
  if (name == "Pad" && op->getNumOperands() == 1) { // Pad-1 and -2: attributes
    auto pads = op->getAttrOfType<ArrayAttr>("pads");
    if (!pads)
      pads = op->getAttrOfType<ArrayAttr>("paddings");
    SmallVector<int64_t> values;
    for (Attribute a : pads)
      values.push_back(cast<IntegerAttr>(a).getInt());
    auto value = op->getAttrOfType<FloatAttr>("value");
    auto mode = op->getAttrOfType<StringAttr>("mode");
    Type elem = elementOf(in(0));
    return SmallVector<Value>{ob.create(
        "Pad", {in(0), ob.ints(values), ob.scalar(elem, value ? value.getValueAsDouble() : 0), ob.none()},
        elem, {ob.b.getNamedAttr("mode", mode ? mode : ob.b.getStringAttr("constant"))})};
  }
  if (name == "Slice" && op->getNumOperands() == 1) { // Slice-1: attributes
    auto list = [&](StringRef attr) -> Value {
      auto a = op->getAttrOfType<ArrayAttr>(attr);
      if (!a)
        return ob.none();
      SmallVector<int64_t> v;
      for (Attribute e : a)
        v.push_back(cast<IntegerAttr>(e).getInt());
      return ob.ints(v);
    };
    return SmallVector<Value>{ob.create(
        "Slice", {in(0), list("starts"), list("ends"), list("axes"), ob.none()},
        elementOf(in(0)))};
  }
  if (name == "PRelu") {
    // Before opset 7 a 1-D slope is per channel (axis 1), not broadcast from the
    // right as numpy does.
    auto module = op->getParentOfType<ModuleOp>();
    auto opset = module ? module->getAttrOfType<IntegerAttr>("onnx.opset") : IntegerAttr();
    auto slope = cast<RankedTensorType>(in(1).getType());
    auto x = cast<RankedTensorType>(in(0).getType());
    if (opset && opset.getInt() < 7 && slope.getRank() == 1 && slope.getDimSize(0) > 1 &&
        x.getRank() > 2 && x.getDimSize(1) == slope.getDimSize(0))
      return SmallVector<Value>{ob.create(
          "PRelu", {in(0), ob.alongAxis(in(1), 1, x.getRank())}, x.getElementType())};
    return SmallVector<Value>{};
  }
  if (name == "MaxUnpool") {
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
  if (name == "BatchNormalization") {
    auto training = op->getAttrOfType<IntegerAttr>("training_mode");
    if (training && training.getInt())
      return decomposeTrainingBatchNorm(op, ob);
    return SmallVector<Value>{};
  }
  if (name == "TfIdfVectorizer")
    return decomposeTfIdf(op, ob);
  if (StringRef(name).starts_with("Reduce"))
    return selectRuntimeAxes(op, ob);
  if (name == "Compress" || name == "NonZero")
    return decomposeSelection(op, ob);
  if (name == "Unique")
    return decomposeUnique(op, ob);
  if (name == "NonMaxSuppression")
    return decomposeNonMaxSuppression(op, ob);
  if (name == "DFT")
    return decomposeDft(op, ob);
  if (name == "STFT")
    return decomposeStft(op, ob);
  if (auto ifOp = dyn_cast<onnx::IfOp>(op)) {
    // Up to this many elements computed, both branches run (Where).
    constexpr int64_t kSelectElements = 4096;
    if (branchElements(ifOp) <= kSelectElements) {
      FailureOr<SmallVector<Value>> selected = selectBranches(ifOp, ob);
      if (failed(selected) || !selected->empty())
        return selected;
    }
    return outlineBranches(ifOp, ob);
  }
  if (name == "RNN" || name == "GRU" || name == "LSTM")
    return decomposeRecurrent(op, ob);
  return SmallVector<Value>{};
}

struct DecomposePass : kiln::impl::DecomposeBase<DecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<kiln::onnx::OnnxDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      FailureOr<SmallVector<Value>> values = decompose(op);
      if (failed(values))
        return signalPassFailure();
      if (values->empty())
        continue;
      for (auto [result, value] : llvm::zip(op->getResults(), *values)) {
        if (!value)
          continue; // An output the model does not use.
        // The model may know more than the shape function (declared output types).
        if (result.getType() != value.getType() &&
            succeeded(verifyCompatibleShape(result.getType(), value.getType())) &&
            elementOf(result) == elementOf(value))
          value.setType(result.getType());
        if (result.getType() != value.getType()) {
          op->emitError() << "decomposition of " << op->getName() << " gives "
                          << value.getType() << " for " << result.getType();
          return signalPassFailure();
        }
        result.replaceAllUsesWith(value);
      }
      op->erase();
    }
  }
};

} // namespace
