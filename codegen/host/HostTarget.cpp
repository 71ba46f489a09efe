//===- HostTarget.cpp - The host target -----------------------------------===//
//
// This file implements the host target: its codegen pipeline and object writer
// (HostCodegen.h) and its run writer, which calls each kernel function with the
// plan's buffers.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostTarget.h"
#include "codegen/host/HostCodegen.h"
#include "passes/plan/Passes.h"
#include "passes/plan/PlanAnalysis.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <thread>

using namespace mlir;

namespace kiln {

namespace {

/// One launch, copy, record or wait of a stream's function.
bool writeHostOp(llvm::raw_ostream &os, Operation &op, IoExpr io,
                 const llvm::DenseMap<Operation *, int64_t> &libraryIndex,
                 HostLaunchWriter writeLaunch, std::string &error) {
  if (auto c = dyn_cast<CopyOp>(op)) {
    os << "  std::memcpy(" << bufferExpr(c.getTarget(), io) << ", "
       << bufferExpr(c.getSource(), io) << ", " << copyBytes(c) << ");\n";
    return true;
  }
  if (auto r = dyn_cast<RecordOp>(op)) {
    os << "  c.streams.record(" << r.getEvent() << ");\n";
    return true;
  }
  if (auto w = dyn_cast<WaitOp>(op)) {
    os << "  KILN_WAIT(" << w.getEvent() << ");\n";
    return true;
  }
  auto l = dyn_cast<LaunchOp>(op);
  if (!l)
    return true;
  auto library = libraryIndex.find(&op);
  if (library == libraryIndex.end())
    return writeLaunch(os, l, io, error);
  // The library runs it, or says it cannot: then the kernel does.
  ArrayRef<int64_t> operands = l.getLibraryAttr().getOperands();
  auto buffer = [&](int64_t i) {
    return i < 0 ? std::string("nullptr") : bufferExpr(l.getBuffers()[i], io);
  };
  os << "  {\n    const kiln::rt::LibraryBuffers b = {";
  for (int i = 0; i < 5; ++i)
    os << (i ? ", " : "") << buffer(operands[i]);
  os << "};\n    bool ran = false;\n    KILN_RUN(c.library(" << library->second
     << ", kLibrary" << library->second << ", b, ran));\n    if (!ran)\n    ";
  if (!hasKernelCode(l)) {
    os << "  return kiln::rt::Status::error(\"library call " << library->second
       << " (kernel " << l.getKernel()
       << "): oneDNN is not loaded or cannot run it, and the model was compiled "
          "with --no-fallback-kernels\", KILN_ERROR_RUN);\n  }\n";
    return true;
  }
  if (!writeLaunch(os, l, io, error))
    return false;
  os << "  }\n";
  return true;
}

} // namespace

bool writeHostRun(llvm::raw_ostream &os, const EmitContext &ctx, llvm::StringRef hooks,
                  HostLaunchWriter writeLaunch, std::string &error) {
  Block &plan = ctx.plan.getBody().front();
  int64_t numStreams = 1, numEvents = 0;
  for (Operation &op : plan) {
    numStreams = std::max(numStreams, streamOf(&op) + 1);
    if (auto r = dyn_cast<RecordOp>(op))
      numEvents = std::max<int64_t>(numEvents, r.getEvent() + 1);
  }
  llvm::DenseMap<Operation *, int64_t> libraryIndex = writeLibraryCalls(os, ctx.plan);
  os << "constexpr int kNumStreams = " << numStreams << ";\n"
     << "constexpr int kNumEvents = " << numEvents << ";\n\n"
     << "#define KILN_RUN(x)                                                   \\\n"
     << "  do {                                                            \\\n"
     << "    kiln::rt::Status s_ = (x);                                    \\\n"
     << "    if (!s_)                                                      \\\n"
     << "      return s_;                                                  \\\n"
     << "  } while (0)\n"
     << "// A wait that returns false: another stream failed and aborted the run.\n"
     << "#define KILN_WAIT(e)                                                  \\\n"
     << "  do {                                                            \\\n"
     << "    if (!c.streams.wait(e))                                       \\\n"
     << "      return kiln::rt::Status::ok();                              \\\n"
     << "  } while (0)\n\n";
  auto io = [](const char *kind, int64_t i) {
    return std::string(kind) + "[" + std::to_string(i) + "].data";
  };
  // One function per stream: its launches, copies and events in plan order.
  for (int64_t stream = 0; stream < numStreams; ++stream) {
    os << "/// Stream " << stream << " of a run.\n"
       << "kiln::rt::Status stream" << stream
       << "(kiln::rt::HostRun &c, const kiln_tensor *in, kiln_tensor *out) {\n"
       << "  char *A = c.arena;\n  char *W = c.weights;\n"
       << "  (void)A;\n  (void)W;\n  (void)in;\n  (void)out;\n";
    llvm::DenseMap<Value, int64_t> guardIndex;
    for (Operation &op : plan) {
      if (streamOf(&op) != stream)
        continue;
      // A branch of an If runs where its conditions hold (read in host memory:
      // this stream has waited for their producers).
      std::string close = openGuards(
          os, &op, io, guardIndex,
          [](llvm::raw_ostream &os, int64_t, const std::string &pointer, bool value) {
            os << "  if (*static_cast<const unsigned char *>(static_cast<const void *>("
               << pointer << ")) " << (value ? "!=" : "==") << " 0) {\n";
          });
      if (!writeHostOp(os, op, io, libraryIndex, writeLaunch, error))
        return false;
      os << close;
    }
    os << "  return kiln::rt::Status::ok();\n}\n\n";
  }
  os << "kiln::rt::Status runStream(kiln::rt::HostRun &c, int stream, const kiln_tensor *in,\n"
     << "                           kiln_tensor *out) {\n  switch (stream) {\n";
  for (int64_t stream = 0; stream < numStreams; ++stream)
    os << "  case " << stream << ": return stream" << stream << "(c, in, out);\n";
  os << "  }\n  return kiln::rt::Status::error(\"no stream \" + std::to_string(stream));\n}\n\n"
     << "const kiln::rt::HostProgram kProgram = {kArenaBytes, kNumStreams, kNumEvents,\n"
     << "                                        kNumLibraryCalls, runStream};\n"
     << "const kiln::rt::TargetHooks *const kHooks = &kiln::rt::" << hooks << ";\n";
  return true;
}

bool writeHostKernels(ModuleOp module, StringRef dir, const std::string &cpu,
                      KernelCode &code, std::string &error) {
  std::string object = (dir + "/model.o").str();
  if (!emitHostObject(module, object, code.symbolPrefix, cpu, error))
    return false;
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(object, size))
    code.bytes = static_cast<int64_t>(size);
  code.kind = "object code";
  code.linkInputs.push_back(object);
  return true;
}

namespace {

class HostTarget : public Target {
public:
  explicit HostTarget(const TargetOptions &options) : options(options) {}

  StringRef getName() const override { return "host"; }
  StringRef getLibraryEngine() const override { return "onednn"; }
  // Measured on the BERT encoder (host latency p50): transposes folded into its
  // attention MatMuls 1.06 s -> 1.27 s (the loop nests vectorize worse over a
  // transposed operand); attention as one kernel 0.77 s -> 0.81 s (its scores,
  // kernel-internal, are allocated per run instead of planned in the arena).
  // Concat: its producers in one kernel run one after another on one core, so
  // an Inception block's branches could not run on two streams; Inception-v3,
  // 2 cores, p50: 1.15 s with or without it on one stream, 1.15 s -> 0.93 s on
  // two streams without it.
  ArrayRef<StringRef> fusionRulesLeftOut() const override {
    static const StringRef rules[] = {"transpose", "attention", "concat"};
    return rules;
  }

  // Contractions oneDNN can run become library calls (their kernels stay, the
  // fallback where the library is missing at run time). oneDNN's post-ops take
  // every epilogue Kiln fuses, in any mix of f32 and f16: the options' defaults.
  void buildKernelMappingPipeline(OpPassManager &pm) const override {
    if (options.contractions != "kiln") {
      SelectLibraryCallsOptions select;
      select.fallbackKernels = options.host.fallbackKernels;
      pm.addPass(createSelectLibraryCalls(select));
    }
  }

  void buildCodegenPipeline(OpPassManager &pm) const override {
    buildHostCodegenPipeline(pm, /*parallel=*/true);
  }

  std::string getDeviceModel() const override {
    return options.deviceModel.empty() ? "host" : options.deviceModel;
  }
  // With library calls (the default), one stream: oneDNN runs each contraction on
  // every core, and a second stream's calls only compete for them (2 cores,
  // Inception-v3 p50: 31.8 ms on one stream, 44.8 ms on two; GoogLeNet 23.3 vs
  // 24.1 ms). With Kiln's kernels only (a kernel runs on one core), one stream per
  // core, at most 4.
  int64_t getDefaultMaxStreams() const override {
    if (options.contractions != "kiln")
      return 1;
    return std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 4);
  }

  bool writeKernels(ModuleOp module, StringRef dir, KernelCode &code,
                    std::string &error) const override {
    return writeHostKernels(module, dir, options.host.cpu, code, error);
  }

  bool writePrologue(llvm::raw_ostream &os, const EmitContext &ctx,
                     std::string &) const override {
    os << "#include \"kiln/runtime/HostModel.h\"\n\n";
    // One declaration per kernel, in first-launch order, with its argument count.
    llvm::MapVector<StringRef, unsigned> kernels;
    ctx.plan.getBody().walk([&](LaunchOp l) {
      kernels.insert({l.getKernel(), static_cast<unsigned>(l.getBuffers().size())});
    });
    writeKernelDeclarations(os, ctx.code->symbolPrefix, kernels);
    return true;
  }

  bool writeRun(llvm::raw_ostream &os, const EmitContext &ctx,
                std::string &error) const override {
    StringRef prefix = ctx.code->symbolPrefix;
    return writeHostRun(
        os, ctx, "kHostHooks",
        [&](llvm::raw_ostream &os, LaunchOp l, IoExpr io, std::string &) {
          os << "  " << prefix << l.getKernel() << "(" << launchArguments(l, io) << ");\n";
          return true;
        },
        error);
  }

private:
  TargetOptions options;
};

} // namespace

std::unique_ptr<Target> createHostTarget(const TargetOptions &options, std::string &error) {
  if (!options.host.fallbackKernels && options.contractions == "kiln") {
    error = "--no-fallback-kernels is for the host target's library calls (not --target "
            "host --contractions kiln)";
    return nullptr;
  }
  return std::make_unique<HostTarget>(options);
}

} // namespace kiln
