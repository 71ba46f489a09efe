//===- HostParallel.cpp - Host kernels on every core -------------------===//
//
// This file implements kiln-host-parallel (see Passes.td): each kernel's top-level
// scf.parallel loops with enough work are outlined into a function of a range of
// their leading iterations, which the kernel hands to the runtime's thread pool
// (kiln_parallel_for, runtime/include/kiln/runtime/ThreadPool.h).
//
// The outlined function's captured buffers travel as pointers in an array: the
// kernel stores each buffer's aligned pointer, the function loads it and rebuilds
// the buffer's descriptor from its static type (shape, strides and offset are all
// static on the host), so nothing but pointers crosses the call. A time loop's
// step, which views inside its body depend on, travels in the same array as an
// integer; the views are cloned. Loops directly in a time loop's body are outlined
// too, one hand-off per step.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_HOSTPARALLEL
#include "codegen/host/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr StringLiteral kParallelFor = "kiln_parallel_for";
// Iterations of the outlined range to aim for: enough chunks for the pool's threads
// to share evenly, few enough that each still runs whole inner loops.
constexpr int64_t kTargetIterations = 64;
constexpr int64_t kWorkCap = int64_t(1) << 50;

int64_t saturatingMul(int64_t a, int64_t b) {
  return (a == 0 || b <= kWorkCap / a) ? a * b : kWorkCap;
}

/// Trip counts of a loop's dimensions; nullopt where a bound is not constant.
std::optional<SmallVector<int64_t>> tripCounts(ValueRange lbs, ValueRange ubs,
                                               ValueRange steps) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    trips.push_back(*u > *l ? (*u - *l + *s - 1) / *s : 0);
  }
  return trips;
}

/// Operations a region executes, loops counted by their trip counts (a loop with
/// bounds known only at run time counted once).
int64_t workOf(Region &region);
int64_t workOf(Operation *op) {
  int64_t trips = 1;
  if (auto f = dyn_cast<scf::ForOp>(op)) {
    if (auto t = tripCounts(f.getLowerBound(), f.getUpperBound(), f.getStep()))
      trips = (*t)[0];
  } else if (auto p = dyn_cast<scf::ParallelOp>(op)) {
    if (auto t = tripCounts(p.getLowerBound(), p.getUpperBound(), p.getStep()))
      for (int64_t n : *t)
        trips = saturatingMul(trips, n);
  }
  int64_t inner = 0;
  for (Region &r : op->getRegions())
    inner = std::min(kWorkCap, inner + workOf(r));
  return saturatingMul(trips, std::max<int64_t>(inner, 1));
}
int64_t workOf(Region &region) {
  int64_t work = 0;
  for (Block &block : region)
    for (Operation &op : block)
      work = std::min(kWorkCap, work + workOf(&op));
  return work;
}

/// A buffer that can cross the call as its aligned pointer: its descriptor follows
/// from its type.
bool passableAsPointer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getMemorySpace())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return !ShapedType::isDynamic(offset) && llvm::none_of(strides, ShapedType::isDynamic);
}

/// What the outlined body needs from the kernel: buffers passed as pointers,
/// index values nothing here computes (a time loop's step) passed as integers, and
/// side-effect-free operations (constants, index arithmetic, views) cloned.
struct Captures {
  llvm::SetVector<Value> pointers, indices;
  llvm::SetVector<Operation *> clones;

  bool add(Value v) {
    if (pointers.contains(v) || indices.contains(v))
      return true;
    Operation *def = v.getDefiningOp();
    if (def && clones.contains(def))
      return true;
    if (passableAsPointer(v)) {
      pointers.insert(v);
      return true;
    }
    if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def)) {
      if (!v.getType().isIndex())
        return false;
      indices.insert(v);
      return true;
    }
    for (Value operand : def->getOperands())
      if (!add(operand))
        return false;
    clones.insert(def);
    return true;
  }
};

class Outliner {
public:
  Outliner(ModuleOp module, int64_t minWork)
      : module(module), minWork(minWork), converter(module.getContext()) {}

  /// Outlines `loop` (a top-level loop of `kernel`) if it is worth it.
  void run(func::FuncOp kernel, scf::ParallelOp loop, int &index);

private:
  func::FuncOp parallelFor();

  ModuleOp module;
  int64_t minWork;
  LLVMTypeConverter converter;
  func::FuncOp declaration;
};

func::FuncOp Outliner::parallelFor() {
  if (declaration)
    return declaration;
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  auto body = FunctionType::get(ctx, {ptr, i64, i64}, {});
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  declaration = b.create<func::FuncOp>(module.getLoc(), kParallelFor,
                                       FunctionType::get(ctx, {body, ptr, i64}, {}));
  declaration.setPrivate();
  return declaration;
}

void Outliner::run(func::FuncOp kernel, scf::ParallelOp loop, int &index) {
  if (loop.getNumResults() != 0)
    return;
  std::optional<SmallVector<int64_t>> trips =
      tripCounts(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
  if (!trips || llvm::is_contained(*trips, 0) || workOf(loop) < minWork)
    return;
  // The range: the leading dimensions of more than one iteration, as many as give
  // kTargetIterations, leaving the innermost one as a whole loop to vectorize
  // unless it is the only one.
  SmallVector<unsigned> dims, ranged;
  for (auto [d, n] : llvm::enumerate(*trips))
    if (n > 1)
      dims.push_back(d);
  if (dims.empty())
    return;
  int64_t iterations = 1;
  for (unsigned d : dims) {
    if (!ranged.empty() && (iterations >= kTargetIterations || ranged.size() + 1 == dims.size()))
      break;
    ranged.push_back(d);
    iterations *= (*trips)[d];
  }
  Captures captures;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(loop.getRegion(), above);
  for (Value v : above)
    if (!captures.add(v))
      return;

  MLIRContext *ctx = module.getContext();
  Location loc = loop.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  func::FuncOp callee = parallelFor();
  auto bodyType = cast<FunctionType>(callee.getFunctionType().getInput(0));

  // The outlined body: fn(args, begin, end).
  OpBuilder mb(ctx);
  mb.setInsertionPointAfter(kernel);
  auto body = mb.create<func::FuncOp>(
      loc, (kernel.getName() + "_par" + std::to_string(index++)).str(), bodyType);
  body.setPrivate();
  Block *entry = body.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(captures.pointers)) {
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, ptr, entry->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value p = b.create<LLVM::LoadOp>(loc, ptr, slot);
    auto type = cast<MemRefType>(v.getType());
    Value descriptor = MemRefDescriptor::fromStaticShape(b, loc, converter, type, p);
    map.map(v, b.create<UnrealizedConversionCastOp>(loc, type, descriptor).getResult(0));
  }
  for (auto [i, v] : llvm::enumerate(captures.indices)) {
    Value slot = b.create<LLVM::GEPOp>(
        loc, ptr, ptr, entry->getArgument(0),
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(captures.pointers.size() + i)});
    Value word = b.create<LLVM::PtrToIntOp>(loc, i64, b.create<LLVM::LoadOp>(loc, ptr, slot));
    map.map(v, b.create<arith::IndexCastOp>(loc, b.getIndexType(), word));
  }
  SmallVector<Operation *> clones(captures.clones.begin(), captures.clones.end());
  llvm::sort(clones, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *op : clones)
    b.clone(*op, map);
  auto constant = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value begin = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(1));
  Value end = b.create<arith::IndexCastOp>(loc, b.getIndexType(), entry->getArgument(2));
  auto range = b.create<scf::ForOp>(loc, begin, end, constant(1));
  b.setInsertionPointToStart(range.getBody());
  // Each dimension's induction variable: lower bound + position * step, the
  // positions of the ranged dimensions unravelled from the range's index.
  SmallVector<Value> ivs(trips->size());
  auto bound = [&](unsigned d, int64_t position) -> Value {
    return constant(*getConstantIntValue(loop.getLowerBound()[d]) +
                    position * *getConstantIntValue(loop.getStep()[d]));
  };
  auto ivAt = [&](unsigned d, Value position) -> Value {
    Value step = constant(*getConstantIntValue(loop.getStep()[d]));
    return b.create<arith::AddIOp>(loc, bound(d, 0),
                                   b.create<arith::MulIOp>(loc, position, step));
  };
  for (auto [d, n] : llvm::enumerate(*trips))
    if (n == 1)
      ivs[d] = bound(d, 0);
  Value rest = range.getInductionVar();
  for (unsigned k = ranged.size(); k-- > 0;) {
    unsigned d = ranged[k];
    if (k == 0) {
      ivs[d] = ivAt(d, rest);
      break;
    }
    Value n = constant((*trips)[d]);
    ivs[d] = ivAt(d, b.create<arith::RemUIOp>(loc, rest, n));
    rest = b.create<arith::DivUIOp>(loc, rest, n);
  }
  SmallVector<Value> lbs, ubs, steps;
  SmallVector<unsigned> inner(dims.begin() + ranged.size(), dims.end());
  for (unsigned d : inner) {
    lbs.push_back(bound(d, 0));
    ubs.push_back(bound(d, (*trips)[d]));
    steps.push_back(constant(*getConstantIntValue(loop.getStep()[d])));
  }
  if (!inner.empty()) {
    auto nest = b.create<scf::ParallelOp>(loc, lbs, ubs, steps);
    for (auto [d, iv] : llvm::zip(inner, nest.getInductionVars()))
      ivs[d] = iv;
    b.setInsertionPointToStart(nest.getBody());
  }
  map.map(loop.getInductionVars(), ivs);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  b.setInsertionPointToEnd(entry);
  b.create<func::ReturnOp>(loc);

  // The kernel: the pointers (then the indices) into an array on its stack, then
  // the call.
  OpBuilder kb(loop);
  Value args;
  int64_t slots = captures.pointers.size() + captures.indices.size();
  if (slots == 0) {
    args = kb.create<LLVM::ZeroOp>(loc, ptr);
  } else {
    OpBuilder ab = OpBuilder::atBlockBegin(&kernel.getBody().front());
    Value count = ab.create<LLVM::ConstantOp>(loc, i64, ab.getI64IntegerAttr(slots));
    args = ab.create<LLVM::AllocaOp>(loc, ptr, ptr, count);
  }
  auto store = [&](int64_t i, Value word) {
    Value p = kb.create<LLVM::IntToPtrOp>(loc, ptr, kb.create<arith::IndexCastOp>(loc, i64, word));
    Value slot = kb.create<LLVM::GEPOp>(loc, ptr, ptr, args,
                                        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    kb.create<LLVM::StoreOp>(loc, p, slot);
  };
  for (auto [i, v] : llvm::enumerate(captures.pointers))
    store(i, kb.create<memref::ExtractAlignedPointerAsIndexOp>(loc, v));
  for (auto [i, v] : llvm::enumerate(captures.indices))
    store(captures.pointers.size() + i, v);
  Value fn = kb.create<func::ConstantOp>(loc, bodyType, SymbolRefAttr::get(body));
  Value n = kb.create<LLVM::ConstantOp>(loc, i64, kb.getI64IntegerAttr(iterations));
  kb.create<func::CallOp>(loc, callee, ValueRange{fn, args, n});
  loop.erase();
}

struct HostParallelPass : kiln::impl::HostParallelBase<HostParallelPass> {
  using HostParallelBase::HostParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        kernels.push_back(f);
    Outliner outliner(module, minWork);
    for (func::FuncOp kernel : kernels) {
      Block &top = kernel.getBody().front();
      SmallVector<scf::ParallelOp> loops(top.getOps<scf::ParallelOp>());
      // The loops a time loop (a recurrent op's steps) runs every step.
      for (auto timeLoop : top.getOps<scf::ForOp>())
        llvm::append_range(loops, timeLoop.getBody()->getOps<scf::ParallelOp>());
      int index = 0;
      for (scf::ParallelOp loop : loops)
        outliner.run(kernel, loop, index);
    }
  }
};

} // namespace
