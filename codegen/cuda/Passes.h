//===- Passes.h - The cuda targets' mapping pass -*- C++ -*-===//
//
// Declares the passes of codegen/cuda/Passes.td (generated) and registerKilnCudaPasses().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_CUDA_PASSES_H
#define KILN_CODEGEN_CUDA_PASSES_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "codegen/cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/cuda/Passes.h.inc"

} // namespace kiln

#endif // KILN_CODEGEN_CUDA_PASSES_H
