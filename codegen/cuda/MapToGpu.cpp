//===- MapToGpu.cpp - Map kernels to blocks and threads -------------------===//
//
// This file implements `kiln-map-to-gpu`, the first step of the cuda codegen
// phase. Every kiln.kernel function (memref arguments, linalg ops) becomes one or
// more `gpu.func`s in `gpu.module @kiln_kernels` — one per top-level linalg op (a
// "stage"), launched in order on the kernel's stream. Each stage is mapped by the
// first strategy that fits:
//
//   tiled contraction  two operands combined over reduction dims into an output
//                      whose parallel dims split into rows (only the first operand)
//                      and columns (only the second): GEMM, batched GEMM and
//                      convolution as implicit GEMM. 16x16 output tiles per block,
//                      both operands staged through shared memory per 16-wide K
//                      step; the column side is the output's innermost dim so that
//                      loads and stores coalesce.
//   block reduction    one output per block, threads stride over the reduction
//                      (coalesced) and combine with gpu.all_reduce (warp shuffles,
//                      then shared memory across warps): softmax and norm
//                      statistics, Reduce*, global pooling.
//   thread per output  everything else: consecutive threads own consecutive output
//                      elements (coalesced stores), reduction dims run serially.
//                      Elementwise stages with 32-bit outputs take 4 consecutive
//                      outputs per thread, so that loads and stores become 16-byte
//                      vector accesses (ld/st.global.v4).
//
// A `linalg.fill` of a reduction's output is folded into the reduction's initial
// value. Buffers a kernel allocates for its own use become views of one scratch
// argument that the runtime provides. The launch geometry of every stage is
// recorded on the plan (`kiln.gpu_stages`), so the emitter bakes it in.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCodegen.h"
#include "dialects/kiln/KilnDialect.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

constexpr int64_t kMaxThreads = 256;
constexpr uint32_t kArgumentAlignment = 16;
constexpr int64_t kTile = 16;
constexpr int64_t kScratchAlign = 256;

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The combiner of a reduction body `yield C(%out, x)`, as a gpu.all_reduce kind.
struct Combiner {
  Operation *op = nullptr;
  Value other; // x
  gpu::AllReduceOperation kind;
};

std::optional<Combiner> matchCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *c = yield.getOperand(0).getDefiningOp();
  if (!c || c->getBlock() != &body || c->getNumOperands() != 2 || !out.hasOneUse() ||
      !c->getResult(0).hasOneUse())
    return std::nullopt;
  Value other;
  if (c->getOperand(0) == out)
    other = c->getOperand(1);
  else if (c->getOperand(1) == out)
    other = c->getOperand(0);
  else
    return std::nullopt;
  using K = gpu::AllReduceOperation;
  std::optional<K> kind =
      llvm::TypeSwitch<Operation *, std::optional<K>>(c)
          .Case([](arith::AddFOp) { return K::ADD; })
          .Case([](arith::AddIOp) { return K::ADD; })
          .Case([](arith::MulFOp) { return K::MUL; })
          .Case([](arith::MulIOp) { return K::MUL; })
          .Case([](arith::MaximumFOp) { return K::MAXIMUMF; })
          .Case([](arith::MinimumFOp) { return K::MINIMUMF; })
          .Case([](arith::MaxNumFOp) { return K::MAXNUMF; })
          .Case([](arith::MinNumFOp) { return K::MINNUMF; })
          .Case([](arith::MaxSIOp) { return K::MAXSI; })
          .Case([](arith::MinSIOp) { return K::MINSI; })
          .Case([](arith::MaxUIOp) { return K::MAXUI; })
          .Case([](arith::MinUIOp) { return K::MINUI; })
          .Case([](arith::AndIOp) { return K::AND; })
          .Case([](arith::OrIOp) { return K::OR; })
          .Case([](arith::XOrIOp) { return K::XOR; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  Type t = out.getType();
  // gpu.all_reduce lowers through 32-bit shuffles.
  if (!t.isF32() && !t.isInteger(32))
    return std::nullopt;
  return Combiner{c, other, *kind};
}

/// The identity of a combiner (its value before the first element).
Value identityOf(OpBuilder &b, Location loc, gpu::AllReduceOperation kind, Type t) {
  using K = gpu::AllReduceOperation;
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    APFloat v = APFloat::getZero(sem);
    if (kind == K::MUL)
      v = APFloat::getOne(sem);
    else if (kind == K::MAXIMUMF || kind == K::MAXNUMF)
      v = APFloat::getInf(sem, /*Negative=*/true);
    else if (kind == K::MINIMUMF || kind == K::MINNUMF)
      v = APFloat::getInf(sem);
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, v));
  }
  unsigned w = t.getIntOrFloatBitWidth();
  APInt v = APInt::getZero(w);
  switch (kind) {
  case K::MUL: v = APInt(w, 1); break;
  case K::MAXSI: v = APInt::getSignedMinValue(w); break;
  case K::MINSI: v = APInt::getSignedMaxValue(w); break;
  case K::MINUI:
  case K::AND: v = APInt::getAllOnes(w); break;
  default: break;
  }
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, v));
}

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

/// A stage's loop nest: static ranges, parallel and reduction dims (in loop
/// order), their extents and element counts.
struct LoopDims {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> par, red;
  SmallVector<int64_t> parSizes, redSizes;
  int64_t outputs = 1, length = 1;

  explicit LoopDims(linalg::GenericOp op) : ranges(op.getStaticLoopRanges()) {
    for (auto [d, t] : llvm::enumerate(op.getIteratorTypesArray()))
      (t == utils::IteratorType::parallel ? par : red).push_back(d);
    for (unsigned d : par)
      parSizes.push_back(ranges[d]);
    for (unsigned d : red)
      redSizes.push_back(ranges[d]);
    outputs = product(parSizes);
    length = product(redSizes);
  }
};

/// Builds the gpu.funcs of one kernel function.
class KernelMapper {
public:
  KernelMapper(func::FuncOp kernel, gpu::GPUModuleOp gpuModule)
      : kernel(kernel), gpuModule(gpuModule) {}

  /// Appends one DictionaryAttr per stage to `stages`.
  LogicalResult run(SmallVectorImpl<Attribute> &stages, int64_t &scratchBytes);

private:
  LogicalResult prepare();
  /// Creates a gpu.func with the kernel's arguments (plus scratch), the prelude
  /// cloned into it, and the builder positioned after it.
  gpu::GPUFuncOp startStage(OpBuilder &b, ArrayRef<int64_t> block);
  void finishStage(OpBuilder &b, gpu::GPUFuncOp fn, ArrayRef<int64_t> grid,
                   ArrayRef<int64_t> block, SmallVectorImpl<Attribute> &stages);

  /// Loads the used inputs at `loopIdx`, clones the body; returns the yields.
  /// `skip` (the combiner) is left out; `outs` bind the output block arguments.
  SmallVector<Value> applyBody(OpBuilder &b, linalg::GenericOp op, ValueRange loopIdx,
                               ValueRange outs, Operation *skip = nullptr);
  Value loadOperand(OpBuilder &b, linalg::GenericOp op, OpOperand &operand,
                    ValueRange loopIdx);
  /// The output's initial value: a folded fill's constant, or a load.
  Value initialValue(OpBuilder &b, linalg::GenericOp op, unsigned outIndex,
                     ValueRange loopIdx);

  LogicalResult mapThreadPerOutput(linalg::GenericOp op, const LoopDims &dims,
                                   SmallVectorImpl<Attribute> &stages);
  void mapBlockReduction(linalg::GenericOp op, const LoopDims &dims,
                         const Combiner &combiner, SmallVectorImpl<Attribute> &stages);
  bool mapTiledContraction(linalg::GenericOp op, const LoopDims &dims,
                           SmallVectorImpl<Attribute> &stages);

  func::FuncOp kernel;
  gpu::GPUModuleOp gpuModule;
  SmallVector<Operation *> prelude;
  SmallVector<linalg::GenericOp> stagesOps;
  /// Reduction outputs whose initial value is a folded fill: (op, out) -> value.
  DenseMap<std::pair<Operation *, unsigned>, Value> foldedInit;
  /// Kernel-internal buffers: alloc -> byte offset in the scratch argument.
  DenseMap<Operation *, int64_t> scratchOffsets;
  int64_t scratch = 0;
  IRMapping mapping;
  gpu::GPUFuncOp current;
};

LogicalResult KernelMapper::prepare() {
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
      stagesOps.push_back(generic);
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
  for (size_t i = 0; i < stagesOps.size(); ++i) {
    linalg::GenericOp op = stagesOps[i];
    bool folded = false;
    if (isFill(op)) {
      Value buffer = op.getDpsInitOperand(0)->get();
      auto touches = [&](linalg::GenericOp s) {
        return llvm::is_contained(s->getOperands(), buffer);
      };
      auto next = std::find_if(stagesOps.begin() + i + 1, stagesOps.end(), touches);
      if (next != stagesOps.end() && next->getNumReductionLoops() > 0 &&
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
  stagesOps = kept;

  // Buffers the kernel allocates and writes become scratch views.
  for (Operation *op : prelude) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    // Only buffers a stage writes need memory; the others only give a shape
    // (a pooling window) and are dropped as dead code.
    if (!alloc || llvm::none_of(stagesOps, [&](linalg::GenericOp s) {
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

gpu::GPUFuncOp KernelMapper::startStage(OpBuilder &b, ArrayRef<int64_t> block) {
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
  current = fn;
  return fn;
}

void KernelMapper::finishStage(OpBuilder &b, gpu::GPUFuncOp fn, ArrayRef<int64_t> grid,
                               ArrayRef<int64_t> block,
                               SmallVectorImpl<Attribute> &stages) {
  b.setInsertionPointToEnd(&fn.getBody().front());
  b.create<gpu::ReturnOp>(fn.getLoc());
  MLIRContext *ctx = fn.getContext();
  NamedAttribute entries[] = {
      {StringAttr::get(ctx, "name"), StringAttr::get(ctx, fn.getName())},
      {StringAttr::get(ctx, "grid"), b.getDenseI64ArrayAttr(grid)},
      {StringAttr::get(ctx, "block"), b.getDenseI64ArrayAttr(block)}};
  stages.push_back(DictionaryAttr::get(ctx, entries));
}

Value KernelMapper::loadOperand(OpBuilder &b, linalg::GenericOp op, OpOperand &operand,
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

Value KernelMapper::initialValue(OpBuilder &b, linalg::GenericOp op, unsigned outIndex,
                                 ValueRange loopIdx) {
  auto it = foldedInit.find({op.getOperation(), outIndex});
  if (it != foldedInit.end())
    return mapping.lookupOrDefault(it->second);
  return loadOperand(b, op, *op.getDpsInitOperand(outIndex), loopIdx);
}

SmallVector<Value> KernelMapper::applyBody(OpBuilder &b, linalg::GenericOp op,
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

SmallVector<int64_t> sizesOf(ArrayRef<int64_t> ranges, ArrayRef<unsigned> dims) {
  SmallVector<int64_t> s;
  for (unsigned d : dims)
    s.push_back(ranges[d]);
  return s;
}

/// How many consecutive outputs one thread of an elementwise stage computes: 16 bytes'
/// worth (4 x 32-bit) when every output is 32-bit and stored contiguously along the
/// innermost loop dim, whose extent 4 divides, so that the thread's loads and stores of
/// contiguous operands are 16-byte aligned and LLVM's load/store vectorizer turns them
/// into ld/st.global.v4 (kernel arguments are declared 16-byte aligned in startStage).
int64_t elementsPerThread(linalg::GenericOp op, const LoopDims &dims) {
  constexpr int64_t kVector = 4;
  if (!dims.red.empty() || dims.par.empty() || dims.parSizes.back() % kVector != 0 ||
      dims.outputs < 32 * kVector)
    return 1;
  unsigned inner = dims.par.back();
  for (OpOperand &out : op.getDpsInitsMutable()) {
    auto type = cast<MemRefType>(out.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&out);
    if (type.getElementTypeBitWidth() != 32 || map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(inner, op.getContext()))
      return 1;
  }
  return kVector;
}

LogicalResult KernelMapper::mapThreadPerOutput(linalg::GenericOp op, const LoopDims &dims,
                                               SmallVectorImpl<Attribute> &stages) {
  Location loc = op.getLoc();
  const auto &[ranges, par, red, parSizes, redSizes, total, length] = dims;
  if (total == 0)
    return success();
  int64_t perThread = elementsPerThread(op, dims);
  int64_t work = total / perThread;
  int64_t threads = std::min(kMaxThreads, ceilDiv(work, 32) * 32);
  int64_t blocks = ceilDiv(work, threads);
  if (blocks > INT32_MAX)
    return op.emitError("too many outputs for one cuda launch");
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value linear = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, bid, cIndex(b, loc, threads)), tid);
  Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, linear,
                                          cIndex(b, loc, work));
  auto ifOp = b.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<int64_t> workSizes(parSizes);
  if (perThread > 1)
    workSizes.back() /= perThread;
  SmallVector<Value> parIdx = delinearize(b, loc, linear, workSizes);
  SmallVector<Value> loopIdx(ranges.size());
  for (auto [i, d] : llvm::enumerate(par))
    loopIdx[d] = parIdx[i];
  Value zero = cIndex(b, loc, 0);
  for (unsigned d : red)
    loopIdx[d] = zero;

  // A thread's outputs (perThread > 1: unrolled, innermost index perThread * q + k).
  Value first = perThread == 1
                    ? Value()
                    : b.create<arith::MulIOp>(loc, parIdx.back(), cIndex(b, loc, perThread));
  SmallVector<std::tuple<Value, Value, SmallVector<Value, 8>>> stores;
  for (int64_t k = 0; k < perThread; ++k) {
    if (perThread > 1)
      loopIdx[par.back()] =
          k == 0 ? first : b.create<arith::AddIOp>(loc, first, cIndex(b, loc, k)).getResult();
    SmallVector<Value> results;
    if (red.empty()) {
      SmallVector<Value> outs;
      Block &body = op.getRegion().front();
      for (unsigned j = 0; j < op.getNumDpsInits(); ++j)
        outs.push_back(body.getArgument(op.getNumDpsInputs() + j).use_empty()
                           ? Value()
                           : initialValue(b, op, j, loopIdx));
      results = applyBody(b, op, loopIdx, outs);
    } else {
      SmallVector<Value> init;
      for (unsigned j = 0; j < op.getNumDpsInits(); ++j)
        init.push_back(initialValue(b, op, j, loopIdx));
      // One scf.for per reduction dim, carrying the outputs.
      std::function<SmallVector<Value>(OpBuilder &, size_t, ValueRange)> nest =
          [&](OpBuilder &nb, size_t level, ValueRange carried) -> SmallVector<Value> {
        if (level == red.size())
          return applyBody(nb, op, loopIdx, carried);
        auto loop = nb.create<scf::ForOp>(loc, cIndex(nb, loc, 0),
                                          cIndex(nb, loc, redSizes[level]),
                                          cIndex(nb, loc, 1), carried);
        OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
        loopIdx[red[level]] = loop.getInductionVar();
        SmallVector<Value> inner = nest(lb, level + 1, loop.getRegionIterArgs());
        lb.create<scf::YieldOp>(loc, inner);
        return SmallVector<Value>(loop.getResults());
      };
      results = nest(b, 0, init);
      for (unsigned d : red)
        loopIdx[d] = zero;
    }
    for (unsigned j = 0; j < op.getNumDpsInits(); ++j) {
      OpOperand *out = op.getDpsInitOperand(j);
      auto idx = affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(out), loopIdx);
      stores.push_back({results[j], mapping.lookupOrDefault(out->get()), *idx});
    }
  }
  // Stores after all of the thread's loads: the loads and the stores each stay adjacent
  // (mergeable into vector accesses though arguments may alias), and every read still
  // precedes the writes, as the op's semantics have it.
  for (auto &[value, memref, idx] : stores)
    b.create<memref::StoreOp>(loc, value, memref, idx);
  b.setInsertionPointAfter(ifOp);
  finishStage(b, fn, {blocks, 1, 1}, {threads, 1, 1}, stages);
  return success();
}

void KernelMapper::mapBlockReduction(linalg::GenericOp op, const LoopDims &dims,
                                     const Combiner &combiner,
                                     SmallVectorImpl<Attribute> &stages) {
  Location loc = op.getLoc();
  const auto &[ranges, par, red, parSizes, redSizes, outputs, length] = dims;
  int64_t threads = 32;
  while (threads < kMaxThreads && threads < length)
    threads *= 2;
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = startStage(b, {threads, 1, 1});
  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  SmallVector<Value> parIdx = delinearize(b, loc, bid, parSizes);
  SmallVector<Value> loopIdx(ranges.size());
  for (auto [i, d] : llvm::enumerate(par))
    loopIdx[d] = parIdx[i];
  Type t = combiner.op->getResult(0).getType();
  Value identity = identityOf(b, loc, combiner.kind, t);
  auto loop = b.create<scf::ForOp>(loc, tid, cIndex(b, loc, length),
                                   cIndex(b, loc, threads), ValueRange{identity});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    SmallVector<Value> redIdx = delinearize(lb, loc, loop.getInductionVar(), redSizes);
    for (auto [i, d] : llvm::enumerate(red))
      loopIdx[d] = redIdx[i];
    applyBody(lb, op, loopIdx, ValueRange{Value()}, combiner.op);
    Value x = mapping.lookupOrDefault(combiner.other);
    IRMapping step;
    Operation *c = combiner.op;
    Block &body = op.getRegion().front();
    step.map(body.getArgument(op.getNumDpsInputs()), loop.getRegionIterArgs()[0]);
    step.map(combiner.other, x);
    Operation *partial = lb.clone(*c, step);
    lb.create<scf::YieldOp>(loc, partial->getResult(0));
  }
  Value total = b.create<gpu::AllReduceOp>(
      loc, loop.getResult(0),
      gpu::AllReduceOperationAttr::get(b.getContext(), combiner.kind), /*uniform=*/true);
  Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                        cIndex(b, loc, 0));
  auto ifOp = b.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value zero = cIndex(b, loc, 0);
  for (unsigned d : red)
    loopIdx[d] = zero;
  Value init = initialValue(b, op, 0, loopIdx);
  IRMapping fin;
  Block &body = op.getRegion().front();
  fin.map(body.getArgument(op.getNumDpsInputs()), init);
  fin.map(combiner.other, total);
  Value result = b.clone(*combiner.op, fin)->getResult(0);
  OpOperand *out = op.getDpsInitOperand(0);
  auto idx = affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(out), loopIdx);
  b.create<memref::StoreOp>(loc, result, mapping.lookupOrDefault(out->get()), *idx);
  b.setInsertionPointAfter(ifOp);
  finishStage(b, fn, {outputs, 1, 1}, {threads, 1, 1}, stages);
}

bool KernelMapper::mapTiledContraction(linalg::GenericOp op, const LoopDims &dims,
                                       SmallVectorImpl<Attribute> &stages) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  Block &body = op.getRegion().front();
  if (!body.getArgument(0).hasOneUse() || !body.getArgument(1).hasOneUse() ||
      !body.getOps<linalg::IndexOp>().empty())
    return false;
  // Only the operands and the accumulator may flow into the body.
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !v.getDefiningOp<arith::ConstantOp>())
        return false;
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isa<MemRefType>(in->get().getType()))
      return false;
  const SmallVector<int64_t> &ranges = dims.ranges;
  const SmallVector<unsigned> &par = dims.par, &red = dims.red;
  if (red.empty())
    return false;
  auto dimsOf = [&](AffineMap map) {
    llvm::SmallBitVector used(ranges.size());
    for (AffineExpr e : map.getResults())
      e.walk([&](AffineExpr s) {
        if (auto d = dyn_cast<AffineDimExpr>(s))
          used.set(d.getPosition());
      });
    return used;
  };
  llvm::SmallBitVector a = dimsOf(op.getMatchingIndexingMap(op.getDpsInputOperand(0)));
  llvm::SmallBitVector bb = dimsOf(op.getMatchingIndexingMap(op.getDpsInputOperand(1)));
  SmallVector<unsigned> onlyA, onlyB, batch;
  for (unsigned d : par) {
    if (a[d] && !bb[d])
      onlyA.push_back(d);
    else if (bb[d] && !a[d])
      onlyB.push_back(d);
    else
      batch.push_back(d);
  }
  if (onlyA.empty() || onlyB.empty())
    return false;
  int64_t sizeA = product(sizesOf(ranges, onlyA)), sizeB = product(sizesOf(ranges, onlyB));
  int64_t k = dims.length, nb = product(sizesOf(ranges, batch));
  if (sizeA < kTile || sizeB < kTile || k < kTile || nb > 65535 ||
      ceilDiv(sizeA, kTile) > 65535)
    return false;
  // Columns (threadIdx.x) take the side holding the output's innermost dim.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  bool aIsColumns = false;
  if (outMap.getNumResults() > 0)
    if (auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
      aIsColumns = llvm::is_contained(onlyA, last.getPosition());
  unsigned rowOperand = aIsColumns ? 1 : 0, colOperand = aIsColumns ? 0 : 1;
  SmallVector<unsigned> rowDims = aIsColumns ? onlyB : onlyA;
  SmallVector<unsigned> colDims = aIsColumns ? onlyA : onlyB;
  int64_t rows = product(sizesOf(ranges, rowDims)), cols = product(sizesOf(ranges, colDims));
  if (ceilDiv(rows, kTile) > 65535)
    return false;

  Location loc = op.getLoc();
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = startStage(b, {kTile, kTile, 1});
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto tileType = [&](unsigned operand) {
    Type elem = cast<MemRefType>(op.getDpsInputOperand(operand)->get().getType())
                    .getElementType();
    return MemRefType::get({kTile, kTile}, elem, MemRefLayoutAttrInterface(), workgroup);
  };
  Value rowTile = fn.addWorkgroupAttribution(tileType(rowOperand), loc);
  Value colTile = fn.addWorkgroupAttribution(tileType(colOperand), loc);
  Value tx = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value ty = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::y);
  Value bx = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value by = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::y);
  Value bz = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::z);
  Value tile = cIndex(b, loc, kTile), zero = cIndex(b, loc, 0);
  auto mul = [&](Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); };
  auto add = [&](Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); };
  auto lt = [&](OpBuilder &ob, Value x, int64_t bound) -> Value {
    return ob.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x,
                                    cIndex(ob, loc, bound));
  };
  Value rowBase = mul(by, tile), colBase = mul(bx, tile);
  Value row = add(rowBase, ty), col = add(colBase, tx);

  SmallVector<Value> loopIdx(ranges.size(), zero);
  SmallVector<Value> batchIdx = delinearize(b, loc, bz, sizesOf(ranges, batch));
  for (auto [i, d] : llvm::enumerate(batch))
    loopIdx[d] = batchIdx[i];
  auto setDims = [&](OpBuilder &ob, ArrayRef<unsigned> dims, Value linear) {
    SmallVector<Value> v = delinearize(ob, loc, linear, sizesOf(ranges, dims));
    for (auto [i, d] : llvm::enumerate(dims))
      loopIdx[d] = v[i];
  };
  // The accumulator starts from the output (or the folded fill) where in range.
  Value outOk = b.create<arith::AndIOp>(loc, lt(b, row, rows), lt(b, col, cols));
  Type accType = body.getArgument(2).getType();
  auto initIf = b.create<scf::IfOp>(loc, TypeRange{accType}, outOk, true);
  {
    OpBuilder tb = initIf.getThenBodyBuilder();
    setDims(tb, rowDims, row);
    setDims(tb, colDims, col);
    tb.create<scf::YieldOp>(loc, initialValue(tb, op, 0, loopIdx));
    OpBuilder eb = initIf.getElseBodyBuilder();
    eb.create<scf::YieldOp>(loc, eb.create<arith::ConstantOp>(loc, eb.getZeroAttr(accType))
                                     .getResult());
  }
  auto kLoop = b.create<scf::ForOp>(loc, zero, cIndex(b, loc, k), tile,
                                    ValueRange{initIf.getResult(0)});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // Stage one element of each operand tile: rowTile[ty][tx] = R(row, k0 + tx),
    // colTile[ty][tx] = C(k0 + ty, col).
    auto stageTile = [&](unsigned operand, Value tileBuf, ArrayRef<unsigned> dims,
                         Value outer, int64_t outerSize, Value kIdx) {
      Value ok = lb.create<arith::AndIOp>(loc, lt(lb, outer, outerSize), lt(lb, kIdx, k));
      Type elem = cast<MemRefType>(tileBuf.getType()).getElementType();
      auto ifOp = lb.create<scf::IfOp>(loc, TypeRange{elem}, ok, true);
      OpBuilder tb = ifOp.getThenBodyBuilder();
      setDims(tb, dims, outer);
      setDims(tb, red, kIdx);
      tb.create<scf::YieldOp>(loc, loadOperand(tb, op, *op.getDpsInputOperand(operand), loopIdx));
      OpBuilder eb = ifOp.getElseBodyBuilder();
      eb.create<scf::YieldOp>(loc, eb.create<arith::ConstantOp>(loc, eb.getZeroAttr(elem))
                                       .getResult());
      lb.create<memref::StoreOp>(loc, ifOp.getResult(0), tileBuf, ValueRange{ty, tx});
    };
    stageTile(rowOperand, rowTile, rowDims, lb.create<arith::AddIOp>(loc, rowBase, ty),
              rows, lb.create<arith::AddIOp>(loc, k0, tx));
    stageTile(colOperand, colTile, colDims, lb.create<arith::AddIOp>(loc, colBase, tx),
              cols, lb.create<arith::AddIOp>(loc, k0, ty));
    lb.create<gpu::BarrierOp>(loc);
    Value kEnd = lb.create<arith::MinUIOp>(
        loc, tile, lb.create<arith::SubIOp>(loc, cIndex(lb, loc, k), k0));
    auto inner = lb.create<scf::ForOp>(loc, cIndex(lb, loc, 0), kEnd, cIndex(lb, loc, 1),
                                       ValueRange{kLoop.getRegionIterArgs()[0]});
    {
      OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
      Value kk = inner.getInductionVar();
      Value rv = ib.create<memref::LoadOp>(loc, rowTile, ValueRange{ty, kk});
      Value cv = ib.create<memref::LoadOp>(loc, colTile, ValueRange{kk, tx});
      mapping.map(body.getArgument(rowOperand), rv);
      mapping.map(body.getArgument(colOperand), cv);
      mapping.map(body.getArgument(2), inner.getRegionIterArgs()[0]);
      for (Operation &o : body.without_terminator())
        ib.clone(o, mapping);
      ib.create<scf::YieldOp>(loc, mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
    }
    lb.create<gpu::BarrierOp>(loc);
    lb.create<scf::YieldOp>(loc, inner.getResult(0));
  }
  auto storeIf = b.create<scf::IfOp>(loc, outOk, false);
  {
    OpBuilder tb = OpBuilder::atBlockBegin(&storeIf.getThenRegion().front());
    setDims(tb, rowDims, row);
    setDims(tb, colDims, col);
    for (unsigned d : red)
      loopIdx[d] = zero;
    OpOperand *out = op.getDpsInitOperand(0);
    auto idx = affine::expandAffineMap(tb, loc, op.getMatchingIndexingMap(out), loopIdx);
    tb.create<memref::StoreOp>(loc, kLoop.getResult(0), mapping.lookupOrDefault(out->get()),
                               *idx);
  }
  b.setInsertionPointAfter(storeIf);
  finishStage(b, fn, {ceilDiv(cols, kTile), ceilDiv(rows, kTile), nb}, {kTile, kTile, 1},
              stages);
  return true;
}

LogicalResult KernelMapper::run(SmallVectorImpl<Attribute> &stages,
                                int64_t &scratchBytes) {
  if (failed(prepare()))
    return failure();
  for (linalg::GenericOp op : stagesOps) {
    if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
      return op.emitError("kernel ") << kernel.getName()
                                     << ": dynamic loop bounds have no cuda mapping";
    LoopDims dims(op);
    if (mapTiledContraction(op, dims, stages))
      continue;
    std::optional<Combiner> combiner = matchCombiner(op);
    bool wide = dims.length >= 256 || (dims.length >= 32 && dims.outputs < 4096);
    if (combiner && !dims.red.empty() && wide && dims.outputs > 0 &&
        dims.outputs <= INT32_MAX) {
      mapBlockReduction(op, dims, *combiner, stages);
      continue;
    }
    if (failed(mapThreadPerOutput(op, dims, stages)))
      return failure();
  }
  scratchBytes = scratch;
  return success();
}

/// math.ipowi has no PTX instruction and no libdevice function: square and
/// multiply over the exponent's bits. A negative exponent gives what the integer
/// division 1 / b^-e gives (1 for b = 1, +-1 for b = -1, else 0), as on host.
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op, PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = dyn_cast<IntegerType>(op.getType());
    if (!type)
      return failure();
    unsigned width = type.getWidth();
    auto c = [&](int64_t v) { return rw.create<arith::ConstantIntOp>(loc, v, type); };
    Value base = op.getLhs(), exp = op.getRhs();
    Value zero = c(0), one = c(1);
    Value negative = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, exp, zero);
    auto loop = rw.create<scf::ForOp>(
        loc, rw.create<arith::ConstantIndexOp>(loc, 0),
        rw.create<arith::ConstantIndexOp>(loc, width - 1),
        rw.create<arith::ConstantIndexOp>(loc, 1), ValueRange{one, base, exp});
    {
      OpBuilder::InsertionGuard guard(rw);
      rw.setInsertionPointToStart(loop.getBody());
      Value result = loop.getRegionIterArgs()[0], b = loop.getRegionIterArgs()[1],
            e = loop.getRegionIterArgs()[2];
      Value bit = rw.create<arith::TruncIOp>(loc, rw.getI1Type(), e);
      Value times = rw.create<arith::MulIOp>(loc, result, b);
      result = rw.create<arith::SelectOp>(loc, bit, times, result);
      b = rw.create<arith::MulIOp>(loc, b, b);
      e = rw.create<arith::ShRUIOp>(loc, e, c(1));
      rw.create<scf::YieldOp>(loc, ValueRange{result, b, e});
    }
    Value odd = rw.create<arith::TruncIOp>(loc, rw.getI1Type(), exp);
    Value isOne = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, one);
    Value isMinusOne = rw.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, base, c(-1));
    Value minusOnePow = rw.create<arith::SelectOp>(loc, odd, c(-1), one);
    Value negResult = rw.create<arith::SelectOp>(
        loc, isOne, one, rw.create<arith::SelectOp>(loc, isMinusOne, minusOnePow, zero));
    rw.replaceOpWithNewOp<arith::SelectOp>(op, negative, negResult, loop.getResult(0));
    return success();
  }
};

struct MapToGpuPass : PassWrapper<MapToGpuPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MapToGpuPass)
  StringRef getArgument() const override { return "kiln-map-to-gpu"; }
  StringRef getDescription() const override {
    return "Map kiln kernels to gpu.funcs (blocks, threads, shared memory)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, scf::SCFDialect, arith::ArithDialect, cf::ControlFlowDialect,
                    memref::MemRefDialect, math::MathDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    PlanOp plan;
    module.walk([&](PlanOp p) { plan = p; });
    if (!plan) {
      module.emitError("kiln-map-to-gpu needs a kiln.plan");
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    auto gpuModule = b.create<gpu::GPUModuleOp>(module.getLoc(), "kiln_kernels");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    SmallVector<NamedAttribute> perKernel, scratchPerKernel;
    SmallVector<func::FuncOp> kernels;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("kiln.kernel"))
        kernels.push_back(fn);
    for (func::FuncOp fn : kernels) {
      SmallVector<Attribute> stages;
      int64_t scratch = 0;
      KernelMapper mapper(fn, gpuModule);
      if (failed(mapper.run(stages, scratch)))
        return signalPassFailure();
      perKernel.push_back(b.getNamedAttr(fn.getName(), b.getArrayAttr(stages)));
      scratchPerKernel.push_back(b.getNamedAttr(fn.getName(), b.getI64IntegerAttr(scratch)));
      fn.erase();
    }
    plan->setAttr("kiln.gpu_stages", b.getDictionaryAttr(perKernel));
    plan->setAttr("kiln.gpu_scratch", b.getDictionaryAttr(scratchPerKernel));

    // Block reductions -> shuffles + shared memory; math functions without a
    // PTX instruction -> polynomials, so that no libdevice call is needed.
    RewritePatternSet patterns(&getContext());
    populateGpuAllReducePatterns(patterns);
    patterns.add<ExpandIPowI>(&getContext());
    populateExpandTanPattern(patterns);
    populateExpandSinhPattern(patterns);
    populateExpandCoshPattern(patterns);
    populateExpandAsinhPattern(patterns);
    populateExpandAcoshPattern(patterns);
    populateExpandAtanhPattern(patterns);
    populateExpandPowFPattern(patterns);
    populateExpandFPowIPattern(patterns);
    populateExpandRoundFPattern(patterns);
    MathPolynomialApproximationOptions approx;
    approx.enableAvx2 = false;
    populateMathPolynomialApproximationPatterns(patterns, approx);
    if (failed(applyPatternsAndFoldGreedily(gpuModule, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createMapToGpu() { return std::make_unique<MapToGpuPass>(); }

} // namespace kiln
