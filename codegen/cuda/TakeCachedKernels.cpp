//===- TakeCachedKernels.cpp - Leave out the kernels the cache holds ------===//
//
// This file implements `kiln-take-cached-kernels` (see Passes.td): the kernel
// cache, keyed by each kernel's IR as mapped, so that a kernel compiled before
// costs neither its lowering nor its translation.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace kiln {
#define GEN_PASS_DEF_TAKECACHEDKERNELS
#include "codegen/cuda/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct TakeCachedKernelsPass : kiln::impl::TakeCachedKernelsBase<TakeCachedKernelsPass> {
  using TakeCachedKernelsBase::TakeCachedKernelsBase;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    if (cacheDir.empty())
      return;
    // What every kernel's PTX depends on beside its own IR: the module's
    // attributes (the target), any op that is not a kernel, the lowering, LLVM and
    // Kiln's PTX form; built once.
    std::string shared;
    {
      llvm::raw_string_ostream os(shared);
      auto flags = OpPrintingFlags().printGenericOpForm().useLocalScope();
      for (NamedAttribute attr : module->getAttrs())
        if (attr.getName() != KilnDialect::KernelCacheAttrHelper(&getContext()).getName())
          os << attr.getName() << "=" << attr.getValue() << "\n";
      for (Operation &op : module.getBody()->getOperations())
        if (!isa<gpu::GPUFuncOp>(op))
          op.print(os, flags);
      os << pipeline << "\n" << kernelCacheContext();
    }
    Builder b(&getContext());
    SmallVector<Attribute> kernels;
    for (auto fn : llvm::make_early_inc_range(module.getOps<gpu::GPUFuncOp>())) {
      std::string key = kernelCacheKey(fn, shared);
      kernels.push_back(b.getArrayAttr({fn.getNameAttr(), b.getStringAttr(key)}));
      llvm::SmallString<256> file(cacheDir);
      llvm::sys::path::append(file, key + ".ptx");
      uint64_t size = 0;
      if (!llvm::sys::fs::file_size(file, size) && size > 0)
        fn.erase();
    }
    KilnDialect::KernelCacheAttrHelper(&getContext())
        .setAttr(module, b.getDictionaryAttr(
                             {b.getNamedAttr("dir", b.getStringAttr(cacheDir)),
                              b.getNamedAttr("kernels", b.getArrayAttr(kernels))}));
  }
};

} // namespace
