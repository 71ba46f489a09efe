//===- StageBuilder.cpp - Build the gpu.funcs of one kernel ---------------===//
//
// This file implements StageBuilder (StageBuilder.h): preparing a kernel function
// for mapping, and the pieces of a stage every strategy uses.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/StageBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln {

namespace {
/// Every buffer argument starts 16-byte aligned (see startStage).
constexpr uint32_t kArgumentAlignment = 16;
/// Kernel-internal buffers start at multiples of this in the scratch argument.
constexpr int64_t kScratchAlign = 256;
} // namespace

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Row-major delinearization of `linear` over `sizes`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> idx(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = linear;
      break;
    }
    Value size = b.create<arith::ConstantIndexOp>(loc, sizes[i]);
    idx[i] = b.create<arith::RemUIOp>(loc, linear, size);
    linear = b.create<arith::DivUIOp>(loc, linear, size);
  }
  return idx;
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

SmallVector<int64_t> sizesOf(ArrayRef<int64_t> ranges, ArrayRef<unsigned> dims) {
  SmallVector<int64_t> s;
  for (unsigned d : dims)
    s.push_back(ranges[d]);
  return s;
}

LoopDims::LoopDims(linalg::GenericOp op) : ranges(op.getStaticLoopRanges()) {
    for (auto [d, t] : llvm::enumerate(op.getIteratorTypesArray()))
      (t == utils::IteratorType::parallel ? par : red).push_back(d);
    for (unsigned d : par)
      parSizes.push_back(ranges[d]);
    for (unsigned d : red)
      redSizes.push_back(ranges[d]);
    outputs = product(parSizes);
    length = product(redSizes);
  }

LogicalResult StageBuilder::prepare() {
  IRRewriter rewriter(kernel.getContext());
  // Generalize named ops; collect stages and the prelude (pure scalar code,
  // views, loads of run-time indices, allocations).
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBody().front())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (isa<func::ReturnOp, memref::DeallocOp>(op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (auto map = dyn_cast<linalg::MapOp>(op)) {
        // linalg.map: elementwise over identity maps; its mapper takes no output.
        rewriter.setInsertionPoint(op);
        unsigned rank = map.getInit().getType().getRank();
        SmallVector<AffineMap> maps(map.getInputs().size() + 1,
                                    rewriter.getMultiDimIdentityMap(rank));
        SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
        generic = rewriter.create<linalg::GenericOp>(
            op->getLoc(), TypeRange{}, map.getInputs(), ValueRange{map.getInit()}, maps,
            iters);
        Block &mapper = map.getMapper().front();
        Block *body = rewriter.createBlock(&generic.getRegion());
        IRMapping bodyMap;
        for (BlockArgument a : mapper.getArguments())
          bodyMap.map(a, body->addArgument(a.getType(), a.getLoc()));
        Type outElem = cast<ShapedType>(map.getInit().getType()).getElementType();
        body->addArgument(outElem, op->getLoc());
        rewriter.setInsertionPointToEnd(body);
        for (Operation &inner : mapper.without_terminator())
          rewriter.clone(inner, bodyMap);
        SmallVector<Value> yields;
        for (Value v : mapper.getTerminator()->getOperands())
          yields.push_back(bodyMap.lookupOrDefault(v));
        rewriter.create<linalg::YieldOp>(op->getLoc(), yields);
        rewriter.eraseOp(op);
      }
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, linalgOp);
        if (failed(g))
          return op->emitError("kernel ") << kernel.getName() << ": '"
                                          << op->getName() << "' has no cuda mapping";
        generic = *g;
      }
      if (!generic.hasPureBufferSemantics())
        return op->emitError("kernel ") << kernel.getName() << ": not bufferized";
      stageOps.push_back(generic);
      continue;
    }
    if (isa<memref::AllocOp, memref::LoadOp>(op) || isPure(op)) {
      if (op->getNumRegions() != 0)
        return op->emitError("kernel ") << kernel.getName() << ": '" << op->getName()
                                        << "' at kernel level has no cuda mapping";
      prelude.push_back(op);
      continue;
    }
    return op->emitError("kernel ") << kernel.getName() << ": '" << op->getName()
                                    << "' at kernel level has no cuda mapping";
  }

  // Fold a fill into the first later stage that touches its buffer when that
  // stage is a reduction writing (not reading) it: the fill's value becomes the
  // reduction's initial value.
  auto isFill = [](linalg::GenericOp op) {
    return op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
           !isa<ShapedType>(op.getDpsInputOperand(0)->get().getType()) &&
           op.getNumReductionLoops() == 0;
  };
  SmallVector<linalg::GenericOp> kept;
  for (size_t i = 0; i < stageOps.size(); ++i) {
    linalg::GenericOp op = stageOps[i];
    bool folded = false;
    if (isFill(op)) {
      Value buffer = op.getDpsInitOperand(0)->get();
      auto touches = [&](linalg::GenericOp s) {
        return llvm::is_contained(s->getOperands(), buffer);
      };
      auto next = std::find_if(stageOps.begin() + i + 1, stageOps.end(), touches);
      if (next != stageOps.end() && next->getNumReductionLoops() > 0 &&
          !llvm::is_contained(next->getDpsInputs(), buffer)) {
        for (auto [k, init] : llvm::enumerate(next->getDpsInits()))
          if (init == buffer) {
            foldedInit[{next->getOperation(), static_cast<unsigned>(k)}] =
                op.getDpsInputOperand(0)->get();
            folded = true;
          }
      }
    }
    if (!folded)
      kept.push_back(op);
  }
  stageOps = kept;

  // Buffers the kernel allocates and writes become scratch views.
  for (Operation *op : prelude) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    // Only buffers a stage writes need memory; the others only give a shape
    // (a pooling window) and are dropped as dead code.
    if (!alloc || llvm::none_of(stageOps, [&](linalg::GenericOp s) {
          return llvm::any_of(s.getDpsInits(), [&](Value v) {
            Operation *root = v.getDefiningOp();
            while (root && isa<ViewLikeOpInterface>(root))
              root = cast<ViewLikeOpInterface>(root).getViewSource().getDefiningOp();
            return root == op;
          });
        }))
      continue;
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitError("kernel ") << kernel.getName()
                                      << ": dynamic scratch buffers have no cuda mapping";
    scratchOffsets[op] = scratch;
    int64_t bytes = type.getNumElements() *
                    ((type.getElementTypeBitWidth() + 7) / 8);
    scratch += ceilDiv(bytes, kScratchAlign) * kScratchAlign;
  }
  return success();
}

gpu::GPUFuncOp StageBuilder::startStage(OpBuilder &b, ArrayRef<int64_t> block) {
  Location loc = kernel.getLoc();
  SmallVector<Type> args(kernel.getArgumentTypes());
  if (scratch > 0)
    args.push_back(MemRefType::get({scratch}, b.getI8Type()));
  b.setInsertionPoint(gpuModule.getBody()->getTerminator());
  std::string name = kernel.getName().str();
  // Unique per stage: kN_sI.
  int stageIndex = 0;
  while (gpuModule.lookupSymbol(name + "_s" + std::to_string(stageIndex)))
    ++stageIndex;
  auto fn = b.create<gpu::GPUFuncOp>(loc, name + "_s" + std::to_string(stageIndex),
                                     b.getFunctionType(args, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SmallVector<int32_t> block32(block.begin(), block.end());
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(block32));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);
  mapping.clear();
  for (auto [from, to] : llvm::zip(kernel.getArguments(), entry.getArguments()))
    mapping.map(from, to);
  // Every buffer argument starts 16-byte aligned: arena slices and weights at 64-byte
  // offsets, allocations from the driver, caller pointers checked by the runtime. Told
  // to LLVM, this lets it merge a thread's adjacent accesses into 16-byte ones.
  for (BlockArgument arg : entry.getArguments())
    b.create<memref::AssumeAlignmentOp>(loc, arg, kArgumentAlignment);
  for (Operation *op : prelude) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op); alloc && scratchOffsets.count(op)) {
      Value offset = cIndex(b, loc, scratchOffsets[op]);
      mapping.map(alloc.getResult(),
                  b.create<memref::ViewOp>(loc, alloc.getType(), entry.getArguments().back(),
                                           offset, ValueRange{}));
      continue;
    }
    b.clone(*op, mapping);
  }
  return fn;
}

void StageBuilder::finishStage(OpBuilder &b, gpu::GPUFuncOp fn, ArrayRef<int64_t> grid,
                               ArrayRef<int64_t> block, bool sync) {
  b.setInsertionPointToEnd(&fn.getBody().front());
  b.create<gpu::ReturnOp>(fn.getLoc());
  stages.push_back(GpuStageAttr::get(fn.getContext(), fn.getNameAttr(), grid, block,
                                     b.getBoolAttr(sync)));
}

void StageBuilder::storeOutput(OpBuilder &b, linalg::GenericOp op, unsigned outIndex,
                               Value value, ValueRange loopIdx) {
  OpOperand *out = op.getDpsInitOperand(outIndex);
  auto idx = affine::expandAffineMap(b, op.getLoc(), op.getMatchingIndexingMap(out), loopIdx);
  b.create<memref::StoreOp>(op.getLoc(), value, mapping.lookupOrDefault(out->get()), *idx);
}

Value StageBuilder::loadOperand(OpBuilder &b, linalg::GenericOp op, OpOperand &operand,
                                ValueRange loopIdx) {
  Location loc = op.getLoc();
  Value source = mapping.lookupOrDefault(operand.get());
  if (!isa<MemRefType>(source.getType()))
    return source; // a scalar operand (fill value)
  AffineMap map = op.getMatchingIndexingMap(&operand);
  std::optional<SmallVector<Value, 8>> idx =
      affine::expandAffineMap(b, loc, map, loopIdx);
  return b.create<memref::LoadOp>(loc, source, *idx);
}

Value StageBuilder::initialValue(OpBuilder &b, linalg::GenericOp op, unsigned outIndex,
                                 ValueRange loopIdx) {
  auto it = foldedInit.find({op.getOperation(), outIndex});
  if (it != foldedInit.end())
    return mapping.lookupOrDefault(it->second);
  return loadOperand(b, op, *op.getDpsInitOperand(outIndex), loopIdx);
}

SmallVector<Value> StageBuilder::applyBody(OpBuilder &b, linalg::GenericOp op,
                                           ValueRange loopIdx, ValueRange outs,
                                           Operation *skip) {
  Block &body = op.getRegion().front();
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(in->getOperandNumber());
    if (!arg.use_empty())
      mapping.map(arg, loadOperand(b, op, *in, loopIdx));
  }
  for (auto [i, v] : llvm::enumerate(outs))
    if (v)
      mapping.map(body.getArgument(op.getNumDpsInputs() + i), v);
  for (Operation &inner : body.without_terminator()) {
    if (&inner == skip)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loopIdx[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

} // namespace kiln
