//===- InferShapes.cpp - Kiln's shape inference and constant folding ------===//
//
// This file implements kiln-infer-shapes (see Passes.td). One forward sweep per
// function: fold (EvaluateOnnx.h), pick the branch of a constant If, or refine the
// result types with the op's shape function. Types only ever get more precise: a
// dimension the importer knew (from the model's declared types) is kept where the
// shape function cannot tell, and a contradiction is an error.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_INFERSHAPES
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isStatic(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return isa<NoneType>(t) || (ranked && ranked.hasStaticShape());
}

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// The more precise of the type the op had and the one its shape function gave;
/// null when they contradict each other.
Type merge(Type old, Type inferred) {
  if (old == inferred || isa<NoneType>(old))
    return old;
  auto o = dyn_cast<TensorType>(old);
  auto n = dyn_cast<TensorType>(inferred);
  if (!o || !n)
    return old;
  // An unranked imported type is a placeholder (its element type a guess).
  if (!o.hasRank())
    return n.hasRank() ? inferred : n;
  if (o.getElementType() != n.getElementType())
    return {};
  if (!n.hasRank())
    return old;
  if (o.getRank() != n.getRank())
    return {};
  SmallVector<int64_t> dims;
  for (auto [a, b] : llvm::zip(o.getShape(), n.getShape())) {
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return {};
    dims.push_back(ShapedType::isDynamic(a) ? b : a);
  }
  return RankedTensorType::get(dims, o.getElementType());
}

struct InferShapesPass : kiln::impl::InferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &body = func.getBody().front();
      deferred.clear();
      if (failed(sweep(llvm::to_vector(llvm::make_pointer_range(body))))) {
        signalPassFailure();
        return;
      }
      // Run-time dimensions a declared type pins (Range -> element-wise ops ->
      // a graph output of declared shape): unify, then sweep again.
      if (!deferred.empty() && unifyDimensions(body)) {
        deferred.clear();
        if (failed(sweep(llvm::to_vector(llvm::make_pointer_range(body))))) {
          signalPassFailure();
          return;
        }
      }
      for (Operation *op : deferred)
        for (unsigned i = 0; i < op->getNumResults(); ++i)
          if (!isStatic(op->getResult(i).getType()) && !op->getResult(i).use_empty()) {
            // Ops whose output size is data-dependent whatever the shapes: only a
            // declared output type fixes it.
            static const llvm::StringSet<> dataSized{"NonZero", "Compress", "Unique",
                                                      "NonMaxSuppression"};
            std::string name = kiln::onnx::onnxOperatorName(op);
            op->emitError() << "output " << i << " of " << op->getName()
                            << " has a shape that depends on run-time values ("
                            << str(op->getResult(i).getType()) << "); "
                            << (dataSized.contains(name)
                                    ? name + "'s output size depends on the data: Kiln "
                                             "compiles it only where the model declares "
                                             "that size (a graph output's shape that "
                                             "fixes it)"
                                    : std::string("freeze the inputs it depends on with "
                                                  "--input-value"));
            signalPassFailure();
            return;
          }
      Operation *ret = body.getTerminator();
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     ret->getOperandTypes()));
    }
  }

  LogicalResult sweep(ArrayRef<Operation *> ops) {
    for (Operation *op : ops)
      if (failed(visit(op)))
        return failure();
    return success();
  }

  LogicalResult visit(Operation *op) {
    if (!isa<kiln::onnx::OnnxDialect>(op->getDialect()) ||
        isa<kiln::onnx::ConstantOp, kiln::onnx::NoValueOp>(op))
      return success();
    SmallVector<Attribute> values;
    for (Value v : op->getOperands())
      values.push_back(kiln::constantValueOf(v));

    if (auto ifOp = dyn_cast<kiln::onnx::IfOp>(op)) {
      if (auto cond = dyn_cast_or_null<DenseElementsAttr>(values[0]))
        if (cond.getNumElements() == 1)
          return inlineBranch(ifOp, cond.getValues<bool>()[0] ? ifOp.getThenBranch()
                                                               : ifOp.getElseBranch());
      return inferBranches(ifOp);
    }

    if (isa<kiln::onnx::ScanOp, kiln::onnx::ScanV8Op>(op))
      return unrollScan(op);
    if (auto loop = dyn_cast<kiln::onnx::LoopOp>(op))
      return unrollLoop(loop, values);

    if (DenseElementsAttr folded = kiln::evaluateOnnxOp(op, values)) {
      Type old = op->getResult(0).getType();
      if (!merge(old, folded.getType()))
        return contradiction(op, 0, old, folded.getType());
      OpBuilder b(op);
      auto constant = b.create<kiln::onnx::ConstantOp>(op->getLoc(),
                                                       TypeRange{folded.getType()},
                                                       ValueRange{});
      constant.setValueAttr(folded);
      op->getResult(0).replaceAllUsesWith(constant.getResult());
      op->erase();
      return success();
    }

    bool staticOperands = llvm::all_of(op->getOperandTypes(), isStatic);
    SmallVector<Type> inferred;
    std::string why;
    auto shapeFn = cast<kiln::onnx::InferShapesInterface>(op);
    if (failed(shapeFn.inferResultTypes(values, inferred, why))) {
      if (!staticOperands)
        return success(); // Unknown operands may be why; a later check reports.
      return op->emitError() << "cannot infer the shape of " << op->getName() << ": "
                             << why;
    }
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      Type old = op->getResult(i).getType();
      Type type = merge(old, inferred[i]);
      if (!type)
        return contradiction(op, i, old, inferred[i]);
      op->getResult(i).setType(type);
    }
    // A result left non-static by static operands depends on run-time values: an
    // error unless a declared type downstream pins it (unifyDimensions); checked
    // after the sweep.
    if (staticOperands && op->getNumRegions() == 0)
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        if (!isStatic(op->getResult(i).getType()) && !op->getResult(i).use_empty()) {
          deferred.push_back(op);
          break;
        }
    return success();
  }

  /// Unifies the run-time dimensions of `body` with the dimensions they flow into,
  /// and gives each class its static size where one member has one (a declared
  /// type). Which result dimension an operand dimension becomes is asked of the op's
  /// shape function: the operand dimension is set to two probe sizes in turn, and a
  /// result dimension that follows both is the same dimension. Element-wise ops
  /// with broadcasting thus join equal dimensions (a run-time dimension is taken
  /// not to broadcast, as ONNX Runtime's symbolic shape inference takes it).
  /// True when a type changed.
  bool unifyDimensions(Block &body) {
    using Dim = std::pair<void *, unsigned>;
    llvm::EquivalenceClasses<Dim> classes;
    auto key = [](Value v, unsigned d) { return Dim(v.getAsOpaquePointer(), d); };
    DenseMap<Dim, std::pair<Value, unsigned>> members;
    constexpr int64_t kProbes[] = {1000003, 1000033};
    for (Operation &op : body) {
      if (!isa<kiln::onnx::OnnxDialect>(op.getDialect()) || op.getNumRegions() ||
          isa<kiln::onnx::ConstantOp, kiln::onnx::NoValueOp>(op))
        continue;
      auto shapeFn = cast<kiln::onnx::InferShapesInterface>(op);
      SmallVector<Attribute> values;
      for (Value v : op.getOperands())
        values.push_back(kiln::constantValueOf(v));
      for (Value operand : op.getOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.getType());
        if (!type)
          continue;
        for (unsigned d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          // Result dimensions equal to the probe, for both probes.
          SmallVector<SmallVector<bool>> follows;
          for (int64_t probe : kProbes) {
            SmallVector<int64_t> shape(type.getShape());
            shape[d] = probe;
            operand.setType(RankedTensorType::get(shape, type.getElementType()));
            SmallVector<Type> inferred;
            std::string why;
            bool ok = succeeded(shapeFn.inferResultTypes(values, inferred, why));
            operand.setType(type);
            if (!ok) {
              follows.clear();
              break;
            }
            SmallVector<bool> same;
            for (Type t : inferred) {
              auto ranked = dyn_cast<RankedTensorType>(t);
              for (unsigned e = 0; ranked && e < ranked.getRank(); ++e)
                same.push_back(ranked.getDimSize(e) == probe);
            }
            follows.push_back(same);
          }
          if (follows.size() != 2 || follows[0] != follows[1])
            continue;
          unsigned flat = 0;
          for (Value result : op.getResults()) {
            auto ranked = dyn_cast<RankedTensorType>(result.getType());
            if (!ranked)
              break;
            for (unsigned e = 0; e < ranked.getRank() && flat < follows[0].size(); ++e, ++flat) {
              if (!follows[0][flat])
                continue;
              members[key(operand, d)] = {operand, d};
              members[key(result, e)] = {result, e};
              classes.unionSets(key(operand, d), key(result, e));
            }
          }
        }
      }
    }
    // The static size of each class, where its members agree on one.
    DenseMap<Dim, int64_t> sizeOf;
    for (auto &[k, member] : members) {
      auto type = cast<RankedTensorType>(member.first.getType());
      if (type.isDynamicDim(member.second))
        continue;
      Dim leader = classes.getLeaderValue(k);
      auto [it, inserted] = sizeOf.try_emplace(leader, type.getDimSize(member.second));
      if (!inserted && it->second != type.getDimSize(member.second))
        it->second = ShapedType::kDynamic; // members disagree: leave the class
    }
    bool changed = false;
    for (auto &[k, member] : members) {
      auto type = cast<RankedTensorType>(member.first.getType());
      auto it = sizeOf.find(classes.getLeaderValue(k));
      // Arguments keep their types (the function's signature is the interface).
      if (!type.isDynamicDim(member.second) || it == sizeOf.end() ||
          ShapedType::isDynamic(it->second) || isa<BlockArgument>(member.first))
        continue;
      SmallVector<int64_t> shape(type.getShape());
      shape[member.second] = it->second;
      member.first.setType(RankedTensorType::get(shape, type.getElementType()));
      changed = true;
    }
    return changed;
  }

  /// Ops whose static operands left a result non-static, in this sweep.
  SmallVector<Operation *> deferred;

  LogicalResult contradiction(Operation *op, unsigned i, Type old, Type inferred) {
    return op->emitError() << "output " << i << " of " << op->getName()
                           << " is inferred as " << str(inferred)
                           << " but the model declares " << str(old);
  }

  /// An If decided at run time: its branches are inferred like the main body, and
  /// a result both branches give the same type gets it.
  LogicalResult inferBranches(kiln::onnx::IfOp ifOp) {
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
      Type type = merge(old, thenType);
      if (!type)
        return contradiction(ifOp, i, old, thenType);
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
  FailureOr<SmallVector<Value>> runBody(Block &body, ValueRange args, Operation *at) {
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
  static Value stack(kiln::OnnxBuilder &ob, ArrayRef<Value> parts, int64_t axis) {
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
  LogicalResult replaceUnrolled(Operation *op, ArrayRef<Value> values) {
    for (auto [result, value] : llvm::zip(op->getResults(), values)) {
      if (!merge(result.getType(), value.getType()))
        return contradiction(op, result.getResultNumber(), result.getType(), value.getType());
      result.replaceAllUsesWith(value);
    }
    op->erase();
    return success();
  }

  /// Scan with static shapes: unrolled over the scan axis (and, for Scan-8, over
  /// the batch axis), each step a copy of the body; scan outputs are stacked.
  /// Left alone (the tensor phase reports it) when a shape is not static or
  /// Scan-8 has sequence_lens.
  LogicalResult unrollScan(Operation *scan) {
    bool v8 = isa<kiln::onnx::ScanV8Op>(scan);
    SmallVector<Value> operands(scan->getOperands());
    if (v8) {
      if (!isa<NoneType>(operands.front().getType()))
        return success();
      operands.erase(operands.begin());
    }
    if (!llvm::all_of(operands, [](Value v) { return isStatic(v.getType()); }))
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
          return isStatic(v.getType()) && !isa<NoneType>(v.getType());
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
  static std::optional<int64_t> scalar(Attribute a) {
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
  LogicalResult unrollLoop(kiln::onnx::LoopOp loop, ArrayRef<Attribute> values) {
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
        if (!isStatic(v.getType()) || isa<NoneType>(v.getType()))
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
  LogicalResult unrollBounded(kiln::onnx::LoopOp loop, int64_t bound) {
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
        if (next.getType() != state[k].getType() || !isStatic(next.getType()))
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
        if (!isStatic(v.getType()) || isa<NoneType>(v.getType()))
          return loop.emitError() << "scan output " << i << " of the Loop body has no static shape";
      results.push_back(stack(ob, outs[i], 0));
    }
    return replaceUnrolled(loop, results);
  }

  /// Replaces `ifOp` by the ops of `branch` (which may use values from above) and
  /// visits them.
  LogicalResult inlineBranch(kiln::onnx::IfOp ifOp, Region &branch) {
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
};

} // namespace
