//===- TensorCoreContraction.cpp - Contractions on tensor cores ------------===//
//
// This file implements the tensor-core strategy of kiln-map-to-gpu: a contraction
// (GEMM, batched GEMM, convolution as implicit GEMM: splitContraction) whose body
// is `acc + extf(a) * extf(b)` with `a` an f16 (or bf16) value computed from the
// first operand alone, `b` from the second alone, and an f32 accumulator: the f16
// conversion's contractions, with their operand casts fused in.
//
// A block is 2x2 warps (128 threads). Each warp computes FM x FN tiles of 16x8
// outputs with `nvgpu.mma.sync` m16n8k16 (PTX mma.sync.aligned.m16n8k16.row.col
// .f32.{f16,bf16}.{f16,bf16}.f32), so a block covers (2*16*FM) x (2*8*FN) outputs;
// FM = 2, FN = 4 (64x64) for large problems, smaller for small ones. Both operand
// tiles are staged in shared memory 32 K steps at a time, in two stages: while the
// warps multiply one K step, the next one is on its way into the other stage (a
// 2-stage pipeline, a barrier between steps). An operand stored as f16/bf16 and
// contiguous along K in 16-byte groups is copied by cp.async (nvgpu's
// device_async_copy, zero-filled past the operand, one group per step, waited for
// before the barrier); the others are loaded into registers before the product
// and stored after it, converted to the multiplicand type on the way (an f32
// input's cast). Tiles are K-innermost with 8 elements of padding per row, so that
// each lane's fragment registers are 32-bit loads from distinct banks. The
// fragments follow the PTX ISA's layout for m16n8k16 (lane =
// 4 * group + thread in group; A register r holds row group + 8 (r & 1), columns
// 2 * thread + 8 (r >> 1) and the next; B register r rows 2 * thread + 8 r and the
// next, column group; accumulator register pair r row group + 8 r, columns
// 2 * thread and the next), which the cuda-sim simulator implements lane by lane.
// With TF32 allowed (--allow-tf32), an f32 contraction takes the same kernel with
// f32 tiles (4 elements of padding) and m16n8k8 .tf32 (PTX
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: A register r holds row group +
// 8 (r & 1), column thread + 4 (r >> 1); B register r row thread + 4 r, column
// group); the hardware reads the top 19 bits of each f32.
// The accumulators start from the output's initial value and the epilogue
// (StageBuilder::storeOutput: bias, residual, activation, the f16 narrowing) is
// applied to each accumulator register before its single store.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/MappingStrategies.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln {

namespace {
constexpr int64_t kWarp = 32, kWarpsM = 2, kWarpsN = 2;
constexpr int64_t kThreads = kWarp * kWarpsM * kWarpsN;
/// K steps staged at a time (two mma k16 steps), and the padding of each tile row.
constexpr int64_t kStageK = 32, kPad = 8;

/// The body `acc + extf(x0) * extf(x1)`: x0 computed from operand 0 alone, x1 from
/// operand 1 alone, both of the multiplicand type (f16 or bf16), acc f32.
struct MmaBody {
  Value side[2];
  Type multiplicand;
};

/// The block arguments `v` depends on within `body`.
llvm::SmallBitVector argsOf(Value v, Block &body) {
  llvm::SmallBitVector used(body.getNumArguments());
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() == &body)
        used.set(arg.getArgNumber());
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (def && def->getBlock() == &body)
      llvm::append_range(work, def->getOperands());
  }
  return used;
}

std::optional<MmaBody> matchMmaBody(linalg::GenericOp op, bool tf32) {
  Block &body = op.getRegion().front();
  Value acc = body.getArgument(2);
  if (!acc.getType().isF32())
    return std::nullopt;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return std::nullopt;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  MmaBody m;
  for (Value factor : {mul.getLhs(), mul.getRhs()}) {
    // A widened f16/bf16 value; with TF32, an f32 one as it is.
    auto ext = factor.getDefiningOp<arith::ExtFOp>();
    if (!ext && !(tf32 && factor.getType().isF32()))
      return std::nullopt;
    Value x = ext ? ext.getIn() : factor;
    llvm::SmallBitVector args = argsOf(x, body);
    if (args.count() != 1 || args.test(2))
      return std::nullopt;
    unsigned operand = args.find_first();
    if (m.side[operand])
      return std::nullopt;
    m.side[operand] = x;
    if (m.multiplicand && m.multiplicand != x.getType())
      return std::nullopt;
    m.multiplicand = x.getType();
  }
  if (!m.multiplicand.isF16() && !m.multiplicand.isBF16() && !m.multiplicand.isF32())
    return std::nullopt;
  return m;
}

/// The body's ops that compute `side`, in order.
SmallVector<Operation *> sliceOf(Block &body, Value side) {
  llvm::SmallPtrSet<Operation *, 8> slice;
  SmallVector<Value> work{side};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && def->getBlock() == &body && slice.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered;
  for (Operation &o : body.without_terminator())
    if (slice.contains(&o))
      ordered.push_back(&o);
  return ordered;
}

/// Whether `operand` runs contiguously along the outer (non-reduction) dims rather
/// than along K: its innermost index is an outer dim.
bool contiguousAlongOuter(linalg::GenericOp op, unsigned operand, ArrayRef<unsigned> outer,
                          ArrayRef<int64_t> ranges) {
  AffineMap map = mapWithoutUnitDims(op, *op.getDpsInputOperand(operand), ranges);
  if (map.getNumResults() == 0)
    return false;
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  return last && llvm::is_contained(outer, last.getPosition());
}

} // namespace

bool mapTensorCoreContraction(StageBuilder &builder, linalg::GenericOp op,
                              const LoopDims &dims, const TensorCoreOptions &options,
                              std::string &reason) {
  const int64_t minSize = options.minSize;
  std::optional<ContractionDims> c = splitContraction(op, dims);
  if (!c)
    return false;
  std::optional<MmaBody> mma = matchMmaBody(op, options.tf32);
  if (!mma) {
    auto all = [&](auto pred) {
      return llvm::all_of(op->getOperandTypes(),
                          [&](Type t) { return pred(getElementTypeOrSelf(t)); });
    };
    reason = all([](Type t) { return t.isF32(); })
                 ? "f32 operands (fp32 builds keep SIMT; --precision fp16 or auto, or "
                   "--allow-tf32)"
             : all([](Type t) { return t.isF64(); })
                 ? "f64 operands (tensor cores take f16 and bf16)"
                 : "its body is not acc + extf(a) * extf(b) of f16/bf16 into f32";
    return false;
  }
  const int64_t rows = c->rows, cols = c->cols, k = c->k, nb = c->batches;
  if (rows < minSize || cols < minSize || k < minSize) {
    reason = llvm::formatv("{0} rows, {1} columns, K {2}: tensor cores take {3} of each", rows,
                           cols, k, minSize);
    return false;
  }
  // Per warp: fm 16-row tiles by fn 8-column tiles.
  const int64_t fm = rows > 32 ? 2 : 1, fn = cols > 32 ? 4 : cols > 16 ? 2 : 1;
  const int64_t bm = kWarpsM * 16 * fm, bn = kWarpsN * 8 * fn;
  if (nb > 65535 || ceilDiv(rows, bm) > 65535) {
    reason = "its grid exceeds 65,535 blocks in y or z";
    return false;
  }
  Type half = mma->multiplicand, f32 = Float32Type::get(op.getContext());
  // TF32: f32 tiles, m16n8k8 (the hardware reads each f32 as TF32: its top 19 bits).
  const bool isTf32 = half.isF32();
  const int64_t mmaK = isTf32 ? 8 : 16, pad = isTf32 ? 4 : kPad;
  reason = llvm::formatv("{0}x{1}x{2}{3} of {4} on mma.sync m16n8k{5}, {6}x{7} block tiles",
                         rows, cols, k, nb > 1 ? llvm::formatv(" ({0} batches)", nb).str() : "",
                         isTf32 ? "tf32" : half.isF16() ? "f16" : "bf16", mmaK, bm, bn);

  Location loc = op.getLoc();
  OpBuilder b(op.getContext());
  gpu::GPUFuncOp fn_ = builder.startStage(b, {kThreads, 1, 1});
  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  // Both tiles K-innermost, two stages each: aTile[s][m][kk], bTile[s][n][kk].
  auto tileType = [&](int64_t outer) {
    return MemRefType::get({2, outer, kStageK + pad}, half, MemRefLayoutAttrInterface(),
                           workgroup);
  };
  Value aTile = fn_.addWorkgroupAttribution(tileType(bm), loc);
  Value bTile = fn_.addWorkgroupAttribution(tileType(bn), loc);
  // 16-byte aligned: cp.async writes 16 bytes at a time, fragments read 4.
  for (unsigned i = 0; i < fn_.getNumWorkgroupAttributions(); ++i)
    fn_.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                    b.getI64IntegerAttr(16));

  Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value bx = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value by = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::y);
  Value bz = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::z);
  Value zero = cIndex(b, loc, 0);
  Value warp = divIndex(b, loc, tid, kWarp), lane = remIndex(b, loc, tid, kWarp);
  Value group = divIndex(b, loc, lane, 4), inGroup = remIndex(b, loc, lane, 4);
  Value rowBase = mulIndex(b, loc, by, bm), colBase = mulIndex(b, loc, bx, bn);
  // The warp's first row and column in the block's tile.
  Value warpRow = mulIndex(b, loc, divIndex(b, loc, warp, kWarpsN), 16 * fm);
  Value warpCol = mulIndex(b, loc, remIndex(b, loc, warp, kWarpsN), 8 * fn);

  const SmallVector<int64_t> &ranges = dims.ranges;
  SmallVector<Value> loopIdx(ranges.size(), zero);
  SmallVector<Value> batchIdx = delinearize(b, loc, bz, sizesOf(ranges, c->batch));
  for (auto [i, d] : llvm::enumerate(c->batch))
    loopIdx[d] = batchIdx[i];

  // Accumulator register (i, j, r, e) holds row group + 8r of the warp's 16-row
  // tile i and column 2 * inGroup + e of its 8-column tile j. A row's indices
  // (its loop dims' values, whether it is inside the output) are built once per
  // (i, r), a column's once per (j, e), where they are used: not live across the
  // K loop.
  struct Line {
    Value inBounds;
    SmallVector<Value> idx; // the row (or column) dims' indices
  };
  struct Places {
    SmallVector<Line> rowLines, colLines; // [i * 2 + r], [j * 2 + e]
  };
  // Column e = 1 is column 0's neighbour along the fastest column dim (of more
  // than one index) where that dim's range is even (the column of e = 0 is).
  std::optional<unsigned> fastestCol;
  for (unsigned d : llvm::reverse(c->colDims))
    if (ranges[d] != 1) {
      if (ranges[d] % 2 == 0)
        fastestCol = d;
      break;
    }
  auto lineAt = [&](OpBuilder &ob, Value linear, ArrayRef<unsigned> lineDims, int64_t size) {
    Line line;
    line.inBounds = ltIndex(ob, loc, linear, size);
    SmallVector<Value> idx(ranges.size(), zero);
    setLoopDims(ob, loc, ranges, lineDims, linear, idx);
    for (unsigned d : lineDims)
      line.idx.push_back(idx[d]);
    return line;
  };
  auto places = [&](OpBuilder &ob) {
    Places p;
    Value groupRow = ob.create<arith::AddIOp>(loc, rowBase,
                                              ob.create<arith::AddIOp>(loc, warpRow, group));
    for (int64_t i = 0; i < fm; ++i)
      for (int64_t r = 0; r < 2; ++r)
        p.rowLines.push_back(lineAt(ob, addIndex(ob, loc, groupRow, 16 * i + 8 * r),
                                    c->rowDims, rows));
    Value pairCol = ob.create<arith::AddIOp>(
        loc, colBase, ob.create<arith::AddIOp>(loc, warpCol, mulIndex(ob, loc, inGroup, 2)));
    for (int64_t j = 0; j < fn; ++j) {
      Value col = addIndex(ob, loc, pairCol, 8 * j);
      Line first = lineAt(ob, col, c->colDims, cols);
      Line second;
      if (fastestCol) {
        second.inBounds = ltIndex(ob, loc, addIndex(ob, loc, col, 1), cols);
        second.idx = first.idx;
        size_t at = llvm::find(c->colDims, *fastestCol) - c->colDims.begin();
        second.idx[at] = addIndex(ob, loc, second.idx[at], 1);
      } else {
        second = lineAt(ob, addIndex(ob, loc, col, 1), c->colDims, cols);
      }
      p.colLines.push_back(std::move(first));
      p.colLines.push_back(std::move(second));
    }
    return p;
  };
  // Register (i, j, r, e)'s output indices into loopIdx; whether it is inside.
  auto place = [&](OpBuilder &ob, const Places &p, int64_t i, int64_t j, int64_t r,
                   int64_t e) {
    const Line &row = p.rowLines[i * 2 + r], &col = p.colLines[j * 2 + e];
    for (auto [n, d] : llvm::enumerate(c->rowDims))
      loopIdx[d] = row.idx[n];
    for (auto [n, d] : llvm::enumerate(c->colDims))
      loopIdx[d] = col.idx[n];
    return ob.create<arith::AndIOp>(loc, row.inBounds, col.inBounds).getResult();
  };
  auto accType = VectorType::get({2, 2}, f32);
  SmallVector<Value> accInit;
  if (Value uniform = builder.uniformInitialValue(op, 0)) {
    Value splat;
    if (auto constant = uniform.getDefiningOp<arith::ConstantOp>()) {
      splat = b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(accType, cast<TypedAttr>(constant.getValue())));
    } else {
      splat = b.create<arith::ConstantOp>(loc, b.getZeroAttr(accType));
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          splat = b.create<vector::InsertOp>(loc, uniform, splat, ArrayRef<int64_t>{r, e});
    }
    accInit.assign(fm * fn, splat);
  } else {
    Places p = places(b);
    for (int64_t i = 0; i < fm; ++i)
      for (int64_t j = 0; j < fn; ++j) {
        Value acc = b.create<arith::ConstantOp>(loc, b.getZeroAttr(accType));
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t e = 0; e < 2; ++e) {
            Value inBounds = place(b, p, i, j, r, e);
            auto initIf = b.create<scf::IfOp>(loc, TypeRange{f32}, inBounds, true);
            OpBuilder tb = initIf.getThenBodyBuilder();
            tb.create<scf::YieldOp>(loc, builder.initialValue(tb, op, 0, loopIdx));
            OpBuilder eb = initIf.getElseBodyBuilder();
            eb.create<scf::YieldOp>(
                loc, eb.create<arith::ConstantOp>(loc, eb.getZeroAttr(f32)).getResult());
            acc = b.create<vector::InsertOp>(loc, initIf.getResult(0), acc,
                                             ArrayRef<int64_t>{r, e});
          }
        accInit.push_back(acc);
      }
  }

  // Each operand's tile walk; a tile whose operand is f16/bf16 as stored (no
  // conversion), unpadded and contiguous along K in 16-byte groups is copied by
  // cp.async, the others load into registers and store after the product.
  struct Operand {
    OperandTile tile;
    std::unique_ptr<TileWalk> walk;
    Value buf;
    bool async;
  };
  SmallVector<Operand, 2> operands;
  auto addOperand = [&](unsigned operand, ArrayRef<unsigned> outerDims, Value base,
                        int64_t outerSize, int64_t outerTile, Value buf) {
    Value side = mma->side[operand];
    Block &body = op.getRegion().front();
    OperandTile tile{operand, outerDims, base, outerSize, outerTile, /*kInner=*/true,
                     contiguousAlongOuter(op, operand, outerDims, dims.ranges), nullptr};
    // The conversion: what computes `side` from the block argument, cloned with
    // the loaded element for it.
    if (side != body.getArgument(operand))
      tile.convert = [&body, operand, side, slice = sliceOf(body, side)](OpBuilder &ob,
                                                                          Value loaded) {
        IRMapping map;
        map.map(body.getArgument(operand), loaded);
        for (Operation *o : slice)
          ob.clone(*o, map);
        return map.lookupOrDefault(side);
      };
    operands.push_back({tile, nullptr, buf, false});
  };
  addOperand(c->rowOperand, c->rowDims, rowBase, rows, bm, aTile);
  addOperand(c->colOperand, c->colDims, colBase, cols, bn, bTile);
  for (Operand &o : operands) {
    o.walk = std::make_unique<TileWalk>(builder, op, dims, o.tile, kStageK, tid, kThreads);
    o.async = !o.tile.convert && !o.tile.walkOuter &&
              o.walk->width * half.getIntOrFloatBitWidth() == 128;
  }
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // Issues K step `k0` into tile stage `stageIdx`: the asynchronous copies (one
  // group), and the register loads, whose stores `storeLater` then makes.
  using Pending = SmallVector<std::pair<TileWalk::Group, SmallVector<Value>>>;
  auto issue = [&](OpBuilder &ob, Value k0, Value stageIdx,
                   SmallVector<Pending, 2> &later) -> Value {
    SmallVector<Value> tokens;
    later.assign(operands.size(), {});
    for (auto [n, o] : llvm::enumerate(operands)) {
      for (int64_t r = 0; r < o.walk->groups; ++r) {
        TileWalk::Group g = o.walk->group(ob, r, k0);
        if (!o.async) {
          later[n].push_back({g, o.walk->load(ob, g, half, loopIdx)});
          continue;
        }
        // Outside the operand: no bytes read (zero-filled), from a clamped address.
        Value zeroIdx = cIndex(ob, loc, 0);
        TileWalk::Group at = g;
        at.outer = ob.create<arith::SelectOp>(loc, g.inBounds, g.outer, zeroIdx);
        at.k = ob.create<arith::SelectOp>(loc, g.inBounds, g.k, zeroIdx);
        o.walk->setIndices(ob, at, 0, loopIdx);
        OpOperand *in = op.getDpsInputOperand(o.tile.operand);
        auto srcIdx = affine::expandAffineMap(ob, loc, op.getMatchingIndexingMap(in), loopIdx);
        Value n8 = cIndex(ob, loc, o.walk->width);
        Value srcElements = ob.create<arith::SelectOp>(loc, g.inBounds, n8, zeroIdx);
        tokens.push_back(ob.create<nvgpu::DeviceAsyncCopyOp>(
            loc, tokenType, o.buf, ValueRange{stageIdx, g.o, g.kk},
            builder.mapping.lookupOrDefault(in->get()), *srcIdx,
            ob.getIndexAttr(o.walk->width), srcElements, ob.getUnitAttr()));
      }
    }
    if (tokens.empty())
      return Value();
    return ob.create<nvgpu::DeviceAsyncCreateGroupOp>(loc, tokenType, tokens);
  };
  auto storeLater = [&](OpBuilder &ob, ArrayRef<Pending> later, Value stageIdx) {
    for (auto [n, o] : llvm::enumerate(operands))
      for (auto &[g, values] : later[n])
        o.walk->store(ob, g, values, o.buf, stageIdx);
  };
  auto waitCopies = [&](OpBuilder &ob, Value copies) {
    if (copies)
      ob.create<nvgpu::DeviceAsyncWaitOp>(loc, copies, ob.getI32IntegerAttr(0));
  };
  // The pipeline, one step past K's: step s issues K step s into tile stage s % 2,
  // then (from s = 1) multiplies K step s - 1 from the other stage, so that the
  // next tile's loads are in flight while the tensor cores work; the last step's
  // loads are past K (all zero, never read). A barrier after each step: its tile
  // complete for every thread, and the stage it read free to be refilled. The
  // staging code is built once.
  const int64_t steps = ceilDiv(k, kStageK);
  auto kLoop = b.create<scf::ForOp>(loc, zero, cIndex(b, loc, steps + 1), cIndex(b, loc, 1),
                                    accInit);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(kLoop.getBody());
    Value step = kLoop.getInductionVar();
    Value stage = remIndex(lb, loc, step, 2), other = remIndex(lb, loc, addIndex(lb, loc, step, 1), 2);
    SmallVector<Pending, 2> later;
    Value copies = issue(lb, mulIndex(lb, loc, step, kStageK), stage, later);
    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    auto multiply = lb.create<scf::IfOp>(
        loc, kLoop.getResultTypes(),
        lb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, step, zero), true);
    OpBuilder eb = multiply.getElseBodyBuilder();
    eb.create<scf::YieldOp>(loc, acc);
    OpBuilder mb = multiply.getThenBodyBuilder();
    // Fragment registers in the PTX ISA's layouts (lane = 4 group + inGroup).
    // m16n8k16 f16/bf16: 32-bit registers of two elements: A register r =
    // tile[row + 8 (r & 1)][2 inGroup + 8 (r >> 1) + {0, 1}], B register r =
    // tile[col][2 inGroup + 8 r + {0, 1}]. m16n8k8 tf32: one element each: A
    // register r = tile[row + 8 (r & 1)][inGroup + 4 (r >> 1)], B register r =
    // tile[col][inGroup + 4 r].
    const int64_t perReg = isTf32 ? 1 : 2, kHalf = mmaK / 2;
    auto regType = VectorType::get({perReg}, half);
    auto reg = [&](Value tile, Value outer, Value kk) -> Value {
      return mb.create<vector::LoadOp>(loc, regType, tile, ValueRange{other, outer, kk});
    };
    for (int64_t ks = 0; ks < kStageK; ks += mmaK) {
      Value kk = addIndex(mb, loc, mulIndex(mb, loc, inGroup, perReg), ks);
      SmallVector<Value> a, bv;
      for (int64_t i = 0; i < fm; ++i) {
        Value frag = mb.create<arith::ConstantOp>(
            loc, mb.getZeroAttr(VectorType::get({4, perReg}, half)));
        Value row = addIndex(mb, loc, mb.create<arith::AddIOp>(loc, warpRow, group), 16 * i);
        for (int64_t r = 0; r < 4; ++r)
          frag = mb.create<vector::InsertOp>(
              loc,
              reg(aTile, addIndex(mb, loc, row, 8 * (r & 1)),
                  addIndex(mb, loc, kk, kHalf * (r >> 1))),
              frag, r);
        a.push_back(frag);
      }
      for (int64_t j = 0; j < fn; ++j) {
        Value frag = mb.create<arith::ConstantOp>(
            loc, mb.getZeroAttr(VectorType::get({2, perReg}, half)));
        Value col = addIndex(mb, loc, mb.create<arith::AddIOp>(loc, warpCol, group), 8 * j);
        for (int64_t r = 0; r < 2; ++r)
          frag = mb.create<vector::InsertOp>(
              loc, reg(bTile, col, addIndex(mb, loc, kk, kHalf * r)), frag, r);
        bv.push_back(frag);
      }
      for (int64_t i = 0; i < fm; ++i)
        for (int64_t j = 0; j < fn; ++j)
          acc[i * fn + j] = mb.create<nvgpu::MmaSyncOp>(
              loc, acc[i * fn + j].getType(), a[i], bv[j], acc[i * fn + j],
              mb.getI64ArrayAttr({16, 8, mmaK}), isTf32 ? mb.getUnitAttr() : UnitAttr());
    }
    mb.create<scf::YieldOp>(loc, acc);
    storeLater(lb, later, stage);
    waitCopies(lb, copies);
    lb.create<gpu::BarrierOp>(loc);
    lb.create<scf::YieldOp>(loc, multiply.getResults());
  }

  // The epilogue on each accumulator register, then its store.
  for (unsigned d : dims.red)
    loopIdx[d] = zero;
  Places out = places(b);
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          Value inBounds = place(b, out, i, j, r, e);
          auto storeIf = b.create<scf::IfOp>(loc, inBounds, false);
          OpBuilder tb = OpBuilder::atBlockBegin(&storeIf.getThenRegion().front());
          Value v = tb.create<vector::ExtractOp>(loc, kLoop.getResult(i * fn + j),
                                                 ArrayRef<int64_t>{r, e});
          builder.storeOutput(tb, op, 0, v, loopIdx);
        }
  builder.finishStage(b, fn_, {ceilDiv(cols, bn), ceilDiv(rows, bm), nb}, {kThreads, 1, 1},
                      /*sync=*/true);
  return true;
}

} // namespace kiln
