//===- ControlFlow.cpp - The graph phase's control flow -------------------===//
//
// This file implements ControlFlow.h: Loop and Scan unrolled, a constant If's
// branch inlined, a run-time If's branches inferred (for kiln-infer-shapes), and a
// run-time If selected with Where or outlined into functions picked by kiln.if
// (for kiln-decompose).
//
//===----------------------------------------------------------------------===//
#include "passes/graph/ControlFlow.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/onnx/OnnxConstants.h"
#include "passes/graph/InferShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

using namespace mlir;

namespace kiln {

/// An If decided at run time: its branches are inferred like the main body, and
/// a result both branches give the same type gets it.
LogicalResult GraphControlFlow::inferBranches(kiln::onnx::IfOp ifOp) {
  SmallVector<Operation *> yields;
  for (Region *branch : {&ifOp.getThenBranch(), &ifOp.getElseBranch()}) {
    Block &block = branch->front();
    if (failed(sweep(llvm::to_vector(llvm::make_pointer_range(block.without_terminator())))))
      return failure();
    yields.push_back(block.getTerminator());
  }
  for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
    Type thenType = yields[0]->getOperand(i).getType();
    if (thenType != yields[1]->getOperand(i).getType())
      continue;
    Type old = ifOp.getResult(i).getType();
    Type type = mergeTypes(old, thenType);
    if (!type)
      return typeContradiction(ifOp, i, old, thenType);
    ifOp.getResult(i).setType(type);
  }
  // A result both branches give the same value (one from above, or equal
  // constants, such as a short-circuit `and` whose other side folded) is that
  // value whatever the condition.
  for (unsigned i = 0; i < ifOp.getNumResults(); ++i) {
    Value a = yields[0]->getOperand(i), b = yields[1]->getOperand(i);
    Value same;
    if (a == b && a.getType() == ifOp.getResult(i).getType()) {
      same = a;
    } else if (auto ca = dyn_cast_or_null<DenseElementsAttr>(kiln::constantValueOf(a));
               ca && ca == kiln::constantValueOf(b) && a.getType() == b.getType() &&
               a.getType() == ifOp.getResult(i).getType()) {
      same = kiln::OnnxBuilder(ifOp).constant(ca);
    }
    if (same)
      ifOp.getResult(i).replaceAllUsesWith(same);
  }
  return success();
}

/// One run of `body` before `at` with its arguments bound to `args`: the body's
/// ops cloned, then visited (folded, typed); the values it yields.
FailureOr<SmallVector<Value>> GraphControlFlow::runBody(Block &body, ValueRange args,
                                                        Operation *at) {
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  OpBuilder b(at);
  SmallVector<Operation *> clones;
  for (Operation &op : body)
    clones.push_back(b.clone(op, mapping));
  // The cloned yield holds the results while the clones fold (it is a use, so
  // replacements reach it); it goes once they are read.
  Operation *yield = clones.pop_back_val();
  if (failed(sweep(clones)))
    return failure();
  SmallVector<Value> results(yield->getOperands());
  yield->erase();
  return results;
}

/// `parts` (static shapes) stacked along `axis`: each gets a unit dim there.
Value GraphControlFlow::stack(OnnxBuilder &ob, ArrayRef<Value> parts, int64_t axis) {
  SmallVector<Value> unit;
  for (Value p : parts) {
    auto t = cast<RankedTensorType>(p.getType());
    SmallVector<int64_t> shape(t.getShape());
    if (axis < 0)
      axis += t.getRank() + 1;
    shape.insert(shape.begin() + axis, 1);
    unit.push_back(ob.reshape(p, shape));
  }
  return ob.concat(unit, axis);
}

/// Replaces an unrolled Scan or Loop by the values its copies computed.
LogicalResult GraphControlFlow::replaceUnrolled(Operation *op, ArrayRef<Value> values) {
  for (auto [result, value] : llvm::zip(op->getResults(), values)) {
    if (!mergeTypes(result.getType(), value.getType()))
      return typeContradiction(op, result.getResultNumber(), result.getType(), value.getType());
    result.replaceAllUsesWith(value);
  }
  op->erase();
  return success();
}

/// Scan with static shapes: unrolled over the scan axis (and, for Scan-8, over
/// the batch axis), each step a copy of the body; scan outputs are stacked.
/// Left alone (the tensor phase reports it) when a shape is not static or
/// Scan-8 has sequence_lens.
LogicalResult GraphControlFlow::unrollScan(Operation *scan) {
  bool v8 = isa<kiln::onnx::ScanV8Op>(scan);
  SmallVector<Value> operands(scan->getOperands());
  if (v8) {
    if (!isa<NoneType>(operands.front().getType()))
      return success();
    operands.erase(operands.begin());
  }
  if (!llvm::all_of(operands, [](Value v) { return isStaticType(v.getType()); }))
    return success();
  auto ints = [&](StringRef name, size_t n) {
    SmallVector<int64_t> v(n, 0);
    if (auto a = scan->getAttrOfType<ArrayAttr>(name))
      for (auto [i, e] : llvm::enumerate(a))
        if (i < n)
          v[i] = cast<IntegerAttr>(e).getInt();
    return v;
  };
  Block &body = scan->getRegion(0).front();
  int64_t m = scan->getAttrOfType<IntegerAttr>("num_scan_inputs").getInt();
  int64_t n = static_cast<int64_t>(operands.size()) - m;
  int64_t k = static_cast<int64_t>(body.getTerminator()->getNumOperands()) - n;
  if (n < 0 || k < 0)
    return scan->emitError() << "Scan's body does not match its inputs";
  SmallVector<int64_t> inAxes = ints("scan_input_axes", m),
                       inDirs = ints(v8 ? "directions" : "scan_input_directions", m),
                       outAxes = ints("scan_output_axes", k),
                       outDirs = ints("scan_output_directions", k);
  kiln::OnnxBuilder ob(scan);
  // The scan over one batch element (all of them for Scan-9).
  auto scanOnce = [&](SmallVector<Value> states, ArrayRef<Value> inputs)
      -> FailureOr<SmallVector<Value>> {
    auto allStatic = [](ArrayRef<Value> vs) {
      return llvm::all_of(vs, [](Value v) {
        return isStaticType(v.getType()) && !isa<NoneType>(v.getType());
      });
    };
    int64_t length = -1;
    for (auto [j, in] : llvm::enumerate(inputs)) {
      auto t = cast<RankedTensorType>(in.getType());
      int64_t axis = inAxes[j] < 0 ? inAxes[j] + t.getRank() : inAxes[j];
      inAxes[j] = axis;
      if (length >= 0 && t.getDimSize(axis) != length)
        return scan->emitError() << "Scan's inputs differ in length along their scan axes";
      length = t.getDimSize(axis);
    }
    SmallVector<SmallVector<Value>> outs(k);
    for (int64_t step = 0; step < length; ++step) {
      SmallVector<Value> args(states);
      for (auto [j, in] : llvm::enumerate(inputs))
        args.push_back(ob.pick(in, inAxes[j], inDirs[j] ? length - 1 - step : step));
      FailureOr<SmallVector<Value>> results = runBody(body, args, scan);
      if (failed(results))
        return failure();
      if (!allStatic(*results))
        return scan->emitError() << "the Scan body's outputs have no static shapes";
      states.assign(results->begin(), results->begin() + n);
      for (int64_t i = 0; i < k; ++i)
        outs[i].push_back((*results)[n + i]);
    }
    SmallVector<Value> results(states);
    for (int64_t i = 0; i < k; ++i) {
      if (outDirs[i])
        std::reverse(outs[i].begin(), outs[i].end());
      results.push_back(stack(ob, outs[i], outAxes[i]));
    }
    return results;
  };

  SmallVector<Value> results;
  ArrayRef<Value> states = ArrayRef(operands).take_front(n),
                  inputs = ArrayRef(operands).drop_front(n);
  if (!v8) {
    FailureOr<SmallVector<Value>> r = scanOnce(SmallVector<Value>(states), inputs);
    if (failed(r))
      return failure();
    results = *r;
  } else {
    int64_t batch = cast<RankedTensorType>(operands.front().getType()).getDimSize(0);
    SmallVector<SmallVector<Value>> perBatch(n + k);
    for (int64_t bi = 0; bi < batch; ++bi) {
      SmallVector<Value> s, in;
      for (Value v : states)
        s.push_back(ob.pick(v, 0, bi));
      for (Value v : inputs)
        in.push_back(ob.pick(v, 0, bi));
      FailureOr<SmallVector<Value>> r = scanOnce(s, in);
      if (failed(r))
        return failure();
      for (int64_t i = 0; i < n + k; ++i)
        perBatch[i].push_back((*r)[i]);
    }
    for (auto &parts : perBatch)
      results.push_back(stack(ob, parts, 0));
  }
  return replaceUnrolled(scan, results);
}

/// A one-element integer or bool constant's value.
std::optional<int64_t> GraphControlFlow::scalar(Attribute a) {
  auto d = dyn_cast_or_null<DenseElementsAttr>(a);
  if (!d || d.getNumElements() != 1)
    return std::nullopt;
  if (d.getElementType().isInteger(1))
    return d.getValues<bool>()[0] ? 1 : 0;
  return d.getValues<APInt>()[0].getSExtValue();
}

/// Loop whose trip count and condition are constants (a model's own, or frozen
/// with --input-value): unrolled, each iteration a copy of the body whose
/// condition must fold; scan outputs are stacked. A trip count or a condition
/// known only at run time goes to unrollBounded; a Loop with neither is left
/// alone (the tensor phase reports it).
LogicalResult GraphControlFlow::unrollLoop(onnx::LoopOp loop, ArrayRef<Attribute> values) {
  constexpr int64_t kMaxIterations = 4096;
  bool hasTrips = !isa<NoneType>(loop.getM().getType()),
       hasCond = !isa<NoneType>(loop.getCond().getType());
  std::optional<int64_t> trips = hasTrips ? scalar(values[0]) : std::nullopt;
  std::optional<int64_t> cond = hasCond ? scalar(values[1]) : std::optional<int64_t>(1);
  Block &body = loop.getBody().front();
  unsigned carried = loop.getVInitial().size();
  unsigned scans = body.getTerminator()->getNumOperands() - 1 - carried;
  // The most iterations the model allows: its declared scan output length, or a
  // constant trip count.
  std::optional<int64_t> bound = trips;
  for (unsigned i = 0; i < scans; ++i) {
    auto type = dyn_cast<RankedTensorType>(loop.getResult(carried + i).getType());
    if (!type || type.getRank() == 0 || type.isDynamicDim(0))
      continue;
    if (!bound || (!trips && type.getDimSize(0) < *bound))
      bound = type.getDimSize(0);
  }
  if ((hasTrips && !trips) || !cond || (!hasTrips && !hasCond)) {
    if (!hasTrips && !hasCond)
      return success(); // the tensor phase reports it
    return unrollBounded(loop, bound.value_or(std::numeric_limits<int64_t>::max()));
  }
  int64_t limit = hasTrips ? *trips : kMaxIterations + 1;
  SmallVector<Value> state(loop.getVInitial());
  SmallVector<SmallVector<Value>> outs(scans);
  kiln::OnnxBuilder ob(loop);
  auto i64 = RankedTensorType::get({}, ob.b.getI64Type());
  auto i1 = RankedTensorType::get({}, ob.b.getI1Type());
  int64_t iteration = 0;
  for (; iteration < limit && *cond; ++iteration) {
    if (iteration == kMaxIterations)
      return loop.emitError() << "Loop runs over " << kMaxIterations
                              << " iterations; Kiln unrolls loops up to that";
    SmallVector<Value> args = {
        ob.constant(DenseElementsAttr::get(i64, APInt(64, iteration))),
        ob.constant(DenseElementsAttr::get(i1, true))};
    args.append(state);
    FailureOr<SmallVector<Value>> results = runBody(body, args, loop);
    if (failed(results))
      return failure();
    cond = scalar(kiln::constantValueOf((*results)[0]));
    if (!cond && bound) // what this run cloned is dead; the canonicalizer drops it
      return unrollBounded(loop, *bound);
    if (!cond && !hasTrips) // a while loop: bounded where its condition folds
      return unrollBounded(loop, std::numeric_limits<int64_t>::max());
    if (!cond)
      return loop.emitError() << "the condition of Loop iteration " << iteration
                              << " depends on run-time values; Kiln unrolls loops "
                                 "whose trip count and condition are constants";
    state.assign(results->begin() + 1, results->begin() + 1 + carried);
    for (unsigned i = 0; i < scans; ++i)
      outs[i].push_back((*results)[1 + carried + i]);
  }
  SmallVector<Value> results(state);
  for (unsigned i = 0; i < scans; ++i) {
    if (outs[i].empty())
      return loop.emitError() << "Loop runs no iteration but has scan outputs";
    for (Value v : outs[i])
      if (!isStaticType(v.getType()) || isa<NoneType>(v.getType()))
        return loop.emitError() << "scan output " << i << " of the Loop body has no static shape";
    results.push_back(stack(ob, outs[i], 0));
  }
  return replaceUnrolled(loop, results);
}

/// Loop with a run-time trip count or condition and at most `bound` iterations
/// (the length of a declared scan output, or a constant trip count): `bound`
/// copies of the body, each active while its index is below the trip count and
/// every condition so far held; an inactive copy's loop-carried values are
/// dropped by Where. Scan outputs stack all `bound` copies: the model declares
/// that many rows. Each copy computes on the values an active run carries (an
/// inactive copy's results are dropped anyway), so a counter in the condition
/// stays constant: where a copy's condition folds to false, no later copy can
/// run and the unrolling stops there (a `while c and i < 5` loop, its trip
/// count unbounded or absent). Without scan outputs, a bound above the unroll
/// limit is tried for that many copies before it is an error.
LogicalResult GraphControlFlow::unrollBounded(onnx::LoopOp loop, int64_t bound) {
  constexpr int64_t kMaxIterations = 4096, kSpeculative = 256;
  Block &body = loop.getBody().front();
  unsigned carried = loop.getVInitial().size();
  unsigned scans = body.getTerminator()->getNumOperands() - 1 - carried;
  int64_t copies = bound;
  if (bound > kMaxIterations) {
    if (scans > 0)
      return loop.emitError() << "Loop runs up to " << bound
                              << " iterations; Kiln unrolls loops up to " << kMaxIterations;
    copies = kSpeculative;
  }
  kiln::OnnxBuilder ob(loop);
  Type i64 = ob.b.getI64Type(), i1 = ob.b.getI1Type();
  auto asScalar = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getRank() > 0 ? ob.reshape(v, {}) : v;
  };
  Value cond = isa<NoneType>(loop.getCond().getType())
                   ? ob.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), true))
                   : asScalar(loop.getCond());
  Value trips = isa<NoneType>(loop.getM().getType()) ? Value() : asScalar(loop.getM());
  SmallVector<Value> state(loop.getVInitial()), running(state);
  SmallVector<SmallVector<Value>> outs(scans);
  bool ended = false;
  for (int64_t iteration = 0; iteration < copies && !ended; ++iteration) {
    Value index = ob.scalar(i64, static_cast<double>(iteration));
    Value active = trips ? ob.binary("And", ob.binary("Less", index, trips), cond) : cond;
    SmallVector<Value> args = {index, cond};
    args.append(running);
    FailureOr<SmallVector<Value>> results = runBody(body, args, loop);
    if (failed(results))
      return failure();
    for (unsigned k = 0; k < carried; ++k) {
      Value next = (*results)[1 + k];
      if (next.getType() != state[k].getType() || !isStaticType(next.getType()))
        return loop.emitError() << "loop-carried value " << k
                                << " changes shape between iterations; a Loop with a "
                                   "run-time trip count needs fixed shapes";
      state[k] = ob.create("Where", {active, next, state[k]}, kiln::elementOf(next));
      running[k] = next;
    }
    std::optional<int64_t> own = scalar(kiln::constantValueOf((*results)[0]));
    ended = scans == 0 && own && *own == 0;
    if (iteration + 1 < copies)
      cond = ob.binary("And", active, asScalar((*results)[0]));
    for (unsigned i = 0; i < scans; ++i)
      outs[i].push_back((*results)[1 + carried + i]);
  }
  if (!ended && copies < bound)
    return loop.emitError()
           << "Loop's trip count and condition depend on run-time values and nothing "
              "bounds its iterations within "
           << kMaxIterations
           << " (a constant trip count, a declared scan output length, or a condition "
              "that turns false within "
           << kSpeculative << " iterations)";
  SmallVector<Value> results(state);
  for (unsigned i = 0; i < scans; ++i) {
    for (Value v : outs[i])
      if (!isStaticType(v.getType()) || isa<NoneType>(v.getType()))
        return loop.emitError() << "scan output " << i << " of the Loop body has no static shape";
    results.push_back(stack(ob, outs[i], 0));
  }
  return replaceUnrolled(loop, results);
}

/// Replaces `ifOp` by the ops of `branch` (which may use values from above) and
/// visits them.
LogicalResult GraphControlFlow::inlineBranch(onnx::IfOp ifOp, Region &branch) {
  Block &block = branch.front();
  Operation *yield = block.getTerminator();
  SmallVector<Operation *> moved;
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    op.moveBefore(ifOp);
    moved.push_back(&op);
  }
  for (auto [result, value] : llvm::zip(ifOp.getResults(), yield->getOperands()))
    result.replaceAllUsesWith(value);
  ifOp.erase();
  return sweep(moved);
}

namespace {

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

} // namespace

FailureOr<SmallVector<Value>> decomposeRuntimeIf(onnx::IfOp ifOp, OnnxBuilder &ob) {
  // Up to this many elements computed, both branches run (Where).
  constexpr int64_t kSelectElements = 4096;
  if (branchElements(ifOp) <= kSelectElements) {
    FailureOr<SmallVector<Value>> selected = selectBranches(ifOp, ob);
    if (failed(selected) || !selected->empty())
      return selected;
  }
  return outlineBranches(ifOp, ob);
}

} // namespace kiln
