//===- StageBuilder.cpp - Build the gpu.funcs of one kernel ---------------===//
//
// This file implements StageBuilder (StageBuilder.h): preparing a kernel function
// for mapping, and the pieces of a stage every strategy uses.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/StageBuilder.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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

Value addIndex(OpBuilder &b, Location loc, Value x, int64_t c) {
  return c ? b.create<arith::AddIOp>(loc, x, cIndex(b, loc, c)).getResult() : x;
}

Value mulIndex(OpBuilder &b, Location loc, Value x, int64_t c) {
  return b.create<arith::MulIOp>(loc, x, cIndex(b, loc, c));
}

Value divIndex(OpBuilder &b, Location loc, Value x, int64_t c) {
  return b.create<arith::DivUIOp>(loc, x, cIndex(b, loc, c));
}

Value remIndex(OpBuilder &b, Location loc, Value x, int64_t c) {
  return b.create<arith::RemUIOp>(loc, x, cIndex(b, loc, c));
}

Value ltIndex(OpBuilder &b, Location loc, Value x, int64_t c) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x, cIndex(b, loc, c));
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
  // A linalg op becomes a stage: a linalg.generic over buffers.
  auto addStage = [&](Operation *op) -> LogicalResult {
    auto linalgOp = cast<linalg::LinalgOp>(op);
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
    return success();
  };
  for (Operation *op : ops) {
    if (isa<func::ReturnOp, memref::DeallocOp>(op))
      continue;
    if (isa<linalg::LinalgOp>(op)) {
      if (failed(addStage(op)))
        return failure();
      continue;
    }
    // A time loop (a recurrent op's Scan): its body's linalg ops are stages too,
    // run in turn every iteration; views and index arithmetic stay in the body.
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && !timeLoop && loop.getNumResults() == 0) {
      timeLoop = loop;
      for (Operation &inner : llvm::make_early_inc_range(loop.getBody()->without_terminator())) {
        if (isa<linalg::LinalgOp>(inner)) {
          if (failed(addStage(&inner)))
            return failure();
          continue;
        }
        if (isa<memref::DeallocOp>(inner) || (isPure(&inner) && inner.getNumRegions() == 0))
          continue;
        return inner.emitError("kernel ") << kernel.getName() << ": '" << inner.getName()
                                          << "' in a time loop has no cuda mapping";
      }
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
    // A time loop's stages run as they are (its fills every iteration).
    if (isFill(op) && !timeLoop) {
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
  if (!timeLoop) {
    absorbPaddings();
    absorbEpilogues();
  }

  // Buffers the kernel allocates and writes become scratch views. Only buffers a
  // stage (or its absorbed epilogue) writes need memory; the others only give a
  // shape (a pooling window) and are dropped as dead code.
  llvm::DenseSet<Value> written;
  for (linalg::GenericOp s : stagesAndEpilogues())
    for (Value v : s.getDpsInits())
      written.insert(viewRoot(v));
  for (Operation *op : prelude) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc || elided.contains(alloc.getResult()) || !written.contains(alloc.getResult()))
      continue;
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitError("kernel ") << kernel.getName()
                                      << ": dynamic scratch buffers have no cuda mapping";
    scratchOffsets[op] = scratch;
    int64_t bytes = bufferBytes(type);
    scratch += ceilDiv(bytes, kScratchAlign) * kScratchAlign;
  }
  return success();
}

Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

SmallVector<linalg::GenericOp> StageBuilder::stagesAndEpilogues() const {
  SmallVector<linalg::GenericOp> all(stageOps);
  for (auto &[stage, epilogue] : epilogues)
    all.push_back(epilogue);
  return all;
}

/// The stages that read or write `buffer` (directly, not through views).
static SmallVector<linalg::GenericOp> stagesTouching(ArrayRef<linalg::GenericOp> stages,
                                                    Value buffer) {
  SmallVector<linalg::GenericOp> touching;
  for (linalg::GenericOp s : stages)
    if (llvm::is_contained(s->getOperands(), buffer))
      touching.push_back(s);
  return touching;
}

/// An all-parallel stage with identity maps writing only `init`.
static bool isPlainWrite(linalg::GenericOp s, Value init) {
  return s.getNumReductionLoops() == 0 && s.getNumDpsInits() == 1 &&
         s.getDpsInitOperand(0)->get() == init &&
         llvm::all_of(s.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); });
}

void StageBuilder::absorbPaddings() {
  for (Operation *op : prelude) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    Value buffer = alloc.getResult();
    // fill(buffer) with a value from outside the body; copy(source -> subview);
    // the other stages touching it only read it.
    SmallVector<linalg::GenericOp> touching = stagesTouching(stageOps, buffer);
    if (touching.empty() || !isPlainWrite(touching[0], buffer) ||
        touching[0].getNumDpsInputs() > 1)
      continue;
    linalg::GenericOp fill = touching[0];
    Block &fillBody = fill.getRegion().front();
    Value value = fillBody.getTerminator()->getOperand(0);
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == &fillBody && arg.getArgNumber() == 0 && fill.getNumDpsInputs() == 1)
      value = fill.getDpsInputOperand(0)->get();
    if (value.getParentRegion() == &fill.getRegion() || isa<ShapedType>(value.getType()))
      continue;
    if (!llvm::all_of(ArrayRef(touching).drop_front(), [&](linalg::GenericOp s) {
          return !llvm::is_contained(s.getDpsInits(), buffer);
        }))
      continue;
    auto view = llvm::find_if(buffer.getUsers(), [](Operation *u) {
      return isa<memref::SubViewOp>(u);
    });
    if (view == buffer.getUsers().end())
      continue;
    auto subview = cast<memref::SubViewOp>(*view);
    auto copyIt = llvm::find_if(stageOps, [&](linalg::GenericOp s) {
      return isPlainWrite(s, subview.getResult()) && s.getNumDpsInputs() == 1 &&
             isa<MemRefType>(s.getDpsInputOperand(0)->get().getType()) &&
             s.getRegion().front().getTerminator()->getOperand(0) ==
                 s.getRegion().front().getArgument(0);
    });
    if (copyIt == stageOps.end() || llvm::count_if(buffer.getUsers(), [](Operation *u) {
          return isa<memref::SubViewOp>(u);
        }) != 1)
      continue;
    linalg::GenericOp copy = *copyIt;
    Value source = copy.getDpsInputOperand(0)->get();
    auto sourceType = cast<MemRefType>(source.getType());
    if (!sourceType.getLayout().isIdentity() ||
        llvm::any_of(subview.getStaticStrides(), [](int64_t s) { return s != 1; }) ||
        llvm::any_of(subview.getStaticOffsets(), ShapedType::isDynamic) ||
        subview.getStaticSizes() != sourceType.getShape())
      continue;
    // The copy must come after the fill and before every reader.
    auto position = [&](linalg::GenericOp s) {
      return llvm::find(stageOps, s) - stageOps.begin();
    };
    if (position(copy) < position(fill) ||
        llvm::any_of(ArrayRef(touching).drop_front(),
                     [&](linalg::GenericOp r) { return position(r) < position(copy); }))
      continue;
    paddings[buffer] = {source, value, SmallVector<int64_t>(subview.getStaticOffsets())};
    elided.insert(buffer);
    llvm::erase(stageOps, fill);
    llvm::erase(stageOps, copy);
  }
}

void StageBuilder::absorbEpilogues() {
  SmallVector<linalg::GenericOp> kept;
  for (size_t i = 0; i < stageOps.size(); ++i) {
    linalg::GenericOp op = stageOps[i];
    kept.push_back(op);
    if (i + 1 == stageOps.size() || op.getNumReductionLoops() == 0 ||
        op.getNumDpsInits() != 1 || !foldedInit.count({op.getOperation(), 0u}))
      continue;
    // The intermediate: a buffer of the kernel's own, or (bufferized in place) the
    // output the epilogue overwrites at the same index.
    Value buffer = op.getDpsInitOperand(0)->get();
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    linalg::GenericOp next = stageOps[i + 1];
    if (llvm::any_of(buffer.getUsers(),
                     [](Operation *u) { return isa<ViewLikeOpInterface>(u); }))
      continue;
    SmallVector<linalg::GenericOp> touching = stagesTouching(stageOps, buffer);
    auto type = cast<MemRefType>(buffer.getType());
    if (touching.size() != 2 || touching[1] != next || next.getNumReductionLoops() != 0 ||
        llvm::count(next.getDpsInputs(), buffer) != 1 ||
        next.getStaticLoopRanges() != SmallVector<int64_t>(type.getShape()))
      continue;
    OpOperand *in = *llvm::find_if(next.getDpsInputOperands(),
                                   [&](OpOperand *o) { return o->get() == buffer; });
    if (!next.getMatchingIndexingMap(in).isIdentity())
      continue;
    bool inPlace = false, clobbers = false;
    for (OpOperand &out : next.getDpsInitsMutable())
      if (out.get() == buffer) {
        inPlace = next.getMatchingIndexingMap(&out).isIdentity() &&
                  next.getMatchingBlockArgument(&out).use_empty();
        clobbers = !inPlace;
      }
    if (clobbers || (!alloc && !inPlace))
      continue;
    epilogues[op] = next;
    intermediates.insert(buffer);
    if (!inPlace)
      elided.insert(buffer);
    ++i;
  }
  stageOps = kept;
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
  auto it = epilogues.find(op);
  if (it == epilogues.end()) {
    b.create<memref::StoreOp>(op.getLoc(), value, mapping.lookupOrDefault(out->get()), *idx);
    return;
  }
  // The epilogue's loops are the intermediate's indices (identity map): its body
  // takes `value` for the intermediate and loads its other operands there.
  linalg::GenericOp epilogue = it->second;
  Block &body = epilogue.getRegion().front();
  SmallVector<Value> epilogueIdx(idx->begin(), idx->end());
  for (OpOperand *in : epilogue.getDpsInputOperands())
    if (in->get() == out->get())
      mapping.map(body.getArgument(in->getOperandNumber()), value);
  SmallVector<Value> results = applyParallelBody(b, epilogue, epilogueIdx);
  for (auto [j, result] : llvm::enumerate(results))
    storeOutput(b, epilogue, j, result, epilogueIdx);
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
  auto padding = paddings.find(operand.get());
  if (padding == paddings.end())
    return b.create<memref::LoadOp>(loc, source, *idx);
  // A padded buffer: the source at the index minus the low padding (clamped, so
  // the load stays in bounds), the padding value outside it.
  auto sourceType = cast<MemRefType>(padding->second.source.getType());
  auto bufferType = cast<MemRefType>(operand.get().getType());
  Value inside;
  for (auto [d, i] : llvm::enumerate(*idx)) {
    int64_t size = sourceType.getDimSize(d), low = padding->second.low[d];
    if (low == 0 && size == bufferType.getDimSize(d))
      continue;
    Value shifted = b.create<arith::SubIOp>(loc, i, cIndex(b, loc, low));
    Value ok = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, shifted, cIndex(b, loc, 0)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, shifted, cIndex(b, loc, size)));
    inside = inside ? b.create<arith::AndIOp>(loc, inside, ok).getResult() : ok;
    i = b.create<arith::MinSIOp>(
        loc, b.create<arith::MaxSIOp>(loc, shifted, cIndex(b, loc, 0)), cIndex(b, loc, size - 1));
  }
  Value loaded = b.create<memref::LoadOp>(
      loc, mapping.lookupOrDefault(padding->second.source), *idx);
  if (!inside)
    return loaded;
  return b.create<arith::SelectOp>(loc, inside, loaded,
                                   mapping.lookupOrDefault(padding->second.value));
}

Value StageBuilder::uniformInitialValue(linalg::GenericOp op, unsigned outIndex) {
  auto it = foldedInit.find({op.getOperation(), outIndex});
  return it == foldedInit.end() ? Value() : mapping.lookupOrDefault(it->second);
}

Value StageBuilder::initialValue(OpBuilder &b, linalg::GenericOp op, unsigned outIndex,
                                 ValueRange loopIdx) {
  auto it = foldedInit.find({op.getOperation(), outIndex});
  if (it != foldedInit.end())
    return mapping.lookupOrDefault(it->second);
  return loadOperand(b, op, *op.getDpsInitOperand(outIndex), loopIdx);
}

SmallVector<Value> StageBuilder::reduceSerially(OpBuilder &b, linalg::GenericOp op,
                                                const LoopDims &dims,
                                                SmallVectorImpl<Value> &loopIdx) {
  Location loc = op.getLoc();
  SmallVector<Value> init;
  for (unsigned j = 0; j < op.getNumDpsInits(); ++j)
    init.push_back(initialValue(b, op, j, loopIdx));
  std::function<SmallVector<Value>(OpBuilder &, size_t, ValueRange)> nest =
      [&](OpBuilder &nb, size_t level, ValueRange carried) -> SmallVector<Value> {
    if (level == dims.red.size())
      return applyBody(nb, op, loopIdx, carried);
    auto loop = nb.create<scf::ForOp>(loc, cIndex(nb, loc, 0),
                                      cIndex(nb, loc, dims.redSizes[level]),
                                      cIndex(nb, loc, 1), carried);
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    loopIdx[dims.red[level]] = loop.getInductionVar();
    SmallVector<Value> inner = nest(lb, level + 1, loop.getRegionIterArgs());
    lb.create<scf::YieldOp>(loc, inner);
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> results = nest(b, 0, init);
  Value zero = cIndex(b, loc, 0);
  for (unsigned d : dims.red)
    loopIdx[d] = zero;
  return results;
}

void StageBuilder::strideOverOutputs(OpBuilder &b, linalg::GenericOp op, const LoopDims &dims,
                                     SmallVectorImpl<Value> &loopIdx, int64_t rowDims,
                                     Value tid, int64_t threads) {
  Location loc = op.getLoc();
  SmallVector<unsigned> inner(dims.par.begin() + rowDims, dims.par.end());
  SmallVector<int64_t> sizes(dims.parSizes.begin() + rowDims, dims.parSizes.end());
  auto loop = b.create<scf::ForOp>(loc, tid, cIndex(b, loc, product(sizes)),
                                   cIndex(b, loc, threads));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  SmallVector<Value> idx = delinearize(lb, loc, loop.getInductionVar(), sizes);
  for (auto [d, v] : llvm::zip(inner, idx))
    loopIdx[d] = v;
  for (unsigned d : dims.red)
    loopIdx[d] = cIndex(lb, loc, 0);
  SmallVector<Value> results = dims.red.empty() ? applyParallelBody(lb, op, loopIdx)
                                                : reduceSerially(lb, op, dims, loopIdx);
  for (auto [j, r] : llvm::enumerate(results))
    storeOutput(lb, op, j, r, loopIdx);
}

SmallVector<Value> StageBuilder::applyParallelBody(OpBuilder &b, linalg::GenericOp op,
                                                   ValueRange loopIdx) {
  Block &body = op.getRegion().front();
  SmallVector<Value> outs;
  for (unsigned j = 0; j < op.getNumDpsInits(); ++j)
    outs.push_back(body.getArgument(op.getNumDpsInputs() + j).use_empty()
                       ? Value()
                       : initialValue(b, op, j, loopIdx));
  return applyBody(b, op, loopIdx, outs);
}

SmallVector<Value> StageBuilder::applyBody(OpBuilder &b, linalg::GenericOp op,
                                           ValueRange loopIdx, ValueRange outs,
                                           Operation *skip) {
  Block &body = op.getRegion().front();
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = body.getArgument(in->getOperandNumber());
    // An epilogue's intermediate is mapped by storeOutput.
    if (!arg.use_empty() && !intermediates.contains(in->get()))
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

namespace kiln {
namespace {

/// A static box of a root buffer that `v` views: the root itself (all of it) or a
/// static unit-stride subview of it; nullopt when unknown (then it may touch all).
struct Box {
  Value root;
  SmallVector<int64_t> offsets, sizes;
};
std::optional<Box> boxOf(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    if (sub.getSource() != viewRoot(sub.getSource()) ||
        llvm::any_of(sub.getStaticStrides(), [](int64_t s) { return s != 1; }) ||
        ShapedType::isDynamicShape(sub.getStaticOffsets()) ||
        ShapedType::isDynamicShape(sub.getStaticSizes()) ||
        sub.getStaticSizes().size() != sub.getSourceType().getShape().size())
      return std::nullopt;
    return Box{sub.getSource(), SmallVector<int64_t>(sub.getStaticOffsets()),
               SmallVector<int64_t>(sub.getStaticSizes())};
  }
  if (viewRoot(v) != v || !type || !type.hasStaticShape())
    return std::nullopt;
  return Box{v, SmallVector<int64_t>(type.getRank(), 0), SmallVector<int64_t>(type.getShape())};
}

/// False when `a` and `b` may share an element.
bool disjoint(Value a, Value b) {
  if (viewRoot(a) != viewRoot(b))
    return true;
  std::optional<Box> x = boxOf(a), y = boxOf(b);
  if (!x || !y || x->root != y->root || x->offsets.size() != y->offsets.size())
    return false;
  for (size_t d = 0; d < x->offsets.size(); ++d)
    if (x->offsets[d] + x->sizes[d] <= y->offsets[d] ||
        y->offsets[d] + y->sizes[d] <= x->offsets[d])
      return true;
  return false;
}

} // namespace

void StageBuilder::mergeIndependentStages() {
  if (stages.size() != stageOps.size() || stages.size() < 2)
    return;
  // What each stage reads and writes (its absorbed epilogue's too; a padded
  // buffer is read from its source).
  struct Access {
    SmallVector<Value> reads, writes;
  };
  SmallVector<Access> access;
  for (linalg::GenericOp op : stageOps) {
    Access a;
    SmallVector<linalg::GenericOp> ops{op};
    if (auto it = epilogues.find(op); it != epilogues.end())
      ops.push_back(it->second);
    for (linalg::GenericOp g : ops) {
      for (Value v : g.getDpsInputs()) {
        auto padding = paddings.find(v);
        if (!intermediates.contains(v))
          a.reads.push_back(padding != paddings.end() ? padding->second.source : v);
      }
      for (Value v : g.getDpsInits())
        if (!elided.contains(viewRoot(v)) && !intermediates.contains(v))
          a.writes.push_back(v);
    }
    access.push_back(std::move(a));
  }
  auto independent = [&](const Access &x, const Access &y) {
    for (Value w : x.writes) {
      for (Value v : y.reads)
        if (!disjoint(w, v))
          return false;
      for (Value v : y.writes)
        if (!disjoint(w, v))
          return false;
    }
    for (Value w : y.writes)
      for (Value v : x.reads)
        if (!disjoint(w, v))
          return false;
    return true;
  };
  auto attr = [&](size_t i) { return cast<GpuStageAttr>(stages[i]); };
  auto fnOf = [&](size_t i) {
    return gpuModule.lookupSymbol<gpu::GPUFuncOp>(attr(i).getFunction());
  };
  // A stage can merge when its function is one block whose block and thread
  // indices are all at its top level (where the merge rewrites them).
  SmallVector<bool> movable;
  for (size_t k = 0; k < stages.size(); ++k) {
    gpu::GPUFuncOp f = fnOf(k);
    bool nestedIds = f.walk([&](Operation *op) {
                        bool id = isa<gpu::BlockIdOp, gpu::GridDimOp, gpu::ThreadIdOp,
                                      gpu::BlockDimOp>(op);
                        return id && op->getParentOp() != f.getOperation()
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      }).wasInterrupted();
    movable.push_back(f.getBody().hasOneBlock() && !nestedIds);
  }
  // Each stage's shared memory: a merged launch has every stage's (48 KB at most,
  // the static limit a block has on every supported architecture).
  constexpr int64_t kSharedLimit = 48 * 1024;
  auto sharedBytes = [&](size_t k) {
    int64_t bytes = 0;
    for (BlockArgument a : fnOf(k).getWorkgroupAttributions()) {
      auto t = cast<MemRefType>(a.getType());
      bytes += t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
    }
    return bytes;
  };
  // Runs of stages, each independent of the others in its run, one thread count.
  SmallVector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < stages.size();) {
    size_t j = i + 1;
    int64_t shared = sharedBytes(i);
    auto joins = [&](size_t k) {
      return movable[k] && product(attr(k).getBlock()) == product(attr(i).getBlock()) &&
             shared + sharedBytes(k) <= kSharedLimit &&
             llvm::all_of(llvm::seq(i, k), [&](size_t m) { return independent(access[m], access[k]); });
    };
    if (movable[i])
      while (j < stages.size() && joins(j))
        shared += sharedBytes(j++);
    runs.push_back({i, j});
    i = j;
  }
  SmallVector<Attribute> merged;
  for (auto [from, to] : runs) {
    if (to - from < 2) {
      merged.push_back(stages[from]);
      continue;
    }
    int64_t total = 0;
    for (size_t k = from; k < to; ++k)
      total += product(attr(k).getGrid());
    if (total > INT32_MAX) {
      for (size_t k = from; k < to; ++k)
        merged.push_back(stages[k]);
      continue;
    }
    gpu::GPUFuncOp first = fnOf(from);
    Location loc = first.getLoc();
    OpBuilder b(first);
    auto fn = b.create<gpu::GPUFuncOp>(loc, (first.getName() + "_" + Twine(to - from - 1) + "more").str(),
                                       first.getFunctionType());
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    // One block shape: the stages', or a line of their thread count where they differ
    // (each stage then sees its own shape, from the linear thread index).
    SmallVector<int64_t> block(attr(from).getBlock());
    for (size_t k = from; k < to; ++k)
      if (ArrayRef<int64_t>(block) != attr(k).getBlock())
        block = {product(attr(from).getBlock()), 1, 1};
    fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
        {static_cast<int32_t>(block[0]), static_cast<int32_t>(block[1]),
         static_cast<int32_t>(block[2])}));
    // Blocks, not scf.if: a block reduction's gpu.all_reduce is lowered later by
    // splitting the block it is in.
    Block *test = &fn.getBody().front();
    Block *exit = b.createBlock(&fn.getBody());
    b.create<gpu::ReturnOp>(loc);
    b.setInsertionPointToStart(test);
    Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
    bool sync = false;
    int64_t lo = 0;
    for (size_t k = from; k < to; ++k) {
      gpu::GPUFuncOp stage = fnOf(k);
      ArrayRef<int64_t> grid = attr(k).getGrid();
      int64_t hi = lo + product(grid);
      sync |= attr(k).getSync().getValue();
      Block *body = b.createBlock(exit);
      Block *next = k + 1 < to ? b.createBlock(exit) : exit;
      b.setInsertionPointToEnd(test);
      Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, bid,
                                              cIndex(b, loc, hi));
      b.create<cf::CondBranchOp>(loc, inRange, body, next);
      OpBuilder inner = OpBuilder::atBlockBegin(body);
      IRMapping map;
      for (auto [x, y] : llvm::zip(stage.getArguments(), fn.getArguments()))
        map.map(x, y);
      for (BlockArgument w : stage.getWorkgroupAttributions())
        map.map(w, fn.addWorkgroupAttribution(cast<MemRefType>(w.getType()), w.getLoc()));
      // The stage's block index within its own grid, from the merged one.
      Value local = inner.create<arith::SubIOp>(loc, bid, cIndex(inner, loc, lo));
      SmallVector<Value> blockIdx = delinearize(inner, loc, local, {grid[2], grid[1], grid[0]});
      ArrayRef<int64_t> shape = attr(k).getBlock();
      SmallVector<Value> threadIdx;
      if (shape != ArrayRef<int64_t>(block)) {
        Value linear = inner.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
        threadIdx = delinearize(inner, loc, linear, {shape[2], shape[1], shape[0]});
      }
      // (Only stages whose block and thread indices are at their top level merge.)
      for (Operation &op : stage.getBody().front().without_terminator()) {
        if (auto id = dyn_cast<gpu::ThreadIdOp>(op); id && !threadIdx.empty()) {
          map.map(id.getResult(), threadIdx[2 - static_cast<int>(id.getDimension())]);
          continue;
        }
        if (auto dim = dyn_cast<gpu::BlockDimOp>(op); dim && !threadIdx.empty()) {
          map.map(dim.getResult(), cIndex(inner, loc, shape[static_cast<int>(dim.getDimension())]));
          continue;
        }
        if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
          map.map(id.getResult(), blockIdx[2 - static_cast<int>(id.getDimension())]);
          continue;
        }
        if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
          map.map(dim.getResult(), cIndex(inner, loc, grid[static_cast<int>(dim.getDimension())]));
          continue;
        }
        inner.clone(op, map);
      }
      inner.create<cf::BranchOp>(loc, exit);
      test = next;
      lo = hi;
      stage.erase();
    }
    merged.push_back(GpuStageAttr::get(fn.getContext(), fn.getNameAttr(), {total, 1, 1},
                                       block, b.getBoolAttr(sync)));
  }
  stages = std::move(merged);
}

} // namespace kiln
