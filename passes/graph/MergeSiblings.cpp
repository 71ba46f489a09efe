//===- MergeSiblings.cpp - Merge MatMuls that read the same input ---------===//
//
// This file implements kiln-merge-siblings (see Passes.td): MatMuls that multiply
// one tensor by different constant 2-D weights (attention's Q, K and V
// projections, as exporters write separate Linear layers) become one MatMul by
// the weights concatenated along N, and each result a Slice of it (a view: no
// copy). When every sibling's only user adds a constant bias along N, the biases
// are concatenated too and added once. One launch instead of three, the input
// read once.
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxDialect.h"
#include "passes/graph/Passes.h"
#include "passes/graph/EvaluateOnnx.h"
#include "passes/graph/OnnxBuilder.h"

#include "llvm/ADT/MapVector.h"

namespace kiln {
#define GEN_PASS_DEF_MERGESIBLINGS
#include "passes/graph/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A MatMul of the shared input by a constant [K, N] weight, and its bias Add.
struct Sibling {
  kiln::onnx::MatMulOp matmul;
  std::vector<double> weight;
  int64_t n = 0;
  Operation *biasAdd = nullptr;
  std::vector<double> bias;
};

std::optional<Sibling> siblingOf(kiln::onnx::MatMulOp mm) {
  auto w = dyn_cast<RankedTensorType>(mm.getB().getType());
  auto y = dyn_cast<RankedTensorType>(mm.getY().getType());
  if (!w || w.getRank() != 2 || !w.hasStaticShape() || !y || !y.hasStaticShape() ||
      !isa<FloatType>(w.getElementType()) || kiln::rankOf(mm.getA()) < 2)
    return std::nullopt;
  if (!kiln::constantValueOf(mm.getB()))
    return std::nullopt;
  Sibling s{mm, {}, w.getDimSize(1)};
  // A bias: the only user adds a constant that varies along N alone.
  if (mm.getY().hasOneUse()) {
    Operation *user = *mm.getY().getUsers().begin();
    if (isa<kiln::onnx::AddOp>(user) && user->getResult(0).getType() == y) {
      Value other = user->getOperand(0) == mm.getY() ? user->getOperand(1) : user->getOperand(0);
      auto bt = dyn_cast<RankedTensorType>(other.getType());
      std::optional<std::vector<double>> b = kiln::floatValuesOf(other);
      if (bt && b && b->size() == static_cast<size_t>(s.n) &&
          llvm::all_of(bt.getShape().drop_back(), [](int64_t d) { return d == 1; }) &&
          bt.getRank() >= 1 && bt.getShape().back() == s.n) {
        s.biasAdd = user;
        s.bias = std::move(*b);
      }
    }
  }
  return s;
}

/// Merges `group` (two or more siblings reading one input) into one MatMul.
void merge(MutableArrayRef<Sibling> group) {
  Operation *first = group.front().matmul;
  for (Sibling &s : group)
    if (s.matmul->isBeforeInBlock(first))
      first = s.matmul;
  int64_t k = cast<RankedTensorType>(group.front().matmul.getB().getType()).getDimSize(0);
  int64_t total = 0;
  for (const Sibling &s : group)
    total += s.n;
  std::vector<double> weight(k * total);
  int64_t col = 0;
  for (const Sibling &s : group) {
    for (int64_t r = 0; r < k; ++r)
      for (int64_t j = 0; j < s.n; ++j)
        weight[r * total + col + j] = s.weight[r * s.n + j];
    col += s.n;
  }
  Type elem = kiln::elementOf(group.front().matmul.getB());
  bool biased = llvm::all_of(group, [](const Sibling &s) { return s.biasAdd != nullptr; });
  kiln::OnnxBuilder b(first);
  Value w = b.floats(RankedTensorType::get({k, total}, elem), weight, "merged_weight");
  Value y = b.create("MatMul", {group.front().matmul.getA(), w}, elem);
  if (biased) {
    std::vector<double> bias;
    for (const Sibling &s : group)
      llvm::append_range(bias, s.bias);
    y = b.binary("Add", y, b.floats(RankedTensorType::get({total}, elem), bias, "merged_bias"));
  }
  int64_t axis = kiln::rankOf(y) - 1, start = 0;
  SmallVector<Value> parts; // (all built before `first` goes)
  for (Sibling &s : group) {
    parts.push_back(b.slice(y, axis, start, start + s.n));
    start += s.n;
  }
  for (auto [s, part] : llvm::zip(group, parts)) {
    Operation *replaced = biased ? s.biasAdd : s.matmul.getOperation();
    replaced->getResult(0).replaceAllUsesWith(part);
    if (biased)
      replaced->erase();
    s.matmul->erase();
  }
}

struct MergeSiblingsPass : kiln::impl::MergeSiblingsBase<MergeSiblingsPass> {
  void runOnOperation() override {
    // Siblings: one input, one block.
    llvm::MapVector<std::pair<Value, Block *>, SmallVector<Sibling>> byInput;
    getOperation().walk([&](kiln::onnx::MatMulOp mm) {
      if (std::optional<Sibling> s = siblingOf(mm))
        byInput[{mm.getA(), mm->getBlock()}].push_back(std::move(*s));
    });
    for (auto &[input, siblings] : byInput) {
      if (siblings.size() < 2)
        continue;
      // The weights are read only now: most MatMuls have no sibling.
      bool read = llvm::all_of(siblings, [](Sibling &s) {
        std::optional<std::vector<double>> values = kiln::floatValuesOf(s.matmul.getB());
        if (values)
          s.weight = std::move(*values);
        return values.has_value();
      });
      if (read)
        merge(siblings);
    }
  }
};

} // namespace
