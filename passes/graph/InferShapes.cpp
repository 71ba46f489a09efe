//===- InferShapes.cpp - Kiln's shape inference and constant folding ------===//
//
// This file implements kiln-infer-shapes (see Passes.td). One forward sweep per
// function: fold (EvaluateOnnx.h), refine the result types with the op's shape
// function, or hand If, Loop and Scan to the graph's control flow (ControlFlow.h),
// which sweeps their bodies with this pass. Types only ever get more precise: a
// dimension the importer knew (from the model's declared types) is kept where the
// shape function cannot tell, and a contradiction is an error.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/ControlFlow.h"
#include "passes/graph/InferShapes.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_INFERSHAPES
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

bool isStaticType(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return isa<NoneType>(t) || (ranked && ranked.hasStaticShape());
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

Type mergeTypes(Type old, Type inferred) {
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

LogicalResult typeContradiction(Operation *op, unsigned i, Type old, Type inferred) {
  return op->emitError() << "output " << i << " of " << op->getName() << " is inferred as "
                         << typeString(inferred) << " but the model declares "
                         << typeString(old);
}

} // namespace kiln

namespace {

using kiln::isStaticType;
using kiln::mergeTypes;
using kiln::typeContradiction;
using kiln::typeString;

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
          if (!isStaticType(op->getResult(i).getType()) && !op->getResult(i).use_empty()) {
            // Ops whose output size is data-dependent whatever the shapes: only a
            // declared output type fixes it.
            static const llvm::StringSet<> dataSized{"NonZero", "Compress", "Unique",
                                                      "NonMaxSuppression"};
            std::string name = kiln::onnx::onnxOperatorName(op);
            op->emitError() << "output " << i << " of " << op->getName()
                            << " has a shape that depends on run-time values ("
                            << typeString(op->getResult(i).getType()) << "); "
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
          return controlFlow().inlineBranch(ifOp, cond.getValues<bool>()[0]
                                                      ? ifOp.getThenBranch()
                                                      : ifOp.getElseBranch());
      return controlFlow().inferBranches(ifOp);
    }

    if (isa<kiln::onnx::ScanOp, kiln::onnx::ScanV8Op>(op))
      return controlFlow().unrollScan(op);
    if (auto loop = dyn_cast<kiln::onnx::LoopOp>(op))
      return controlFlow().unrollLoop(loop, values);

    if (DenseElementsAttr folded = kiln::evaluateOnnxOp(op, values)) {
      Type old = op->getResult(0).getType();
      if (!mergeTypes(old, folded.getType()))
        return typeContradiction(op, 0, old, folded.getType());
      OpBuilder b(op);
      auto constant = b.create<kiln::onnx::ConstantOp>(op->getLoc(),
                                                       TypeRange{folded.getType()},
                                                       ValueRange{});
      constant.setValueAttr(folded);
      op->getResult(0).replaceAllUsesWith(constant.getResult());
      op->erase();
      return success();
    }

    bool staticOperands = llvm::all_of(op->getOperandTypes(), isStaticType);
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
      Type type = mergeTypes(old, inferred[i]);
      if (!type)
        return typeContradiction(op, i, old, inferred[i]);
      op->getResult(i).setType(type);
    }
    // A result left non-static by static operands depends on run-time values: an
    // error unless a declared type downstream pins it (unifyDimensions); checked
    // after the sweep.
    if (staticOperands && op->getNumRegions() == 0)
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        if (!isStaticType(op->getResult(i).getType()) && !op->getResult(i).use_empty()) {
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

  /// If, Loop and Scan, whose bodies this pass's sweep visits.
  kiln::GraphControlFlow controlFlow() {
    return kiln::GraphControlFlow(
        [this](ArrayRef<Operation *> ops) { return sweep(ops); });
  }

};

} // namespace
