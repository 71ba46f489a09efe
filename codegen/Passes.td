//===- Passes.td - Codegen passes every target's pipeline shares -*- tablegen -*-===//
//
// Codegen passes every target's pipeline shares.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_PASSES_TD
#define KILN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandMath : Pass<"kiln-expand-math"> {
  let summary = "Expand math without an instruction into arithmetic";
  let description = [{
    After kiln-map-to-gpu on the cuda and cuda-sim targets (on the gpu.module), and
    in the host codegen pipeline (on the kernels, so that the loops vectorize
    instead of calling libm element by element): math.ipowi becomes
    square-and-multiply; tan, sinh, cosh, asinh, acosh, atanh, powf, fpowi and
    roundf their arithmetic expansions; exp, log, erf, tanh, ... MLIR's polynomial
    approximations. What remains (f64 math, mostly) calls libdevice on cuda and
    libm on the host.

    Before:
    ```mlir
    %r = math.ipowi %b, %e : i32
    ```
    After:
    ```mlir
    %r = scf.for ... iter_args(%acc = %c1, %base = %b, %exp = %e) { ... }
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
                           "mlir::math::MathDialect"];
}

#endif // KILN_CODEGEN_PASSES_TD
