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
      if (failed(sweep(llvm::to_vector(llvm::make_pointer_range(body))))) {
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
    if (staticOperands && op->getNumRegions() == 0)
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        if (!isStatic(op->getResult(i).getType()) && !op->getResult(i).use_empty())
          return op->emitError()
                 << "output " << i << " of " << op->getName()
                 << " has a shape that depends on run-time values ("
                 << str(op->getResult(i).getType())
                 << "); freeze the inputs it depends on with --input-value";
    return success();
  }

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
    return success();
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
