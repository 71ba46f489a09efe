//===- SimplifyViews.cpp - Simplify transpose and reshape chains ----------===//
//
// This file implements kiln-simplify-views (see Passes.td). Exporters convert
// layouts back and forth (tf2onnx's NHWC <-> NCHW pairs) and chain reshapes
// (Flatten, Squeeze, Unsqueeze, Reshape); here, in program order:
//   - a Transpose of a Transpose becomes one Transpose of the source with the
//     composed permutation, and a Transpose by the identity goes;
//   - a Transpose that only moves size-1 dimensions becomes a Reshape (unless
//     only Transposes read it: it composes with them);
//   - a reshape-like op (Reshape, Flatten, Squeeze, Unsqueeze) of another becomes
//     one Reshape of the first one's source, and one that changes nothing goes.
// Ops left without users are removed by the canonicalizer after the phase.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/OnnxBuilder.h"

namespace kiln {
#define GEN_PASS_DEF_SIMPLIFYVIEWS
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

RankedTensorType staticType(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

bool isReshapeLike(Operation *op) {
  if (!op || op->getNumResults() != 1)
    return false;
  std::string name = kiln::onnx::onnxOperatorName(op);
  return name == "Reshape" || name == "Flatten" || name == "Squeeze" || name == "Unsqueeze";
}

/// The permutation of Transpose `op` (reversed dimensions by default).
SmallVector<int64_t> permutationOf(kiln::onnx::TransposeOp op) {
  SmallVector<int64_t> perm;
  if (auto attr = op.getPerm()) {
    for (Attribute a : *attr)
      perm.push_back(cast<IntegerAttr>(a).getInt());
    return perm;
  }
  int64_t rank = kiln::rankOf(op.getData());
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  return perm;
}

/// The value `op`'s result simplifies to, or null when it stays.
Value simplify(Operation *op) {
  Value result = op->getResult(0);
  RankedTensorType type = staticType(result);
  if (!type)
    return nullptr;
  if (auto transpose = dyn_cast<kiln::onnx::TransposeOp>(op)) {
    Value source = transpose.getData();
    SmallVector<int64_t> perm = permutationOf(transpose);
    if (auto inner = source.getDefiningOp<kiln::onnx::TransposeOp>()) {
      // out[i] = mid[perm[i]] = in[innerPerm[perm[i]]].
      SmallVector<int64_t> innerPerm = permutationOf(inner);
      for (int64_t &p : perm)
        p = innerPerm[p];
      source = inner.getData();
    }
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return source.getType() == type ? source : nullptr;
    // Only size-1 dimensions move: the non-unit ones keep their order.
    SmallVector<int64_t> nonUnit;
    for (auto [i, p] : llvm::enumerate(perm))
      if (type.getDimSize(i) != 1)
        nonUnit.push_back(p);
    kiln::OnnxBuilder b(op);
    // (A Transpose read only by Transposes stays one, to compose with them.)
    bool composes = llvm::all_of(result.getUsers(), [](Operation *user) {
      return isa<kiln::onnx::TransposeOp>(user);
    });
    if (llvm::is_sorted(nonUnit) && staticType(source) && !composes)
      return b.reshape(source, type.getShape());
    if (source == transpose.getData())
      return nullptr;
    return b.transpose(source, perm);
  }
  if (!isReshapeLike(op))
    return nullptr;
  Value source = op->getOperand(0);
  while (isReshapeLike(source.getDefiningOp()))
    source = source.getDefiningOp()->getOperand(0);
  if (source.getType() == type)
    return source;
  if (source == op->getOperand(0) || !staticType(source))
    return nullptr;
  kiln::OnnxBuilder b(op);
  return b.reshape(source, type.getShape());
}

struct SimplifyViewsPass : kiln::impl::SimplifyViewsBase<SimplifyViewsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<kiln::onnx::TransposeOp>(op) || isReshapeLike(op))
        ops.push_back(op);
    });
    // Program order: a chain collapses onto its first source, link by link.
    for (Operation *op : ops) {
      Value simpler = simplify(op);
      if (!simpler)
        continue;
      if (simpler.getType() != op->getResult(0).getType()) {
        simpler.getDefiningOp()->erase();
        continue;
      }
      op->getResult(0).replaceAllUsesWith(simpler);
      op->erase();
    }
  }
};

} // namespace
