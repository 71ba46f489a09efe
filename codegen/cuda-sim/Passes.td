//===- Passes.td - The cuda-sim target's passes -*- tablegen -*-===//
//
// The cuda-sim target's passes: GPU kernels as host code for the SIMT simulator.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_SIM_PASSES_TD
#define KILN_CODEGEN_CUDA_SIM_PASSES_TD

include "mlir/Pass/PassBase.td"

def SimulateGpu : Pass<"kiln-simulate-gpu", "mlir::ModuleOp"> {
  let summary = "Turn the mapped gpu.funcs into host functions that call the SIMT simulator";
  let description = [{
    The step that makes the cuda-sim target: every gpu.func of the gpu.module
    becomes a host func.func whose thread and block ids, barriers, 32-bit
    shuffles, tensor-core `nvgpu.mma.sync` m16n8k16 (each lane's fragment
    registers in, its result registers out; the warp's product computed by the PTX
    ISA's fragment layout) and cp.async copies (`nvgpu.device_async_copy`, queued
    per thread until the `device_async_wait` that covers their group) call the
    simulator (runtime/SimRuntime.h), and whose workgroup memory
    is one global per attribution, `@kiln_sim_shared.<kernel>.<i>` (the simulator
    runs one block at a time on a host thread). A stage
    that synchronizes but whose `#kiln.gpu_stage` says it does not is an error.

    Before:
    ```mlir
    gpu.func @k0_s0(%x: memref<8xf32>) kernel { %t = gpu.thread_id x ... }
    ```
    After:
    ```mlir
    func.func @k0_s0(%x: memref<8xf32>) { %t = call @kiln_sim_thread_id(%c0) ... }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect", "mlir::vector::VectorDialect"];
}

def SimThreadLocalShared : Pass<"kiln-sim-thread-local-shared", "mlir::ModuleOp"> {
  let summary = "Make the simulator's shared-memory globals thread-local";
  let description = [{
    The last step of the cuda-sim codegen phase, on the LLVM dialect: every global
    kiln-simulate-gpu made for shared memory (`@kiln_sim_shared.*`) becomes
    thread_local, so contexts of one model that run the same kernel on several
    host threads at once each simulate their own block's shared memory.

    Before: `llvm.mlir.global private @kiln_sim_shared.k0_s0.0() ...`
    After: `llvm.mlir.global private thread_local @kiln_sim_shared.k0_s0.0() ...`
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // KILN_CODEGEN_CUDA_SIM_PASSES_TD
