//===- TiledContraction.cpp - GEMM-like stages in shared-memory tiles -----===//
//
// This file implements the tiled-contraction strategy of kiln-map-to-gpu: two
// operands combined over reduction dims into an output whose parallel dims split
// into rows (only the first operand) and columns (only the second): GEMM, batched
// GEMM and convolution as implicit GEMM. 16x16 output tiles per block, both
// operand tiles staged through shared memory per 16-wide K step; the column side
// is the output's innermost dim so that loads and stores coalesce.
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
/// Output tile edge and K step.
constexpr int64_t kTile = 16;
} // namespace

bool mapTiledContraction(StageBuilder &builder, linalg::GenericOp op, const LoopDims &dims) {
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
  gpu::GPUFuncOp fn = builder.startStage(b, {kTile, kTile, 1});
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
    tb.create<scf::YieldOp>(loc, builder.initialValue(tb, op, 0, loopIdx));
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
      tb.create<scf::YieldOp>(loc, builder.loadOperand(tb, op, *op.getDpsInputOperand(operand), loopIdx));
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
      builder.mapping.map(body.getArgument(rowOperand), rv);
      builder.mapping.map(body.getArgument(colOperand), cv);
      builder.mapping.map(body.getArgument(2), inner.getRegionIterArgs()[0]);
      for (Operation &o : body.without_terminator())
        ib.clone(o, builder.mapping);
      ib.create<scf::YieldOp>(loc, builder.mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
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
    builder.storeOutput(tb, op, 0, kLoop.getResult(0), loopIdx);
  }
  b.setInsertionPointAfter(storeIf);
  builder.finishStage(b, fn, {ceilDiv(cols, kTile), ceilDiv(rows, kTile), nb}, {kTile, kTile, 1},
                      /*sync=*/true);
  return true;
}

} // namespace kiln
