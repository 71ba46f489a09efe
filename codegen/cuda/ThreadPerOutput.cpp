//===- ThreadPerOutput.cpp - One thread per output ------------------------===//
//
// This file implements the thread-per-output strategy of kiln-map-to-gpu, the one
// that maps any stage: consecutive threads own consecutive output elements
// (coalesced stores), reduction dims run serially in each thread. Elementwise
// stages take consecutive outputs per thread, 16 bytes of them where the shape
// allows (4 x f32, 8 x f16), so that loads and stores become vector accesses
// (ld/st.global.v4, half2 pairs for f16).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln {

namespace {
/// How many consecutive outputs one thread of an elementwise stage computes: as many as
/// fill 16 bytes of its widest output (4 x f32, 8 x f16), else 8 or 4 bytes (half2) when
/// the innermost loop dim's extent is not divisible, never fewer than 2. Every output
/// must be stored contiguously along that dim, so that the thread's loads and stores of
/// contiguous operands are aligned to the vector and LLVM's load/store vectorizer turns
/// them into ld/st.global.v4/.v2 (kernel arguments are declared 16-byte aligned in
/// startStage).
int64_t elementsPerThread(linalg::GenericOp op, const LoopDims &dims) {
  if (!dims.red.empty() || dims.par.empty())
    return 1;
  unsigned inner = dims.par.back();
  unsigned widest = 0;
  for (OpOperand &out : op.getDpsInitsMutable()) {
    auto type = cast<MemRefType>(out.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&out);
    unsigned bits = type.getElementTypeBitWidth();
    if (bits < 8 || bits > 32 || map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(inner, op.getContext()))
      return 1;
    widest = std::max(widest, bits);
  }
  for (int64_t bytes : {16, 8, 4}) {
    int64_t n = bytes * 8 / widest;
    if (n >= 2 && dims.parSizes.back() % n == 0 && dims.outputs >= 32 * n)
      return n;
  }
  return 1;
}
} // namespace

LogicalResult mapThreadPerOutput(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims) {
  Location loc = op.getLoc();
  const auto &[ranges, par, red, parSizes, redSizes, total, length] = dims;
  if (total == 0)
    return success();
  int64_t perThread = elementsPerThread(op, dims);
  int64_t work = total / perThread;
  int64_t threads = std::min(kMaxThreadsPerBlock, ceilDiv(work, 32) * 32);
  int64_t blocks = ceilDiv(work, threads);
  if (blocks > INT32_MAX)
    return op.emitError("too many outputs for one cuda launch");
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {threads, 1, 1});
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
  SmallVector<std::tuple<unsigned, Value, SmallVector<Value>>> stores;
  for (int64_t k = 0; k < perThread; ++k) {
    if (perThread > 1)
      loopIdx[par.back()] =
          k == 0 ? first : b.create<arith::AddIOp>(loc, first, cIndex(b, loc, k)).getResult();
    SmallVector<Value> results;
    if (red.empty()) {
      results = builder.applyParallelBody(b, op, loopIdx);
    } else {
      results = builder.reduceSerially(b, op, dims, loopIdx);
    }
    for (unsigned j = 0; j < op.getNumDpsInits(); ++j)
      stores.push_back({j, results[j], loopIdx});
  }
  // Stores after all of the thread's loads: the loads and the stores each stay adjacent
  // (mergeable into vector accesses though arguments may alias), and every read still
  // precedes the writes, as the op's semantics have it.
  for (auto &[j, value, idx] : stores)
    builder.storeOutput(b, op, j, value, idx);
  b.setInsertionPointAfter(ifOp);
  builder.finishStage(b, fn, {blocks, 1, 1}, {threads, 1, 1}, /*sync=*/false);
  return success();
}

} // namespace kiln
