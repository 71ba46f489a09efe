//===- HostTarget.h - The host target --------------------------*- C++ -*-===//
//
// The `host` target: kernels compiled for this CPU into model.o (HostCodegen.h),
// and a generated runtime that owns host buffers and runs the plan's streams as
// threads. cuda-sim reuses its run writer with a launch writer of its own.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_HOST_HOSTTARGET_H
#define KILN_CODEGEN_HOST_HOSTTARGET_H

#include "codegen/Target.h"
#include "codegen/emit/GeneratedCode.h"

namespace kiln {

std::unique_ptr<Target> createHostTarget(const TargetOptions &options, std::string &error);

/// Writes the code of one launch in a stream's function (the model is `m`;
/// `KILN_RUN(status)` returns a failed status).
using HostLaunchWriter =
    llvm::function_ref<bool(llvm::raw_ostream &os, LaunchOp launch, IoExpr io,
                            std::string &error)>;

/// The program of a model over host memory (host, cuda-sim;
/// kiln/runtime/HostModel.h): one function per plan stream of its launches (through
/// `writeLaunch`), copies (memcpy), records and waits in plan order, which the
/// runtime runs on a context's streams (one thread each, events as real
/// synchronization). Library calls run on the runtime's `hooks` (kHostHooks:
/// oneDNN; kSimHooks: cuda-sim's mock cuBLASLt and cuDNN), the launch their
/// fallback.
bool writeHostRun(llvm::raw_ostream &os, const EmitContext &ctx, llvm::StringRef hooks,
                  HostLaunchWriter writeLaunch, std::string &error);

/// The object writer of the host-code targets: compiles the module's LLVM-dialect
/// functions for `cpu` into `dir`/model.o.
bool writeHostKernels(mlir::ModuleOp module, llvm::StringRef dir, const std::string &cpu,
                      KernelCode &code, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTTARGET_H
