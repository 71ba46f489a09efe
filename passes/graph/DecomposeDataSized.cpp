//===- DecomposeDataSized.cpp - Data-dependent sizes ---===//
//
// This file implements kiln-decompose's data-dependent sizes (Decompositions.h).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Decompositions.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace kiln {

namespace {

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

} // namespace

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

} // namespace kiln
