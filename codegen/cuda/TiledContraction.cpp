//===- TiledContraction.cpp - GEMM-like stages in shared-memory tiles -----===//
//
// This file implements the tiled-contraction strategy of kiln-map-to-gpu: two
// operands combined over reduction dims into an output whose parallel dims split
// into rows (only the first operand) and columns (only the second): GEMM, batched
// GEMM and convolution as implicit GEMM.
//
// A block of 16x16 threads computes a (16*TM)x(16*TN) output tile, each thread
// TMxTN outputs in registers (register blocking: per K step a thread reads TM row
// and TN column values from shared memory and does TM*TN multiply-adds). Thread
// (tx, ty) owns rows ty + 16i and columns tx + 16j: its column reads are
// consecutive across a warp (no bank conflicts), its row reads broadcasts, and
// its stores coalesce. Both operand tiles are staged through shared memory KT
// steps of K at a time, every thread loading consecutive elements (the column
// side is the output's innermost dim, the row side's is K). TM, TN and KT come
// from the architecture (GpuArch.h), halved for problems smaller than the tile.
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
/// Threads per block edge, and the smallest rows, columns and K worth tiling.
constexpr int64_t kThreads = 16;
} // namespace

/// How many consecutive elements of its staged tile a thread loads at once (up to
/// 16 bytes). The tile runs along `innerDims` (delinearized in that order, the last
/// fastest), `extent` elements of them. Its innermost dims, as far as they are
/// packed in the operand (each one's stride the next one's times its range, the
/// last's 1; a unit dim the map dropped counts as packed), make a contiguous
/// block; w consecutive elements from a multiple of w stay in one block, and are
/// adjacent in memory and 16-byte aligned, when w divides the block, `inner` (the
/// tile's side), `perThread` (elements each thread stages), the offset and every
/// other index's contribution to the address. No padding. 1 where anything else
/// holds.
static int64_t vectorWidth(StageBuilder &builder, linalg::GenericOp op, unsigned operand,
                           ArrayRef<unsigned> innerDims, ArrayRef<int64_t> ranges,
                           int64_t extent, int64_t inner, int64_t perThread) {
  OpOperand *in = op.getDpsInputOperand(operand);
  auto type = dyn_cast<MemRefType>(in->get().getType());
  AffineMap map = mapWithoutUnitDims(op, *in, ranges);
  if (!type || innerDims.empty() || builder.isPadded(in->get()))
    return 1;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) || ShapedType::isDynamic(offset))
    return 1;
  // The packed block: innerDims from the last while each is a result of its own,
  // in no other result (so that the other results are the same across a group),
  // at the stride packing expects; or a unit dim (absent from the map).
  llvm::SmallBitVector inBlock(map.getNumResults());
  int64_t block = 1;
  for (unsigned d : llvm::reverse(innerDims)) {
    std::optional<unsigned> result;
    bool elsewhere = false;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (e == getAffineDimExpr(d, op.getContext()))
        result = result ? std::optional<unsigned>() : std::optional<unsigned>(i);
      else if (e.isFunctionOfDim(d))
        elsewhere = true;
    }
    if (elsewhere)
      break;
    if (!result) {
      if (ranges[d] != 1) // a unit dim (read as 0: absent from the map)
        break;
      continue;
    }
    if (strides[*result] != block)
      break;
    inBlock.set(*result);
    block *= ranges[d];
  }
  if (block == 1)
    return 1;
  int64_t bits = type.getElementTypeBitWidth();
  for (int64_t w = bits >= 8 && bits <= 32 ? 128 / bits : 1; w > 1; w /= 2) {
    bool fits = block % w == 0 && extent % w == 0 && inner % w == 0 &&
                perThread % w == 0 && offset % w == 0;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (inBlock.test(i))
        continue;
      if (auto c = dyn_cast<AffineConstantExpr>(e))
        fits &= (c.getValue() * strides[i]) % w == 0;
      else
        fits &= !ShapedType::isDynamic(strides[i]) && strides[i] % w == 0;
    }
    if (fits)
      return w;
  }
  return 1;
}

AffineMap mapWithoutUnitDims(linalg::GenericOp op, OpOperand &operand, ArrayRef<int64_t> ranges) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    dims.push_back(ranges[d] == 1 ? getAffineConstantExpr(0, context)
                                  : getAffineDimExpr(d, context));
  return simplifyAffineMap(map.replaceDimsAndSymbols(dims, {}, map.getNumDims(), 0));
}

std::optional<ContractionDims> splitContraction(linalg::GenericOp op, const LoopDims &dims) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  if (!body.getArgument(0).hasOneUse() || !body.getArgument(1).hasOneUse() ||
      !body.getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  // Only the operands and the accumulator may flow into the body.
  for (Operation &inner : body.without_terminator())
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !v.getDefiningOp<arith::ConstantOp>())
        return std::nullopt;
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isa<MemRefType>(in->get().getType()))
      return std::nullopt;
  const SmallVector<int64_t> &ranges = dims.ranges;
  if (dims.red.empty())
    return std::nullopt;
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
  SmallVector<unsigned> onlyA, onlyB;
  ContractionDims c;
  for (unsigned d : dims.par) {
    if (a[d] && !bb[d])
      onlyA.push_back(d);
    else if (bb[d] && !a[d])
      onlyB.push_back(d);
    else
      c.batch.push_back(d);
  }
  if (onlyA.empty() || onlyB.empty())
    return std::nullopt;
  // Columns (threadIdx.x, the mma's N) take the side holding the output's innermost
  // dim: stores along it coalesce.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  bool aIsColumns = false;
  if (outMap.getNumResults() > 0)
    if (auto last = dyn_cast<AffineDimExpr>(outMap.getResults().back()))
      aIsColumns = llvm::is_contained(onlyA, last.getPosition());
  c.rowOperand = aIsColumns ? 1 : 0;
  c.colOperand = aIsColumns ? 0 : 1;
  c.rowDims = aIsColumns ? onlyB : onlyA;
  c.colDims = aIsColumns ? onlyA : onlyB;
  c.rows = product(sizesOf(ranges, c.rowDims));
  c.cols = product(sizesOf(ranges, c.colDims));
  c.k = dims.length;
  c.batches = product(sizesOf(ranges, c.batch));
  return c;
}

void setLoopDims(OpBuilder &b, Location loc, ArrayRef<int64_t> ranges, ArrayRef<unsigned> dims,
                 Value linear, SmallVectorImpl<Value> &loopIdx) {
  SmallVector<Value> v = delinearize(b, loc, linear, sizesOf(ranges, dims));
  for (auto [i, d] : llvm::enumerate(dims))
    loopIdx[d] = v[i];
}

TileWalk::TileWalk(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims,
                   const OperandTile &tile, int64_t kt, Value tid, int64_t threads)
    : builder(builder), op(op), dims(dims), tile(tile), kt(kt), tid(tid), threads(threads) {
  // The block's threads load the tile's elements in turn, `w` consecutive ones
  // each, group g = tid + threads * r, zero outside the operand. The group's first
  // element decides the bounds (vectorWidth: the extents are multiples of w), and
  // its w loads are adjacent and 16-byte aligned: LLVM merges them into
  // ld.global.v4.
  inner = tile.walkOuter ? tile.outerTile : kt;
  ArrayRef<unsigned> along = tile.walkOuter ? tile.outerDims : ArrayRef<unsigned>(dims.red);
  width = vectorWidth(builder, op, tile.operand, along, dims.ranges,
                      tile.walkOuter ? tile.outerSize : dims.length, inner,
                      tile.outerTile * kt / threads);
  // Element j of a group: the first one's indices, the fastest dim's (of more than
  // one index) plus j, where a group never crosses that dim's end.
  for (unsigned d : llvm::reverse(along))
    if (dims.ranges[d] != 1) {
      stepDim = d;
      stepFastest = dims.ranges[d] % width == 0;
      break;
    }
  groups = tile.outerTile * kt / (threads * width);
}

TileWalk::Group TileWalk::group(OpBuilder &b, int64_t r, Value k0) const {
  Location loc = op.getLoc();
  Value first = threads * r != 0 ? b.create<arith::AddIOp>(loc, tid, cIndex(b, loc, threads * r))
                            : tid;
  Value e = b.create<arith::MulIOp>(loc, first, cIndex(b, loc, width));
  Value hi = b.create<arith::DivUIOp>(loc, e, cIndex(b, loc, inner));
  Value lo = b.create<arith::RemUIOp>(loc, e, cIndex(b, loc, inner));
  Group g;
  g.kk = tile.walkOuter ? hi : lo;
  g.o = tile.walkOuter ? lo : hi;
  g.outer = b.create<arith::AddIOp>(loc, tile.base, g.o);
  g.k = b.create<arith::AddIOp>(loc, k0, g.kk);
  g.inBounds = b.create<arith::AndIOp>(loc, ltIndex(b, loc, g.outer, tile.outerSize), ltIndex(b, loc, g.k, dims.length));
  return g;
}

void TileWalk::setIndices(OpBuilder &b, const Group &g, int64_t j,
                          SmallVectorImpl<Value> &loopIdx) const {
  Location loc = op.getLoc();
  bool step = j != 0 && stepFastest;
  setLoopDims(b, loc, dims.ranges, tile.outerDims,
              tile.walkOuter && !step ? addIndex(b, loc, g.outer, j) : g.outer, loopIdx);
  setLoopDims(b, loc, dims.ranges, dims.red,
              tile.walkOuter || step ? g.k : addIndex(b, loc, g.k, j), loopIdx);
  if (step)
    loopIdx[stepDim] = addIndex(b, loc, loopIdx[stepDim], j);
}

SmallVector<Value> TileWalk::load(OpBuilder &b, const Group &g, Type stored,
                                  SmallVectorImpl<Value> &loopIdx) const {
  Location loc = op.getLoc();
  auto ifOp = b.create<scf::IfOp>(loc, SmallVector<Type>(width, stored), g.inBounds, true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  SmallVector<Value> loaded, zeros;
  for (int64_t j = 0; j < width; ++j) {
    setIndices(tb, g, j, loopIdx);
    Value v = builder.loadOperand(tb, op, *op.getDpsInputOperand(tile.operand), loopIdx);
    loaded.push_back(tile.convert ? tile.convert(tb, v) : v);
  }
  tb.create<scf::YieldOp>(loc, loaded);
  OpBuilder eb = ifOp.getElseBodyBuilder();
  zeros.assign(width, eb.create<arith::ConstantOp>(loc, eb.getZeroAttr(stored)).getResult());
  eb.create<scf::YieldOp>(loc, zeros);
  return SmallVector<Value>(ifOp.getResults());
}

void TileWalk::store(OpBuilder &b, const Group &g, ValueRange values, Value buf,
                     ValueRange prefix) const {
  Location loc = op.getLoc();
  for (int64_t j = 0; j < width; ++j) {
    Value oj = tile.walkOuter ? addIndex(b, loc, g.o, j) : g.o, kj = tile.walkOuter ? g.kk : addIndex(b, loc, g.kk, j);
    SmallVector<Value> idx(prefix);
    idx.append(tile.kInner ? SmallVector<Value>{oj, kj} : SmallVector<Value>{kj, oj});
    b.create<memref::StoreOp>(loc, values[j], buf, idx);
  }
}

void stageOperandTile(StageBuilder &builder, OpBuilder &b, linalg::GenericOp op,
                      const LoopDims &dims, const OperandTile &tile, Value buf, Value k0,
                      int64_t kt, Value tid, int64_t threads, SmallVectorImpl<Value> &loopIdx) {
  TileWalk walk(builder, op, dims, tile, kt, tid, threads);
  Type stored = cast<MemRefType>(buf.getType()).getElementType();
  for (int64_t r = 0; r < walk.groups; ++r) {
    TileWalk::Group g = walk.group(b, r, k0);
    walk.store(b, g, walk.load(b, g, stored, loopIdx), buf, {});
  }
}

bool mapTiledContraction(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims,
                         const ContractionTile &maxTile) {
  std::optional<ContractionDims> c = splitContraction(op, dims);
  if (!c)
    return false;
  Block &body = op.getRegion().front();
  const SmallVector<int64_t> &ranges = dims.ranges;
  const SmallVector<unsigned> &red = dims.red;
  const SmallVector<unsigned> &batch = c->batch, &rowDims = c->rowDims, &colDims = c->colDims;
  unsigned rowOperand = c->rowOperand, colOperand = c->colOperand;
  int64_t rows = c->rows, cols = c->cols, k = c->k, nb = c->batches;
  if (rows < kThreads || cols < kThreads || k < kThreads || nb > 65535)
    return false;
  // The tile: halved while a smaller one covers the problem as well.
  int64_t tm = maxTile.rows, tn = maxTile.cols, kt = maxTile.k;
  while (tm > 1 && kThreads * tm / 2 >= rows)
    tm /= 2;
  while (tn > 1 && kThreads * tn / 2 >= cols)
    tn /= 2;
  while (kt > kThreads && kt / 2 >= k)
    kt /= 2;
  const int64_t bm = kThreads * tm, bn = kThreads * tn, threads = kThreads * kThreads;
  if (ceilDiv(rows, bm) > 65535 || (bm * kt) % threads || (kt * bn) % threads)
    return false;

  Location loc = op.getLoc();
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn = builder.startStage(b, {kThreads, kThreads, 1});
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto tileType = [&](unsigned operand, int64_t d0, int64_t d1) {
    Type elem = cast<MemRefType>(op.getDpsInputOperand(operand)->get().getType())
                    .getElementType();
    return MemRefType::get({d0, d1}, elem, MemRefLayoutAttrInterface(), workgroup);
  };
  // rowTile[m][kk] (K innermost, as the row operand is read), colTile[kk][n].
  Value rowTile = fn.addWorkgroupAttribution(tileType(rowOperand, bm, kt), loc);
  Value colTile = fn.addWorkgroupAttribution(tileType(colOperand, kt, bn), loc);
  Value tx = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value ty = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::y);
  Value bx = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value by = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::y);
  Value bz = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::z);
  Value zero = cIndex(b, loc, 0);
  Value rowBase = mulIndex(b, loc, by, bm), colBase = mulIndex(b, loc, bx, bn);
  Value tid = b.create<arith::AddIOp>(loc, mulIndex(b, loc, ty, kThreads), tx);
  Value row0 = b.create<arith::AddIOp>(loc, rowBase, ty);
  Value col0 = b.create<arith::AddIOp>(loc, colBase, tx);
  SmallVector<Value> rowsOf, colsOf, rowOk, colOk;
  for (int64_t i = 0; i < tm; ++i) {
    rowsOf.push_back(addIndex(b, loc, row0, kThreads * i));
    rowOk.push_back(ltIndex(b, loc, rowsOf.back(), rows));
  }
  for (int64_t j = 0; j < tn; ++j) {
    colsOf.push_back(addIndex(b, loc, col0, kThreads * j));
    colOk.push_back(ltIndex(b, loc, colsOf.back(), cols));
  }

  SmallVector<Value> loopIdx(ranges.size(), zero);
  SmallVector<Value> batchIdx = delinearize(b, loc, bz, sizesOf(ranges, batch));
  for (auto [i, d] : llvm::enumerate(batch))
    loopIdx[d] = batchIdx[i];
  auto setDims = [&](OpBuilder &ob, ArrayRef<unsigned> dims, Value linear) {
    setLoopDims(ob, loc, ranges, dims, linear, loopIdx);
  };

  // The accumulators (row-major over i, j) start from the output (or the folded
  // fill) where in range.
  Type accType = body.getArgument(2).getType();
  SmallVector<Value> accInit;
  for (int64_t i = 0; i < tm; ++i)
    for (int64_t j = 0; j < tn; ++j) {
      Value ok = b.create<arith::AndIOp>(loc, rowOk[i], colOk[j]);
      auto initIf = b.create<scf::IfOp>(loc, TypeRange{accType}, ok, true);
      OpBuilder tb = initIf.getThenBodyBuilder();
      setDims(tb, rowDims, rowsOf[i]);
      setDims(tb, colDims, colsOf[j]);
      tb.create<scf::YieldOp>(loc, builder.initialValue(tb, op, 0, loopIdx));
      OpBuilder eb = initIf.getElseBodyBuilder();
      eb.create<scf::YieldOp>(loc, eb.create<arith::ConstantOp>(loc, eb.getZeroAttr(accType))
                                       .getResult());
      accInit.push_back(initIf.getResult(0));
    }
  auto kLoop = b.create<scf::ForOp>(loc, zero, cIndex(b, loc, k), cIndex(b, loc, kt), accInit);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // rowTile[m][kk] walked along K, colTile[kk][n] along the columns.
    stageOperandTile(builder, lb, op, dims,
                     {rowOperand, rowDims, rowBase, rows, bm, /*kInner=*/true,
                      /*walkOuter=*/false, nullptr},
                     rowTile, k0, kt, tid, threads, loopIdx);
    stageOperandTile(builder, lb, op, dims,
                     {colOperand, colDims, colBase, cols, bn, /*kInner=*/false,
                      /*walkOuter=*/true, nullptr},
                     colTile, k0, kt, tid, threads, loopIdx);
    lb.create<gpu::BarrierOp>(loc);
    // A constant trip count where kt divides K (the compiler unrolls it).
    Value kEnd = k % kt == 0 ? cIndex(lb, loc, kt)
                             : lb.create<arith::MinUIOp>(
                                   loc, cIndex(lb, loc, kt),
                                   lb.create<arith::SubIOp>(loc, cIndex(lb, loc, k), k0))
                                   .getResult();
    auto inner = lb.create<scf::ForOp>(loc, zero, kEnd, cIndex(lb, loc, 1),
                                       kLoop.getRegionIterArgs());
    {
      OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
      Value kk = inner.getInductionVar();
      SmallVector<Value> rv, cv, next;
      for (int64_t i = 0; i < tm; ++i)
        rv.push_back(ib.create<memref::LoadOp>(loc, rowTile,
                                               ValueRange{addIndex(ib, loc, ty, kThreads * i), kk}));
      for (int64_t j = 0; j < tn; ++j)
        cv.push_back(ib.create<memref::LoadOp>(loc, colTile,
                                               ValueRange{kk, addIndex(ib, loc, tx, kThreads * j)}));
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t j = 0; j < tn; ++j) {
          builder.mapping.map(body.getArgument(rowOperand), rv[i]);
          builder.mapping.map(body.getArgument(colOperand), cv[j]);
          builder.mapping.map(body.getArgument(2), inner.getRegionIterArgs()[i * tn + j]);
          for (Operation &o : body.without_terminator())
            ib.clone(o, builder.mapping);
          next.push_back(
              builder.mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
        }
      ib.create<scf::YieldOp>(loc, next);
    }
    lb.create<gpu::BarrierOp>(loc);
    lb.create<scf::YieldOp>(loc, inner.getResults());
  }
  for (unsigned d : red)
    loopIdx[d] = zero;
  for (int64_t i = 0; i < tm; ++i)
    for (int64_t j = 0; j < tn; ++j) {
      Value ok = b.create<arith::AndIOp>(loc, rowOk[i], colOk[j]);
      auto storeIf = b.create<scf::IfOp>(loc, ok, false);
      OpBuilder tb = OpBuilder::atBlockBegin(&storeIf.getThenRegion().front());
      setDims(tb, rowDims, rowsOf[i]);
      setDims(tb, colDims, colsOf[j]);
      builder.storeOutput(tb, op, 0, kLoop.getResult(i * tn + j), loopIdx);
    }
  builder.finishStage(b, fn, {ceilDiv(cols, bn), ceilDiv(rows, bm), nb},
                      {kThreads, kThreads, 1}, /*sync=*/true);
  return true;
}

} // namespace kiln
