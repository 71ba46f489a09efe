//===- Passes.td - The cuda targets' mapping pass -*- tablegen -*-===//
//
// The cuda targets' mapping pass.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_PASSES_TD
#define KILN_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def MapToGpu : Pass<"kiln-map-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map kernel functions to gpu.funcs (blocks, threads, shared memory)";
  let description = [{
    The first step of the cuda and cuda-sim codegen phases. Every kernel function
    (memref arguments, linalg ops) becomes one or more `gpu.func`s in
    `gpu.module @kiln_kernels`, one per top-level linalg op (a stage), mapped by
    the first strategy that fits: tensor-core contraction (f16/bf16 operands,
    f32 accumulator: warps of `nvgpu.mma.sync`), tiled contraction (GEMM,
    batched GEMM, convolution as implicit GEMM), block reduction, thread per output. The
    gpu.module records the architecture (`#nvvm.target`); each `kiln.launch`
    records its stages (`#kiln.gpu_stage`: function, grid, block, whether it
    synchronizes) and, when they need kernel-internal buffers, an arena slice for
    them (`scratch`). A launch of a contraction records its engine:
    `kiln.engine = "tensor_cores"` where a stage is on tensor cores (the cost
    model prices it at Kiln's tensor-core rate), else `"simt"`, and
    `kiln.engine_reason`: the tiles built, or why tensor cores could not take
    it (f32 operands, fewer than 16 rows, `--no-tensor-cores`).
    Block reductions become
    shuffles and shared memory (gpu.all_reduce lowering).

    Before:
    ```mlir
    func.func @k0(%x: memref<1024xf32>, %y: memref<1024xf32>) attributes {kiln.kernel} {
      linalg.generic {...} ins(%x) outs(%y) { ... }
    }
    kiln.plan @main { ... kiln.launch @k0(%x, %y) stream 0 ... }
    ```
    After:
    ```mlir
    gpu.module @kiln_kernels [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
      gpu.func @k0_s0(%x: memref<1024xf32>, %y: memref<1024xf32>) kernel { ... }
    }
    kiln.plan @main { ... kiln.launch @k0(%x, %y) stream 0 {gpu_stages = [
        #kiln.gpu_stage<"k0_s0", grid = [1, 1, 1], block = [256, 1, 1], sync = false>]} ... }
    ```
  }];
  let options = [
    Option<"gpuArch", "gpu-arch", "std::string", /*default=*/"\"sm_80\"",
           "The GPU architecture, one of the table in codegen/cuda/GpuArch.cpp">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "f16/bf16 contractions into f32 on tensor cores (mma.sync); false: the "
           "SIMT tiled contraction">,
    Option<"tensorCoreMinSize", "tensor-core-min-size", "int64_t", /*default=*/"16",
           "The fewest rows, columns and K a contraction needs for tensor cores">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 contractions on tensor cores too, as TF32 (mma.sync m16n8k8)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
                           "mlir::memref::MemRefDialect", "mlir::math::MathDialect",
                           "mlir::NVVM::NVVMDialect", "mlir::nvgpu::NVGPUDialect",
                           "mlir::vector::VectorDialect"];
}

def TakeCachedKernels : Pass<"kiln-take-cached-kernels", "mlir::gpu::GPUModuleOp"> {
  let summary = "Leave out the kernels the kernel cache holds (their PTX comes from it)";
  let description = [{
    The first step of the cuda codegen phase when it emits. Each `gpu.func`'s
    cache key is the SHA-256 of its IR as mapped (generic form), the
    `gpu.module`'s attributes (the `#nvvm.target`), the lowering pipeline that
    follows (`pipeline`: its passes and their options), LLVM's version, Kiln's PTX
    form and the libdevice it would link. A kernel whose PTX is in `cache-dir`
    (`KEY.ptx`) is erased, so that nothing lowers or translates it;
    `kiln.kernel_cache` on the `gpu.module` records the directory and every
    kernel's name and key in kernel order, from which emitPtx concatenates the
    cached PTX and the fresh (which it writes to the cache). No `cache-dir`:
    nothing changes.

    ```mlir
    gpu.module @kiln_kernels [#nvvm.target<chip = "sm_80">] attributes {
        kiln.kernel_cache = {dir = "/root/.cache/kiln/kernels",
                             kernels = [["k0_s0", "3f9a..."], ["k1_s0", "b27c..."]]}} {
      gpu.func @k1_s0(...) kernel { ... }  // k0_s0 was cached
    }
    ```
  }];
  let options = [
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "The kernel cache's directory; empty: none">,
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"\"",
           "The lowering that follows, as text (part of every key)">,
  ];
}

#endif // KILN_CODEGEN_CUDA_PASSES_TD
