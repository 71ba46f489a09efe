//===- GeneratedCode.h - Pieces of the generated model.cpp -----*- C++ -*-===//
//
// What the targets' run writers share when they write model.cpp: C++ literals for
// names, the expression of a plan buffer, the C ABI functions every target has in
// common, and the `extern "C"` declarations of kernel functions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_EMIT_GENERATEDCODE_H
#define KILN_CODEGEN_EMIT_GENERATEDCODE_H

#include "dialects/kiln/KilnDialect.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// `s` as a C++ string literal.
std::string cString(llvm::StringRef s);

/// How the run writer spells the caller's tensors: `io("in", 0)` -> `in[0].data`.
using IoExpr = llvm::function_ref<std::string(const char *kind, int64_t index)>;

/// The C++ expression of a plan buffer: the caller's tensor (`io`), the weights
/// (`W + offset`) or the arena (`A + offset`).
std::string bufferExpr(mlir::Value buffer, IoExpr io);

/// The comma-separated expressions of `launch`'s buffers, its scratch last.
std::string launchArguments(LaunchOp launch, IoExpr io);

/// False when `launch`'s kernel is a declaration: a library call compiled without
/// its fallback kernel (kiln-select-library-calls fallback-kernels=false).
bool hasKernelCode(LaunchOp launch);

/// The plan's library calls (#kiln.library_call), numbered in plan order: writes
/// each one's `kiln::rt::LibraryCall kLibraryN` (kiln/runtime/LibraryCall.h),
/// kNumLibraryCalls, and kLibraryZeroFloats (the most output channels of a
/// convolution without bias: its zero bias on cuDNN); returns the numbering.
llvm::DenseMap<mlir::Operation *, int64_t> writeLibraryCalls(llvm::raw_ostream &os,
                                                             PlanOp plan);

/// Bytes a kiln.copy moves.
int64_t copyBytes(CopyOp copy);

/// How a run writer tests one guard of a launch or copy: writes the statements
/// that end in `if (<guard `index` holds `value`>) {`, `pointer` the guard's buffer.
using GuardWriter = llvm::function_ref<void(llvm::raw_ostream &os, int64_t index,
                                            const std::string &pointer, bool value)>;

/// Opens the host branch that `op` (a guarded launch or copy, a branch of a
/// kiln.if) runs in, one `if` per guard, outermost first; `index` numbers the
/// plan's distinct guard buffers. Returns the braces to close after the op.
std::string openGuards(llvm::raw_ostream &os, mlir::Operation *op, IoExpr io,
                       llvm::DenseMap<mlir::Value, int64_t> &index, GuardWriter write);

/// `extern "C" { void name(void *, ...); ... }` for each kernel function with its
/// number of pointer arguments, in the order given, its name after `prefix`
/// (KernelCode::symbolPrefix).
void writeKernelDeclarations(llvm::raw_ostream &os, llvm::StringRef prefix,
                             const llvm::MapVector<llvm::StringRef, unsigned> &kernels);

} // namespace kiln

#endif // KILN_CODEGEN_EMIT_GENERATEDCODE_H
