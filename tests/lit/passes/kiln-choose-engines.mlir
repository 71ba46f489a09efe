// RUN: kiln-opt %s -split-input-file --kiln-choose-engines="device=h200" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --kiln-choose-engines="device=a100" | FileCheck %s --check-prefix=A100
// RUN: kiln-opt %s -split-input-file --kiln-choose-engines="device=h200 tf32=true" | FileCheck %s --check-prefix=TF32
// RUN: not kiln-opt %s -split-input-file --kiln-choose-engines="device=tpu" 2>&1 | FileCheck %s --check-prefix=BAD

// A batch-1 f16 1x1 convolution: cuDNN's tensor-core kernels take NHWC, so an
// NCHW call pays a transpose of its input and of its output (two more launches):
// Kiln's tensor-core kernel is cheaper and the call is dropped.
// CHECK-LABEL: kiln.plan @conv
// CHECK: kiln.launch @k0({{.*}}kiln.engine = "tensor_cores", kiln.engine_reason = "tensor_cores {{[0-9.]+}} us < library {{[0-9.]+}} us; tensor_cores: 256x3136x64 on mma.sync"
// CHECK-NOT: library
// CHECK-SAME: num_inputs
kiln.plan @conv attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %x = kiln.input 0 "x" : memref<1x64x56x56xf16>
  %w = kiln.input 1 "w" : memref<256x64x1x1xf16>
  %y = kiln.output 0 "y" : memref<1x256x56x56xf16>
  kiln.launch @k0(%x, %w, %y) stream -1 {num_inputs = 2 : i64, flops = 102760448 : i64,
    gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [49, 4, 1], block = [128, 1, 1], sync = true>],
    kiln.engine = "tensor_cores", kiln.engine_reason = "256x3136x64 on mma.sync",
    library = #kiln.library_call<"conv", shape = [1, 64, 56, 56, 256, 1, 1, 56, 56, 1, 1, 1, 1, 1, 0, 0, 0, 0],
      operands = [0, 1, -1, -1, 2], activation = "none"(0.0, 0.0), scale = 1.0>}
    : memref<1x64x56x56xf16>, memref<256x64x1x1xf16>, memref<1x256x56x56xf16>
}

// -----

// A large aligned f16 GEMM is compute-bound: cuBLASLt's share of the tensor-core
// peak beats the mma.sync kernel's on the H200 (below its wgmma peak); on the A100,
// where mma.sync is the native path, it is closer but still the library's.
// CHECK-LABEL: kiln.plan @gemm
// CHECK: kiln.launch @k0({{.*}}kiln.engine_reason = "library {{[0-9.]+}} us <= tensor_cores {{[0-9.]+}} us{{.*}}library = #kiln.library_call<"matmul"
// A100-LABEL: kiln.plan @gemm
// A100: kiln.launch @k0({{.*}}library = #kiln.library_call<"matmul"
kiln.plan @gemm attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %a = kiln.input 0 "a" : memref<2048x2048xf16>
  %b = kiln.input 1 "b" : memref<2048x2048xf16>
  %c = kiln.output 0 "c" : memref<2048x2048xf16>
  kiln.launch @k0(%a, %b, %c) stream -1 {num_inputs = 2 : i64, flops = 17179869184 : i64,
    gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [32, 32, 1], block = [128, 1, 1], sync = true>],
    kiln.engine = "tensor_cores",
    library = #kiln.library_call<"matmul", shape = [1, 2048, 2048, 2048, 0, 0, 0, 0],
      operands = [0, 1, -1, -1, 2], activation = "none"(0.0, 0.0), scale = 1.0>}
    : memref<2048x2048xf16>, memref<2048x2048xf16>, memref<2048x2048xf16>
}

// -----

// The same GEMM with K = 2047: not a multiple of 8, so cuBLASLt runs it without
// tensor cores; Kiln's kernel zero-fills the ragged K step and keeps them.
// CHECK-LABEL: kiln.plan @ragged
// CHECK: kiln.launch @k0({{.*}}kiln.engine_reason = "tensor_cores {{[0-9.]+}} us < library {{[0-9.]+}} us"
// CHECK-NOT: library
// CHECK-SAME: num_inputs
kiln.plan @ragged attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %a = kiln.input 0 "a" : memref<2048x2047xf16>
  %b = kiln.input 1 "b" : memref<2047x2048xf16>
  %c = kiln.output 0 "c" : memref<2048x2048xf16>
  kiln.launch @k0(%a, %b, %c) stream -1 {num_inputs = 2 : i64, flops = 17171480576 : i64,
    gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [32, 32, 1], block = [128, 1, 1], sync = true>],
    kiln.engine = "tensor_cores",
    library = #kiln.library_call<"matmul", shape = [1, 2048, 2048, 2047, 0, 0, 0, 0],
      operands = [0, 1, -1, -1, 2], activation = "none"(0.0, 0.0), scale = 1.0>}
    : memref<2048x2047xf16>, memref<2047x2048xf16>, memref<2048x2048xf16>
}

// -----

// f32: cuBLASLt's SGEMM beats Kiln's SIMT kernel. A launch without a library call
// is left alone.
// CHECK-LABEL: kiln.plan @f32
// CHECK: kiln.launch @k0({{.*}}kiln.engine_reason = "library {{[0-9.]+}} us <= simt {{[0-9.]+}} us; simt: f32 operands", library = #kiln.library_call
// CHECK: kiln.launch @k1({{.*}}kiln.engine_reason = "f32 operands", num_inputs
kiln.plan @f32 attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %a = kiln.input 0 "a" : memref<512x512xf32>
  %b = kiln.input 1 "b" : memref<512x512xf32>
  %c = kiln.slice offset -1 size 1048576 : memref<512x512xf32>
  %d = kiln.output 0 "d" : memref<512x512xf32>
  kiln.launch @k0(%a, %b, %c) stream -1 {num_inputs = 2 : i64, flops = 268435456 : i64,
    gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [8, 8, 1], block = [256, 1, 1], sync = true>],
    kiln.engine = "simt", kiln.engine_reason = "f32 operands",
    library = #kiln.library_call<"matmul", shape = [1, 512, 512, 512, 0, 0, 0, 0],
      operands = [0, 1, -1, -1, 2], activation = "none"(0.0, 0.0), scale = 1.0>}
    : memref<512x512xf32>, memref<512x512xf32>, memref<512x512xf32>
  kiln.launch @k1(%c, %b, %d) stream -1 {num_inputs = 2 : i64, flops = 268435456 : i64,
    gpu_stages = [#kiln.gpu_stage<"k1_s0", grid = [8, 8, 1], block = [256, 1, 1], sync = true>],
    kiln.engine = "simt", kiln.engine_reason = "f32 operands"}
    : memref<512x512xf32>, memref<512x512xf32>, memref<512x512xf32>
}

// -----

// An f32 GEMM whose kernel runs in TF32 (--allow-tf32): the library call is priced
// at the FP32 peak unless TF32 is allowed it too (tf32=true), then at the TF32 one.
// CHECK-LABEL: kiln.plan @tf32
// CHECK: kiln.launch @k0({{.*}}kiln.engine_reason = "tensor_cores {{[0-9.]+}} us < library {{[0-9.]+}} us"
// CHECK-NOT: library
// CHECK-SAME: num_inputs
// TF32-LABEL: kiln.plan @tf32
// TF32: kiln.launch @k0({{.*}}kiln.engine_reason = "library {{[0-9.]+}} us <= tensor_cores {{[0-9.]+}} us{{.*}}library = #kiln.library_call<"matmul"
kiln.plan @tf32 attributes {arena_bytes = -1 : i64, weight_bytes = -1 : i64} {
  %a = kiln.input 0 "a" : memref<2048x2048xf32>
  %b = kiln.input 1 "b" : memref<2048x2048xf32>
  %c = kiln.output 0 "c" : memref<2048x2048xf32>
  kiln.launch @k0(%a, %b, %c) stream -1 {num_inputs = 2 : i64, flops = 17179869184 : i64,
    gpu_stages = [#kiln.gpu_stage<"k0_s0", grid = [32, 32, 1], block = [128, 1, 1], sync = true>],
    kiln.engine = "tensor_cores",
    library = #kiln.library_call<"matmul", shape = [1, 2048, 2048, 2048, 0, 0, 0, 0],
      operands = [0, 1, -1, -1, 2], activation = "none"(0.0, 0.0), scale = 1.0>}
    : memref<2048x2048xf32>, memref<2048x2048xf32>, memref<2048x2048xf32>
}

// BAD: kiln-choose-engines: unknown device model 'tpu' (h200, a100, host)
