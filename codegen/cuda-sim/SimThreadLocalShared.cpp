//===- SimThreadLocalShared.cpp - Simulated shared memory per thread ------===//
//
// This file implements `kiln-sim-thread-local-shared` (see Passes.td): the
// globals kiln-simulate-gpu made for a kernel's shared memory become thread-local,
// so that kernels on several host streams (threads) each simulate their own.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda-sim/Passes.h"
#include "codegen/cuda-sim/SimulateGpu.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace kiln {
#define GEN_PASS_DEF_SIMTHREADLOCALSHARED
#include "codegen/cuda-sim/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct SimThreadLocalSharedPass
    : kiln::impl::SimThreadLocalSharedBase<SimThreadLocalSharedPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::GlobalOp g) {
      if (g.getSymName().starts_with(kiln::kSimSharedPrefix))
        g.setThreadLocal_(true);
    });
  }
};

} // namespace
