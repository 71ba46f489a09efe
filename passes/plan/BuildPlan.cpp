//===- BuildPlan.cpp - Outline kernels and build the host plan -------------===//
//
// This file implements kiln-build-plan (see Passes.td). Each kiln.kernel becomes
// a private function over memrefs (inputs first, then one buffer per result) whose
// body still computes on tensors: bufferization.to_tensor reads the inputs and
// materialize_in_destination writes the results, so one-shot bufferization later
// writes straight into the caller's buffers. @main_graph becomes a kiln.plan:
// inputs, outputs, weights and arena slices (offsets left to memory planning) and
// one kiln.launch per kernel (stream left to scheduling).
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/plan/Passes.h"
#include "passes/plan/PlanAnalysis.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_BUILDPLAN
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

MemRefType bufferType(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

int64_t byteSize(MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

/// Per kernel result, the kernel input it may be written over (-1: none): the
/// kernel is one all-parallel linalg.generic that reads that input only at the
/// element it writes (the same indexing map), and nothing else reads it.
SmallVector<int64_t> inPlaceCandidates(kiln::KernelOp kernel) {
  SmallVector<int64_t> partners(kernel.getNumResults(), -1);
  Block &body = kernel.getBody().front();
  linalg::GenericOp generic;
  for (Operation &op : body.without_terminator()) {
    if (isa<tensor::EmptyOp, arith::ConstantOp>(op))
      continue;
    if (generic || !isa<linalg::GenericOp>(op))
      return partners;
    generic = cast<linalg::GenericOp>(op);
  }
  if (!generic || generic.getNumReductionLoops() != 0)
    return partners;
  auto yield = cast<kiln::YieldOp>(body.getTerminator());
  for (auto [k, v] : llvm::enumerate(yield.getValues())) {
    auto r = dyn_cast<OpResult>(v);
    if (!r || r.getOwner() != generic || llvm::count(yield.getValues(), v) != 1)
      continue;
    AffineMap outMap = generic.getIndexingMapMatchingResult(r);
    for (OpOperand *in : generic.getDpsInputOperands()) {
      auto arg = dyn_cast<BlockArgument>(in->get());
      if (!arg || arg.getOwner() != &body || !arg.hasOneUse() ||
          generic.getMatchingIndexingMap(in) != outMap || arg.getType() != v.getType() ||
          llvm::is_contained(partners, static_cast<int64_t>(arg.getArgNumber())))
        continue;
      partners[k] = arg.getArgNumber();
      break;
    }
  }
  return partners;
}

func::FuncOp outline(OpBuilder &b, kiln::KernelOp kernel, StringRef name) {
  SmallVector<Type> argTypes;
  for (Value in : kernel.getInputs())
    argTypes.push_back(bufferType(in.getType()));
  for (Type t : kernel.getResultTypes())
    argTypes.push_back(bufferType(t));
  auto func = b.create<func::FuncOp>(kernel.getLoc(), name, b.getFunctionType(argTypes, {}));
  // Public: each kernel is an external symbol of the target's object.
  kiln::KilnDialect::KernelAttrHelper(b.getContext()).setAttr(func, b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  OpBuilder fb = OpBuilder::atBlockEnd(entry);
  IRMapping mapping;
  Block &body = kernel.getBody().front();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    Value t = fb.create<bufferization::ToTensorOp>(
        kernel.getLoc(), arg.getType(), entry->getArgument(i),
        /*restrict=*/true, /*writable=*/false);
    mapping.map(arg, t);
  }
  for (Operation &op : body.without_terminator())
    fb.clone(op, mapping);
  auto yield = cast<kiln::YieldOp>(body.getTerminator());
  unsigned numInputs = kernel.getInputs().size();
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    auto m = fb.create<bufferization::MaterializeInDestinationOp>(
        kernel.getLoc(), TypeRange{}, mapping.lookup(v),
        entry->getArgument(numInputs + i));
    m.setRestrict(true);
    m.setWritable(true);
  }
  fb.create<func::ReturnOp>(kernel.getLoc());
  return func;
}

/// Per value a function returns that a kernel or a branch computes, the first
/// result position it is returned at: the buffer there is where it is written.
DenseMap<Value, unsigned> firstReturns(func::ReturnOp returnOp) {
  DenseMap<Value, unsigned> first;
  for (auto [j, v] : llvm::enumerate(returnOp.getOperands()))
    if (v.getDefiningOp<kiln::KernelOp>() || v.getDefiningOp<kiln::IfOp>())
      first.try_emplace(v, j);
  return first;
}

/// Lays a graph function's kernels into the plan: @main_graph, then, at each
/// kiln.if, both branch functions with their launches and copies guarded by the
/// condition (nested branches add their own guard).
struct PlanBuilder {
  ModuleOp module;
  OpBuilder pb, fb;
  IRMapping buffers;
  /// The branch functions laid out (erased at the end with @main_graph).
  SmallVector<func::FuncOp> laid;

  PlanBuilder(ModuleOp module, OpBuilder pb, OpBuilder fb)
      : module(module), pb(pb), fb(fb) {}

  /// A result's buffer: where it is returned directly (`direct`, null elsewhere),
  /// or an arena slice (empty results get an empty slice).
  using DirectTarget = llvm::function_ref<Value(Value)>;
  Value resultBuffer(Value r, DirectTarget direct) {
    if (Value target = direct(r))
      return target;
    MemRefType type = bufferType(r.getType());
    return pb.create<kiln::SliceOp>(r.getLoc(), type, pb.getI64IntegerAttr(-1),
                                    pb.getI64IntegerAttr(byteSize(type)));
  }

  template <typename OpTy>
  void guard(OpTy op, ArrayRef<Value> guards, ArrayRef<bool> values) {
    if (guards.empty())
      return;
    op.getGuardsMutable().assign(guards);
    op.setGuardValues(values);
  }

  /// The ops of `fn`'s body (its arguments already mapped to buffers).
  LogicalResult lay(func::FuncOp fn, DirectTarget direct, ArrayRef<Value> guards,
                    ArrayRef<bool> values) {
    // Kernel names are per function: those of a branch get its name as a prefix.
    std::string prefix = fn.getName() == "main_graph" ? "" : (fn.getName() + "_").str();
    for (Operation &op : fn.getBody().front().without_terminator()) {
      if (auto c = dyn_cast<arith::ConstantOp>(op)) {
        auto value = dyn_cast<ElementsAttr>(c.getValue());
        if (!value)
          return op.emitError() << "scalar constant outside a kernel";
        buffers.map(c.getResult(),
                    pb.create<kiln::WeightOp>(c.getLoc(), bufferType(c.getType()), value,
                                              pb.getI64IntegerAttr(-1)));
        continue;
      }
      if (auto branch = dyn_cast<kiln::IfOp>(op)) {
        if (failed(layBranches(branch, direct, guards, values)))
          return failure();
        continue;
      }
      auto kernel = dyn_cast<kiln::KernelOp>(op);
      if (!kernel)
        return op.emitError() << "'" << op.getName() << "' outside a kernel cannot be planned";
      // A kernel that produces no elements has nothing to do: its results are
      // empty buffers (slices of size 0 or the caller's empty outputs).
      bool producesNothing = llvm::all_of(kernel.getResultTypes(), [](Type t) {
        return cast<RankedTensorType>(t).getNumElements() == 0;
      });
      if (producesNothing) {
        for (Value r : kernel.getResults())
          buffers.map(r, resultBuffer(r, direct));
        continue;
      }
      std::string name = prefix + kernel.getName().str();
      outline(fb, kernel, name);
      SmallVector<Value> operands;
      for (Value in : kernel.getInputs())
        operands.push_back(buffers.lookup(in));
      for (Value r : kernel.getResults()) {
        Value buffer = resultBuffer(r, direct);
        buffers.map(r, buffer);
        operands.push_back(buffer);
      }
      auto launch =
          pb.create<kiln::LaunchOp>(kernel.getLoc(), name, operands, kernel.getInputs().size());
      launch.setFlops(countFlops(kernel));
      SmallVector<int64_t> inPlace = inPlaceCandidates(kernel);
      if (llvm::any_of(inPlace, [](int64_t i) { return i >= 0; }))
        launch.setInPlace(inPlace);
      guard(launch, guards, values);
    }
    return success();
  }

  /// Both branches of `branch`, each writing the If's results into the same
  /// buffers, guarded by the condition being true (then) or false (else).
  LogicalResult layBranches(kiln::IfOp branch, DirectTarget direct, ArrayRef<Value> outer,
                            ArrayRef<bool> values) {
    SmallVector<Value> targets;
    for (Value r : branch.getResults()) {
      Value buffer = resultBuffer(r, direct);
      buffers.map(r, buffer);
      targets.push_back(buffer);
    }
    SmallVector<Value> guards(outer);
    guards.push_back(buffers.lookup(branch.getCond()));
    FlatSymbolRefAttr refs[] = {branch.getThenBranchAttr(), branch.getElseBranchAttr()};
    bool conditions[] = {true, false};
    for (auto [ref, value] : llvm::zip(refs, conditions)) {
      // The kiln.if verifier checked that it names a function of the If's type.
      auto fn = module.lookupSymbol<func::FuncOp>(ref);
      for (auto [arg, in] : llvm::zip(fn.getArguments(), branch.getInputs()))
        buffers.map(arg, buffers.lookup(in));
      auto returnOp = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
      // What the branch computes and returns is written straight into the If's
      // result buffer.
      DenseMap<Value, unsigned> firstReturn = firstReturns(returnOp);
      auto branchDirect = [&](Value r) -> Value {
        auto it = firstReturn.find(r);
        return it == firstReturn.end() ? Value() : targets[it->second];
      };
      SmallVector<bool> branchValues(values);
      branchValues.push_back(value);
      if (failed(lay(fn, branchDirect, guards, branchValues)))
        return failure();
      for (auto [j, v] : llvm::enumerate(returnOp.getOperands())) {
        auto it = firstReturn.find(v);
        if (it != firstReturn.end() && it->second == j)
          continue;
        auto copy = pb.create<kiln::CopyOp>(returnOp.getLoc(), buffers.lookup(v), targets[j], -1);
        guard(copy, guards, branchValues);
      }
      laid.push_back(fn);
    }
    return success();
  }
};

struct BuildPlanPass : kiln::impl::BuildPlanBase<BuildPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main_graph");
    if (!main) {
      module.emitError() << "no @main_graph to plan";
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPoint(main);
    auto plan = b.create<kiln::PlanOp>(main.getLoc(), "main_graph");
    Block *planBody = new Block();
    plan.getBody().push_back(planBody);
    OpBuilder fb(module.getBodyRegion());
    fb.setInsertionPoint(plan);
    PlanBuilder builder(module, OpBuilder::atBlockEnd(planBody), fb);
    OpBuilder &pb = builder.pb;

    auto returnOp = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    // The ONNX element type of an interface value, where its buffer lost it.
    StringRef elementTypeName = kiln::KilnDialect::ElementTypeAttrHelper::getNameStr();
    auto elementType = [&](TypeAttr onnx, MemRefType buffer) -> TypeAttr {
      return onnx && onnx.getValue() != buffer.getElementType() ? onnx : TypeAttr();
    };
    auto resultName = [&](unsigned j) -> StringAttr {
      if (auto n = main.getResultAttrOfType<StringAttr>(j, "onnx.name"))
        return n;
      return b.getStringAttr("output" + std::to_string(j));
    };
    auto output = [&](Location loc, MemRefType type, unsigned j) -> Value {
      return pb.create<kiln::OutputOp>(
          loc, type, pb.getI64IntegerAttr(j), resultName(j),
          elementType(main.getResultAttrOfType<TypeAttr>(j, elementTypeName), type));
    };
    // What the graph computes and returns is written straight into the caller's
    // output buffer.
    DenseMap<Value, unsigned> directOutput = firstReturns(returnOp);
    auto direct = [&](Value r) -> Value {
      auto it = directOutput.find(r);
      return it == directOutput.end()
                 ? Value()
                 : output(r.getLoc(), bufferType(r.getType()), it->second);
    };

    for (BlockArgument arg : main.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto name = main.getArgAttrOfType<StringAttr>(i, "onnx.name");
      MemRefType type = bufferType(arg.getType());
      builder.buffers.map(
          arg, pb.create<kiln::InputOp>(
                   arg.getLoc(), type, pb.getI64IntegerAttr(i),
                   name ? name : pb.getStringAttr("input" + std::to_string(i)),
                   elementType(main.getArgAttrOfType<TypeAttr>(i, elementTypeName), type)));
    }
    if (failed(builder.lay(main, direct, {}, {})))
      return signalPassFailure();
    // Outputs that are graph inputs, weights or repeated results are copies.
    for (auto [j, v] : llvm::enumerate(returnOp.getOperands())) {
      auto it = directOutput.find(v);
      if (it != directOutput.end() && it->second == j)
        continue;
      Value source = builder.buffers.lookup(v);
      Value target = output(returnOp.getLoc(), cast<MemRefType>(source.getType()), j);
      pb.create<kiln::CopyOp>(returnOp.getLoc(), source, target, -1);
    }
    main.erase();
    for (func::FuncOp fn : builder.laid)
      fn.erase();
  }
};

} // namespace
