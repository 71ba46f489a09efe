//===- LlvmModule.h - From LLVM-dialect kernels to an optimized module -*- C++ -*-===//
//
// What the host and cuda targets share once their kernels are in the LLVM dialect:
// translation to LLVM IR, the target machine, LLVM's -O3 pipeline and the backend
// that writes object code or assembly.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_LLVMMODULE_H
#define KILN_CODEGEN_LLVMMODULE_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Location.h"

#include "llvm/Support/CodeGen.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace kiln {

/// Translates the LLVM-dialect ops of `body` (copied into a module of their own, so
/// that the plan and anything else stays behind) to LLVM IR. A function that did
/// not reach the LLVM dialect is an error naming the kernel.
std::unique_ptr<llvm::Module> translateLlvmOps(mlir::Block &body, mlir::Location loc,
                                               llvm::LLVMContext &context,
                                               std::string &error);

struct OptimizeOptions {
  /// Loops with more iterations than this are not fully unrolled (LLVM's default:
  /// by size alone). The host caps it: fully unrolling the batch and head loops
  /// around already vectorized bodies multiplied code size and compile time (GPT-2
  /// reduced at batch 8: 1.1 MB, 11 s) and bought no speed.
  std::optional<unsigned> fullUnrollMaxCount;
  /// Vectorize every innermost loop that converts between half and float,
  /// whatever the cost model says. x86's prices f16 conversions so that it keeps
  /// these loops scalar (one vcvtph2ps per element); with F16C, vectorized they
  /// convert 8 at a time: ResNet-50's f16 convolutions ran 2.3x slower than f32.
  bool vectorizeHalfLoops = false;
  /// Run the code generator's loop strength reduction. The host leaves it out: on
  /// x86 it was 40-60% of code generation (ResNet-50: 1.1 of 1.7 s; it is
  /// superlinear in the uses per loop of the unrolled, vectorized bodies) and
  /// changed no kernel's speed (zoo p50 within 1%, fp32 and fp16, own kernels and
  /// library calls).
  bool strengthReduce = true;
  /// Instrument every function for ThreadSanitizer (a -DKILN_SANITIZE=thread
  /// build's host kernels).
  bool threadSanitizer = false;
};

/// The target machine for `triple` and `cpu` at -O3; null with `error` when this
/// LLVM has no backend for it. `fuseMultiplyAdd`: a multiply feeding an add becomes
/// one fused multiply-add wherever the backend finds one (nvcc's default, --fmad=true;
/// the cuda kernels), otherwise only where the IR asks (llvm.fmuladd).
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const std::string &triple, const std::string &cpu,
                    const std::string &features, std::optional<llvm::Reloc::Model> reloc,
                    std::string &error, bool fuseMultiplyAdd = false);

/// Gives `module` the machine's triple and data layout.
void setTarget(llvm::Module &module, llvm::TargetMachine &machine);

/// Runs LLVM's -O3 module pipeline tuned for `machine`, then its backend, writing
/// `type` (object code or assembly) to `out`. False with `error`.
bool compileModule(llvm::Module &module, llvm::TargetMachine &machine,
                   const OptimizeOptions &options, llvm::CodeGenFileType type,
                   llvm::raw_pwrite_stream &out, std::string &error);

} // namespace kiln

#endif // KILN_CODEGEN_LLVMMODULE_H
