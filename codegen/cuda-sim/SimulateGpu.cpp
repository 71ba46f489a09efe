//===- SimulateGpu.cpp - The cuda kernels, for the CPU simulator -----------===//
//
// This file implements `kiln-simulate-gpu` (see Passes.td), the step that makes the
// `cuda-sim` target: after `kiln-map-to-gpu`, every gpu.func of `gpu.module @kiln_kernels`
// becomes a host func.func whose GPU operations call the simulator
// (runtime/SimRuntime.h): thread and block ids, barriers, 32-bit shuffles and the
// warp's tensor-core operations (nvgpu.mma.sync m16n8k16, each lane passing its
// fragment registers) and cp.async copies (queued per thread until the wait that
// covers them) become kiln_sim_* calls, workgroup (shared) memory becomes one global buffer
// per attribution (the simulator runs one block at a time). The host codegen
// pipeline then compiles the functions like any host kernel. What runs is exactly
// the cuda target's mapping, up to the NVVM lowering. A stage that synchronizes
// while its #kiln.gpu_stage says it does not would run wrongly (its threads one
// after another), so that is an error.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda-sim/SimulateGpu.h"
#include "dialects/kiln/KilnDialect.h"
#include "codegen/cuda-sim/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_SIMULATEGPU
#include "codegen/cuda-sim/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct SimulateGpuPass : kiln::impl::SimulateGpuBase<SimulateGpuPass> {

  /// Declares (once) `func.func private @name(args) -> results`.
  func::FuncOp declare(ModuleOp module, StringRef name, TypeRange args, TypeRange results) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto fn = b.create<func::FuncOp>(module.getLoc(), name, b.getFunctionType(args, results));
    fn.setPrivate();
    return fn;
  }

  Value callIndex(OpBuilder &b, ModuleOp module, Location loc, StringRef name,
                  gpu::Dimension dim) {
    func::FuncOp fn = declare(module, name, {b.getI32Type()}, {b.getI64Type()});
    Value d = b.create<arith::ConstantIntOp>(loc, static_cast<int64_t>(dim), 32);
    Value v = b.create<func::CallOp>(loc, fn, ValueRange{d}).getResult(0);
    return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
  }

  /// nvgpu.mma.sync m16n8k16 (f16 or bf16 multiplicands, f32 accumulators) or
  /// m16n8k8 tf32: each
  /// lane passes its registers (A: 4 x 32 bits, B: 2 x 32 bits, C: 4 floats) to
  /// kiln_sim_mma_sync, which waits for the warp and computes the warp's
  /// product by the PTX ISA's fragment layout; kiln_sim_mma_result(i) is the
  /// lane's i-th result register.
  LogicalResult convertMma(OpBuilder &b, ModuleOp module, nvgpu::MmaSyncOp mma) {
    Location at = mma.getLoc();
    Type i32 = b.getI32Type(), f32 = b.getF32Type();
    std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
    VectorType aType = mma.getMatrixA().getType(), bType = mma.getMatrixB().getType();
    VectorType cType = mma.getMatrixC().getType();
    Type elem = aType.getElementType();
    bool half = shape == std::array<int64_t, 3>{16, 8, 16} && (elem.isF16() || elem.isBF16()) &&
                !mma.getTf32Enabled();
    bool tf32 = shape == std::array<int64_t, 3>{16, 8, 8} && elem.isF32() && mma.getTf32Enabled();
    int64_t perReg = tf32 ? 1 : 2;
    if (!(half || tf32) || aType != VectorType::get({4, perReg}, elem) ||
        bType != VectorType::get({2, perReg}, elem) || cType != VectorType::get({2, 2}, f32))
      return mma.emitError("the simulator takes mma.sync m16n8k16 with f16 or bf16 "
                           "multiplicands, or m16n8k8 with tf32, and f32 accumulators only");
    SmallVector<Value> args{
        b.create<arith::ConstantIntOp>(at, tf32 ? 2 : elem.isBF16() ? 1 : 0, 32)};
    auto registers = [&](Value v, int64_t n) {
      for (int64_t r = 0; r < n; ++r) {
        Value pair = b.create<vector::ExtractOp>(at, v, r);
        Value bits = b.create<vector::BitCastOp>(at, VectorType::get({1}, i32), pair);
        args.push_back(b.create<vector::ExtractOp>(at, bits, 0));
      }
    };
    registers(mma.getMatrixA(), 4);
    registers(mma.getMatrixB(), 2);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e)
        args.push_back(b.create<vector::ExtractOp>(at, mma.getMatrixC(), ArrayRef<int64_t>{r, e}));
    SmallVector<Type> argTypes(7, i32);
    argTypes.append(4, f32);
    b.create<func::CallOp>(at, declare(module, "kiln_sim_mma_sync", argTypes, {}), args);
    func::FuncOp result = declare(module, "kiln_sim_mma_result", {i32}, {f32});
    Value d = b.create<arith::ConstantOp>(at, b.getZeroAttr(cType));
    for (int64_t i = 0; i < 4; ++i) {
      Value v = b.create<func::CallOp>(at, result,
                                       ValueRange{b.create<arith::ConstantIntOp>(at, i, 32)})
                    .getResult(0);
      d = b.create<vector::InsertOp>(at, v, d, ArrayRef<int64_t>{i / 2, i % 2});
    }
    mma.getRes().replaceAllUsesWith(d);
    return success();
  }

  /// The address of `memref[indices]` as an i64 (the simulator's memory is the
  /// host's).
  Value address(OpBuilder &b, Location at, Value memref, ValueRange indices) {
    auto type = cast<MemRefType>(memref.getType());
    auto meta = b.create<memref::ExtractStridedMetadataOp>(at, memref);
    Value linear = meta.getOffset();
    for (auto [i, index] : llvm::enumerate(indices))
      linear = b.create<arith::AddIOp>(
          at, linear, b.create<arith::MulIOp>(at, index, meta.getStrides()[i]));
    Value bytes = b.create<arith::MulIOp>(
        at, linear, b.create<arith::ConstantIndexOp>(at, type.getElementTypeBitWidth() / 8));
    Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(at, meta.getBaseBuffer());
    return b.create<arith::IndexCastOp>(at, b.getI64Type(),
                                        b.create<arith::AddIOp>(at, base, bytes));
  }

  /// cp.async (nvgpu.device_async_copy, _create_group, _wait): each copy is queued
  /// in the thread's pending copies (kiln_sim_cp_async), a group is committed
  /// (kiln_sim_cp_async_commit), and a wait performs every committed group but the
  /// last `numGroups` (kiln_sim_cp_async_wait): a kernel that reads shared memory
  /// before the wait that covers its copy reads stale data here, as it may on the
  /// GPU.
  LogicalResult convertAsyncCopies(OpBuilder &b, ModuleOp module, func::FuncOp fn) {
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    SmallVector<Operation *> tokenOps;
    WalkResult walk = fn.walk([&](Operation *op) {
      b.setInsertionPoint(op);
      Location at = op->getLoc();
      if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
        int64_t elementBytes = copy.getDst().getType().getElementTypeBitWidth() / 8;
        int64_t count = copy.getDstElements().getZExtValue();
        Value srcCount = copy.getSrcElements()
                             ? copy.getSrcElements()
                             : b.create<arith::ConstantIndexOp>(at, count).getResult();
        Value srcBytes = b.create<arith::IndexCastOp>(
            at, i64,
            b.create<arith::MulIOp>(at, srcCount,
                                    b.create<arith::ConstantIndexOp>(at, elementBytes)));
        Value bytes = b.create<arith::ConstantIntOp>(at, count * elementBytes, 64);
        b.create<func::CallOp>(
            at, declare(module, "kiln_sim_cp_async", {i64, i64, i64, i64}, {}),
            ValueRange{address(b, at, copy.getDst(), copy.getDstIndices()),
                       address(b, at, copy.getSrc(), copy.getSrcIndices()), bytes, srcBytes});
      } else if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
        b.create<func::CallOp>(at, declare(module, "kiln_sim_cp_async_commit", {}, {}),
                               ValueRange{});
      } else if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
        Value groups = b.create<arith::ConstantIntOp>(at, wait.getNumGroups().value_or(0), 32);
        b.create<func::CallOp>(at, declare(module, "kiln_sim_cp_async_wait", {i32}, {}),
                               ValueRange{groups});
      } else {
        return WalkResult::advance();
      }
      tokenOps.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // Users first: a wait takes a group's token, a group its copies'.
    for (Operation *op : llvm::reverse(tokenOps)) {
      if (!op->use_empty())
        return op->emitError("the simulator takes cp.async tokens only into "
                             "device_async_create_group and device_async_wait");
      op->erase();
    }
    return success();
  }

  /// Converts `kernel`; `synchronizes` says whether it had barriers or shuffles.
  LogicalResult convert(ModuleOp module, gpu::GPUFuncOp kernel, bool &synchronizes) {
    OpBuilder b(module.getContext());
    b.setInsertionPoint(kernel->getParentOp());
    Location loc = kernel.getLoc();
    if (!kernel.getPrivateAttributions().empty())
      return kernel.emitError("private attributions are not simulated");
    // Shared memory: one global per attribution (one block runs at a time on a
    // host thread; kiln-sim-thread-local-shared makes it thread-local once in LLVM
    // form, as contexts on other threads run the same kernels).
    SmallVector<BlockArgument> shared(kernel.getWorkgroupAttributions());
    SmallVector<memref::GlobalOp> globals;
    for (auto [i, attribution] : llvm::enumerate(shared)) {
      for (Operation *user : attribution.getUsers())
        if (!isa<memref::LoadOp, memref::StoreOp, vector::LoadOp, nvgpu::DeviceAsyncCopyOp>(
                user))
          return user->emitError("shared memory used by an op the simulator does not take");
      auto type = cast<MemRefType>(attribution.getType());
      globals.push_back(b.create<memref::GlobalOp>(
          loc, (kSimSharedPrefix + kernel.getName() + "." + std::to_string(i)).str(),
          b.getStringAttr("private"), MemRefType::get(type.getShape(), type.getElementType()),
          Attribute(), /*constant=*/false, b.getI64IntegerAttr(64)));
    }
    auto fn = b.create<func::FuncOp>(loc, kernel.getName(), kernel.getFunctionType());
    fn.getBody().takeBody(kernel.getBody());
    Block &entry = fn.getBody().front();
    b.setInsertionPointToStart(&entry);
    for (auto [i, global] : llvm::enumerate(globals))
      shared[i].replaceAllUsesWith(
          b.create<memref::GetGlobalOp>(loc, global.getType(), global.getSymName()));
    entry.eraseArguments(kernel.getNumArguments(), shared.size());

    if (failed(convertAsyncCopies(b, module, fn)))
      return failure();
    LogicalResult result = success();
    fn.walk([&](Operation *op) {
      b.setInsertionPoint(op);
      Location at = op->getLoc();
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
        op->getResult(0).replaceAllUsesWith(
            callIndex(b, module, at, "kiln_sim_thread_id", id.getDimension()));
      } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
        op->getResult(0).replaceAllUsesWith(
            callIndex(b, module, at, "kiln_sim_block_id", id.getDimension()));
      } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
        op->getResult(0).replaceAllUsesWith(
            callIndex(b, module, at, "kiln_sim_block_dim", dim.getDimension()));
      } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
        op->getResult(0).replaceAllUsesWith(
            callIndex(b, module, at, "kiln_sim_grid_dim", dim.getDimension()));
      } else if (isa<gpu::BarrierOp>(op)) {
        synchronizes = true;
        b.create<func::CallOp>(at, declare(module, "kiln_sim_barrier", {}, {}), ValueRange{});
      } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
        Type t = shuffle.getValue().getType();
        if (t.getIntOrFloatBitWidth() != 32) {
          result = op->emitError("only 32-bit shuffles are simulated");
          return WalkResult::interrupt();
        }
        synchronizes = true;
        Type i32 = b.getI32Type();
        Value v = t == i32 ? shuffle.getValue()
                           : b.create<arith::BitcastOp>(at, i32, shuffle.getValue());
        Value mode = b.create<arith::ConstantIntOp>(
            at, static_cast<int64_t>(shuffle.getMode()), 32);
        func::FuncOp callee = declare(module, "kiln_sim_shuffle", {i32, i32, i32, i32}, {i32});
        Value r = b.create<func::CallOp>(
                       at, callee,
                       ValueRange{v, shuffle.getOffset(), shuffle.getWidth(), mode})
                      .getResult(0);
        if (t != i32)
          r = b.create<arith::BitcastOp>(at, t, r);
        Value valid =
            b.create<func::CallOp>(at, declare(module, "kiln_sim_shuffle_valid", {}, {i32}),
                                   ValueRange{})
                .getResult(0);
        Value zero = b.create<arith::ConstantIntOp>(at, 0, 32);
        shuffle.getShuffleResult().replaceAllUsesWith(r);
        shuffle.getValid().replaceAllUsesWith(
            b.create<arith::CmpIOp>(at, arith::CmpIPredicate::ne, valid, zero));
      } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
        if (failed(convertMma(b, module, mma))) {
          result = failure();
          return WalkResult::interrupt();
        }
        synchronizes = true;
      } else if (isa<nvgpu::NVGPUDialect>(op->getDialect())) {
        result = op->emitError("the simulator does not take ") << op->getName();
        return WalkResult::interrupt();
      } else if (isa<gpu::ReturnOp>(op)) {
        b.create<func::ReturnOp>(at);
      } else if (op->getDialect() && isa<gpu::GPUDialect>(op->getDialect())) {
        result = op->emitError("the simulator does not take ") << op->getName();
        return WalkResult::interrupt();
      } else {
        return WalkResult::advance();
      }
      op->erase();
      return WalkResult::skip();
    });
    return result;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> synchronizing;
    for (auto gpuModule : llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      for (auto kernel : llvm::make_early_inc_range(gpuModule.getOps<gpu::GPUFuncOp>())) {
        bool synchronizes = false;
        if (failed(convert(module, kernel, synchronizes)))
          return signalPassFailure();
        if (synchronizes)
          synchronizing.insert(kernel.getName());
      }
      gpuModule.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    // The fibers the simulator runs a stage's threads as are only needed where they
    // meet: a stage the mapping did not mark as synchronizing must not.
    WalkResult result = module.walk([&](LaunchOp l) {
      std::optional<ArrayAttr> stages = l.getGpuStages();
      if (!stages)
        return WalkResult::advance();
      for (auto stage : stages->getAsRange<GpuStageAttr>())
        if (synchronizing.contains(stage.getFunction().getValue()) &&
            !stage.getSync().getValue()) {
          l.emitError() << "stage " << stage.getFunction()
                        << " synchronizes but its #kiln.gpu_stage says sync = false";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
