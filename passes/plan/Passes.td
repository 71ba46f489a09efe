//===- Passes.td - The plan phase's target-independent passes -*- tablegen -*-===//
//
// The plan phase's target-independent passes: the plan, library calls, streams, memory, the verifier.
// Each pass has one .cpp here named after it and a lit test tests/lit/passes/<flag>.mlir;
// `kiln-opt --help` shows these descriptions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PLAN_PASSES_TD
#define KILN_PASSES_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def BuildPlan : Pass<"kiln-build-plan", "mlir::ModuleOp"> {
  let summary = "Outline kernels into functions and turn @main_graph into a kiln.plan";
  let description = [{
    The plan phase starts here. Each kiln.kernel becomes `func.func private @kN`
    over memrefs (inputs, then one buffer per result) that still computes on
    tensors inside (to_tensor / materialize_in_destination), ready for one-shot
    bufferization. @main_graph becomes a kiln.plan of inputs, outputs, weights,
    arena slices and launches; offsets and streams are left to the next passes.
    At a kiln.if, both branch functions are laid out in turn (then, else), their
    launches and copies guarded by the condition's buffer (`if(%c) [true]` /
    `[false]`; a nested If adds its own guard), each writing the If's results
    into the same buffers; a branch's kernels are named after it
    (@main_graph_if0_then_k0).
    Outlined functions carry `kiln.kernel`; an input's or output's ONNX element
    type, where the signless buffer lost it, moves from the function's
    `kiln.element_type` to the `kiln.input`/`kiln.output` op.
  }];
  let dependentDialects = ["kiln::KilnDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect"];
}

def SelectLibraryCalls : Pass<"kiln-select-library-calls", "mlir::ModuleOp"> {
  let summary = "Mark the launches a contraction library runs (#kiln.library_call)";
  let description = [{
    A target's plan step (host: oneDNN). A launch whose kernel is one 2-d
    convolution (NCHW, OIHW weights, grouped or not, zero padding) or (batched)
    matrix product with its zero-filled f32 accumulator and at most one
    elementwise epilogue out = activation(scale * acc + per-channel bias +
    residual), activation Relu, Clip or GELU (erf or tanh form), gets
    `library = #kiln.library_call<...>` naming the contraction, its sizes and
    which buffers are input, weights, bias, residual and output. Its operands are
    all f32, or all f16 (read into the f32 accumulator; the epilogue may round it
    to f16 where it starts or ends: the library computes it in f32 and rounds
    once): the buffers' type is the call's. The kernel is kept: the run falls back
    to it where the library cannot run the call.

    What the library can fuse is the target's to say (its engine description:
    codegen/host/HostTarget.cpp for oneDNN, codegen/cuda/GpuTarget.cpp for
    cuBLASLt and cuDNN), as these options; the defaults take every form above
    (oneDNN). `uniform-element-type`: every operand f32 or every one f16;
    `matmul-activations`, `conv-activations`: the epilogues each kind may carry
    (none, relu, clip, gelu_erf, gelu_tanh; empty: all); `symmetric-padding`:
    convolutions with the same padding before as after, or less after where the
    windows never reach it.

    ```mlir
    kiln.launch @k0(%x, %w, %b, %y) stream -1 {num_inputs = 3 : i64, library =
      #kiln.library_call<"conv", shape = [1, 3, 8, 8, 4, 3, 3, 8, 8, 1, 1, 1, 1, 1,
      1, 1, 1, 1], operands = [0, 1, 2, -1, 3], activation = "relu"(0.0, 0.0)>} ...
    ```
  }];
  let options = [
    Option<"uniformElementType", "uniform-element-type", "bool",
           /*default=*/"false",
           "The library takes a call only where every operand has one element type">,
    ListOption<"matmulActivations", "matmul-activations", "std::string",
               "The epilogue activations the library fuses into a matrix product "
               "(none, relu, clip, gelu_erf, gelu_tanh; empty: all)">,
    ListOption<"convActivations", "conv-activations", "std::string",
               "The epilogue activations the library fuses into a convolution "
               "(empty: all)">,
    Option<"symmetricPadding", "symmetric-padding", "bool", /*default=*/"false",
           "The library's convolutions pad both sides alike">,
    Option<"fallbackKernels", "fallback-kernels", "bool", /*default=*/"true",
           "Keep each call's kernel (the run's fallback); false: the kernels only "
           "library calls launch become declarations">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ChooseEngines : Pass<"kiln-choose-engines", "mlir::ModuleOp"> {
  let summary = "Keep a library call only where the cost model prefers it to Kiln's kernel";
  let description = [{
    `--contractions auto`'s choice, after the target has mapped its kernels
    (kiln-map-to-gpu: `kiln.engine` says whether a launch's kernel runs on tensor
    cores or SIMT). A launch that kiln-select-library-calls gave a library call
    can run either way; its cost both ways on the device model decides
    (CostModel.h: each engine's efficiency, a library's alignment needs, the
    transposes of cuDNN's NCHW tensor-core convolutions). Where the kernel is
    cheaper, the library call is dropped. Every launch with a choice records it in
    `kiln.engine_reason` with both estimates; the report gives it per kernel.

    ```mlir
    kiln.launch @k0(%x, %w, %y) stream -1 {kiln.engine = "tensor_cores",
      kiln.engine_reason = "tensor_cores 3.4 us < library 9.9 us", ...}
    ```
  }];
  let options = [
    Option<"deviceModel", "device", "std::string", /*default=*/"\"h200\"",
           "The device model of the cost model: h200, a100 or host">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 contractions may run in TF32 (--allow-tf32): priced so">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def AssignStreams : Pass<"kiln-assign-streams", "mlir::ModuleOp"> {
  let summary = "Schedule launches on streams in parallel stages, with the minimum events";
  let description = [{
    Builds the DAG of launches and copies, estimates each one's time on a device
    model (FLOPs, bytes and blocks vs SMs, or the host's cores a kernel's work fills), cuts the DAG
    where one node feeds everything after it, and splits each region into stages
    of independent groups run concurrently, one stream per group (IOS-style: exact
    search over down-closed sets for small regions, greedy beyond a budget), at
    most `max-streams` at once (1: everything on stream 0 in plan order). Then it
    orders the plan by stage and inserts `kiln.record`/`kiln.wait` only where
    vector clocks say no existing path orders a dependency (the transitive
    reduction); every other stream waits for the run's start on stream 0 and is
    joined into it at the end. With `memory-budget`, schedules whose arena exceeds
    it are serialized (fewer streams); an error when even one stream does not fit.
    Records each launch's own estimate (`kiln.estimated_ns`, its time alone on the
    device), then `estimated_ns` (the schedule's critical path), `sequential_ns`,
    `sequential_arena_bytes` and `sequential_lower_bound_bytes` on the plan for the
    report.

    Before:
    ```mlir
    kiln.launch @a(%x, %t1) stream -1 ...
    kiln.launch @b(%x, %t2) stream -1 ...
    kiln.launch @c(%t1, %t2, %y) stream -1 ...
    ```
    After (`max-streams=2`):
    ```mlir
    kiln.record event 0 stream 0
    kiln.launch @a(%x, %t1) stream 0 ...
    kiln.wait event 0 stream 1
    kiln.launch @b(%x, %t2) stream 1 ...
    kiln.record event 1 stream 1
    kiln.wait event 1 stream 0
    kiln.launch @c(%t1, %t2, %y) stream 0 ...
    ```
  }];
  let options = [
    Option<"maxStreams", "max-streams", "int64_t", /*default=*/"1",
           "The most streams that run at once (1: sequential)">,
    Option<"deviceModel", "device", "std::string", /*default=*/"\"h200\"",
           "The device model of the cost model: h200, a100 or host">,
    Option<"hostCores", "host-cores", "int64_t", /*default=*/"0",
           "Cores of the host device model (0: this machine's)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 contractions may run in TF32 (--allow-tf32): priced so">,
    Option<"memoryBudget", "memory-budget", "int64_t", /*default=*/"0",
           "The most arena bytes the schedule may need (0: no limit)">,
  ];
}

def PlanMemory : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place arena slices and weights";
  let description = [{
    Liveness over the schedule's happens-before order (stream order and events,
    not the textual order): two tensors share bytes only when every use of one
    happens before every use of the other, or when a launch's `in_place` lets it
    write its result over an input that dies at it (then at the very same bytes).
    Slices are placed greedily, largest first, at the lowest 64-byte aligned
    offset that overlaps no tensor it may not share with. Weights are laid out one
    after another. Sets the plan's `arena_bytes`, `weight_bytes`,
    `lower_bound_bytes` (the most bytes live around one launch) and `naive_bytes`
    (the sum of all slices).
  }];
  let options = [
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let in_place launches write over the input that dies at them (false: "
           "for comparison)">,
  ];
}

def VerifyPlan : Pass<"kiln-verify-plan", "mlir::ModuleOp"> {
  let summary = "Check a plan's streams, events and memory";
  let description = [{
    Fails, naming both launches, when two launches or copies touch overlapping
    bytes (arena, weights or a caller's buffer), one writing, with no
    happens-before path between them; when two arena tensors in overlapping bytes
    can be live together; when a stream does not wait for the run's start or is not
    joined into stream 0 before its end; and when a slice leaves the arena.
  }];
}

//===----------------------------------------------------------------------===//
// Codegen: the host target (codegen/host)
//===----------------------------------------------------------------------===//

#endif // KILN_PASSES_PLAN_PASSES_TD
