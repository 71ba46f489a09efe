//===- GeneratedCode.cpp - Pieces of the generated model.cpp --------------===//
//
// This file implements the helpers the targets' run writers share (GeneratedCode.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/emit/GeneratedCode.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string bufferExpr(Value v, IoExpr io) {
  Operation *def = v.getDefiningOp();
  if (auto in = dyn_cast<InputOp>(def))
    return io("in", in.getIndex());
  if (auto out = dyn_cast<OutputOp>(def))
    return io("out", out.getIndex());
  if (auto w = dyn_cast<WeightOp>(def))
    return "W + " + std::to_string(w.getOffset());
  auto s = cast<SliceOp>(def);
  return "A + " + std::to_string(s.getOffset());
}

std::string launchArguments(LaunchOp launch, IoExpr io) {
  std::string args;
  for (Value v : launch.getBuffers())
    args += (args.empty() ? "" : ", ") + bufferExpr(v, io);
  return args;
}

int64_t copyBytes(CopyOp c) {
  auto type = cast<MemRefType>(c.getSource().getType());
  return bufferBytes(type);
}

int64_t maxScratchBytes(PlanOp plan) {
  int64_t bytes = 0;
  plan.getBody().walk([&](LaunchOp l) {
    if (std::optional<uint64_t> scratch = l.getScratchBytes())
      bytes = std::max(bytes, static_cast<int64_t>(*scratch));
  });
  return bytes;
}

bool takesScratch(LaunchOp launch) { return launch.getScratchBytes().value_or(0) > 0; }

const char *commonAbiFunctions() {
  return R"(extern "C" {
__attribute__((visibility("default"))) int32_t kiln_model_abi_version(void) { return KILN_ABI_VERSION; }

__attribute__((visibility("default"))) void kiln_model_destroy(kiln_model *m) { delete m; }

__attribute__((visibility("default"))) const char *kiln_model_error(const kiln_model *m) {
  if (!m)
    return "no model";
  return m->error.empty() ? nullptr : m->error.c_str();
}

__attribute__((visibility("default"))) int32_t kiln_model_num_inputs(const kiln_model *) { return kNumInputs; }
__attribute__((visibility("default"))) int32_t kiln_model_num_outputs(const kiln_model *) { return kNumOutputs; }

__attribute__((visibility("default"))) int32_t kiln_model_input_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumInputs || !info)
    return -1;
  *info = kInputs[i];
  return 0;
}

__attribute__((visibility("default"))) int32_t kiln_model_output_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumOutputs || !info)
    return -1;
  *info = kOutputs[i];
  return 0;
}

static kiln::rt::Status checkArguments(const kiln_tensor *in, int32_t numIn, kiln_tensor *out,
                                       int32_t numOut) {
  kiln::rt::Status s = kiln::rt::checkTensors("input", in, numIn, kInputs, kNumInputs);
  if (s)
    s = kiln::rt::checkTensors("output", out, numOut, kOutputs, kNumOutputs);
  return s;
}
)";
}

void writeKernelDeclarations(llvm::raw_ostream &os,
                             const llvm::MapVector<StringRef, unsigned> &kernels) {
  os << "extern \"C\" {\n";
  for (const auto &[k, args] : kernels) {
    os << "void " << k << "(";
    for (unsigned i = 0; i < args; ++i)
      os << (i ? ", " : "") << "void *";
    os << ");\n";
  }
  os << "}\n\n";
}

} // namespace kiln
