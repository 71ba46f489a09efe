//===- GeneratedCode.cpp - Pieces of the generated model.cpp --------------===//
//
// This file implements the helpers the targets' run writers share (GeneratedCode.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/emit/GeneratedCode.h"
#include "passes/plan/PlanAnalysis.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/FormatVariadic.h"

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
  if (Value scratch = launch.getScratch())
    args += (args.empty() ? "" : ", ") + bufferExpr(scratch, io);
  return args;
}

bool hasKernelCode(LaunchOp launch) {
  auto kernel = dyn_cast_or_null<mlir::FunctionOpInterface>(
      mlir::SymbolTable::lookupNearestSymbolFrom(launch, launch.getKernelAttr()));
  return !kernel || !kernel.isExternal();
}

llvm::DenseMap<mlir::Operation *, int64_t> writeLibraryCalls(llvm::raw_ostream &os,
                                                             PlanOp plan) {
  llvm::DenseMap<mlir::Operation *, int64_t> index;
  int64_t zeroFloats = 0;
  for (mlir::Operation &op : plan.getBody().front()) {
    auto l = llvm::dyn_cast<LaunchOp>(op);
    if (!l || !l.getLibraryAttr())
      continue;
    LibraryCallAttr call = l.getLibraryAttr();
    int64_t i = static_cast<int64_t>(index.size());
    index[&op] = i;
    llvm::ArrayRef<int64_t> operands = call.getOperands();
    bool conv = call.getKind().getValue() == "conv";
    if (conv && operands[2] < 0)
      zeroFloats = std::max(zeroFloats, call.getShape()[4]);
    bool constantWeights = l.getBuffers()[operands[1]].getDefiningOp<WeightOp>() != nullptr;
    llvm::StringRef act = call.getActivation().getValue();
    os << "const int64_t kLibraryShape" << i << "[] = {";
    llvm::interleaveComma(call.getShape(), os);
    os << "};\nconst kiln::rt::LibraryCall kLibrary" << i << " = {kiln::rt::LibraryCall::"
       << (conv ? "Conv" : "MatMul") << ", kLibraryShape" << i << ", kiln::rt::LibraryCall::"
       << (act == "relu"        ? "Relu"
           : act == "clip"      ? "Clip"
           : act == "gelu_erf"  ? "GeluErf"
           : act == "gelu_tanh" ? "GeluTanh"
                                : "None")
       << ", "
       << llvm::formatv("{0:e8}f, {1:e8}f, {2:e8}f", call.getAlpha().getValueAsDouble(),
                        call.getBeta().getValueAsDouble(), call.getScale().getValueAsDouble())
       << ", " << (operands[2] >= 0 ? "true" : "false") << ", "
       << (operands[3] >= 0 ? "true" : "false") << ", "
       << (constantWeights ? "true" : "false");
    for (int64_t operand : {operands[1], operands[0], operands[4]})
      os << ", kiln::rt::LibraryCall::"
         << (cast<MemRefType>(l.getBuffers()[operand].getType()).getElementType().isF16()
                 ? "F16"
                 : "F32");
    os << "};\n";
  }
  os << "constexpr int kNumLibraryCalls = " << index.size() << ";\n"
     << "constexpr uint64_t kLibraryZeroFloats = " << zeroFloats << ";\n";
  return index;
}

std::string openGuards(llvm::raw_ostream &os, Operation *op, IoExpr io,
                       llvm::DenseMap<Value, int64_t> &index, GuardWriter write) {
  std::string close;
  for (auto [guard, value] : guardsOf(op)) {
    auto [it, inserted] = index.try_emplace(guard, static_cast<int64_t>(index.size()));
    write(os, it->second, bufferExpr(guard, io), value);
    close += "  }\n";
  }
  return close;
}

int64_t copyBytes(CopyOp c) {
  auto type = cast<MemRefType>(c.getSource().getType());
  return bufferBytes(type);
}

const char *commonAbiFunctions() {
  return R"(#define KILN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
/// Records `s` as the context's last status.
kiln_status finish(kiln_context *c, kiln::rt::Status s) {
  c->status = std::move(s);
  return c->status.code();
}

int32_t indexOf(const kiln_tensor_info *list, int32_t count, const char *name) {
  for (int32_t i = 0; name && i < count; ++i)
    if (std::strcmp(list[i].name, name) == 0)
      return i;
  return -1;
}

/// Binds `t` to the input or output (`what`) named `name` of `list`.
kiln_status bindTensor(kiln_context *c, const char *what, const kiln_tensor_info *list, int32_t count,
                 std::vector<kiln_tensor> &slots, std::vector<char> &bound, const char *name,
                 const kiln_tensor *t) {
  int32_t i = indexOf(list, count, name);
  if (i < 0 || !t)
    return finish(c, kiln::rt::Status::error(
                         t ? "the model has no " + std::string(what) + " '" +
                                 std::string(name ? name : "") + "'"
                           : std::string("no tensor"),
                         KILN_ERROR_ARGUMENT));
  kiln::rt::Status s = kiln::rt::checkTensor(std::string(what) + " '" + name + "'", *t, list[i]);
  if (s) {
    slots[i] = *t;
    bound[i] = 1;
  }
  return finish(c, std::move(s));
}

/// The context's model failed to load (or is missing): its status, recorded.
bool modelFailed(kiln_context *c) {
  if (c->model && c->model->status)
    return false;
  finish(c, c->model ? c->model->status : kiln::rt::Status::error("no model", KILN_ERROR_ARGUMENT));
  return true;
}

kiln_status runChecked(kiln_context *c, const kiln_tensor *in, int32_t numIn, kiln_tensor *out,
                       int32_t numOut, bool staged, void *stream) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (modelFailed(c))
    return c->status.code();
  kiln::rt::Status s = kiln::rt::checkTensors("input", in, numIn, kInputs, kNumInputs);
  if (s)
    s = kiln::rt::checkTensors("output", out, numOut, kOutputs, kNumOutputs);
  if (s)
    s = runContext(c, in, out, staged, stream);
  return finish(c, std::move(s));
}
} // namespace

KILN_EXPORT int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }

KILN_EXPORT kiln_model *kiln_model_create(const char *weightsPath) {
  kiln_model *m = new (std::nothrow) kiln_model();
  if (m)
    m->status = loadModel(m, weightsPath);
  return m;
}

KILN_EXPORT void kiln_model_destroy(kiln_model *m) { delete m; }

KILN_EXPORT kiln_status kiln_model_status(const kiln_model *m) {
  return m ? m->status.code() : KILN_ERROR_ARGUMENT;
}

KILN_EXPORT const char *kiln_model_error(const kiln_model *m) {
  if (!m)
    return "no model";
  return m->status ? nullptr : m->status.message().c_str();
}

KILN_EXPORT int32_t kiln_model_num_inputs(const kiln_model *) { return kNumInputs; }
KILN_EXPORT int32_t kiln_model_num_outputs(const kiln_model *) { return kNumOutputs; }

KILN_EXPORT kiln_status kiln_model_input_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumInputs || !info)
    return KILN_ERROR_ARGUMENT;
  *info = kInputs[i];
  return KILN_OK;
}

KILN_EXPORT kiln_status kiln_model_output_info(const kiln_model *, int32_t i, kiln_tensor_info *info) {
  if (i < 0 || i >= kNumOutputs || !info)
    return KILN_ERROR_ARGUMENT;
  *info = kOutputs[i];
  return KILN_OK;
}

KILN_EXPORT int32_t kiln_model_input_index(const kiln_model *, const char *name) {
  return indexOf(kInputs, kNumInputs, name);
}

KILN_EXPORT int32_t kiln_model_output_index(const kiln_model *, const char *name) {
  return indexOf(kOutputs, kNumOutputs, name);
}

KILN_EXPORT kiln_context *kiln_context_create(kiln_model *m) {
  kiln_context *c = new (std::nothrow) kiln_context();
  if (!c)
    return nullptr;
  c->model = m;
  c->inputs.resize(kNumInputs);
  c->outputs.resize(kNumOutputs);
  c->inputBound.assign(kNumInputs, 0);
  c->outputBound.assign(kNumOutputs, 0);
  if (!m)
    c->status = kiln::rt::Status::error("no model", KILN_ERROR_ARGUMENT);
  else if (!m->status)
    c->status = m->status;
  else
    c->status = createContext(c);
  return c;
}

KILN_EXPORT void kiln_context_destroy(kiln_context *c) { delete c; }

KILN_EXPORT kiln_status kiln_context_status(const kiln_context *c) {
  return c ? c->status.code() : KILN_ERROR_ARGUMENT;
}

KILN_EXPORT const char *kiln_context_error(const kiln_context *c) {
  if (!c)
    return "no context";
  return c->status ? nullptr : c->status.message().c_str();
}

KILN_EXPORT kiln_status kiln_context_set_input(kiln_context *c, const char *name, const kiln_tensor *t) {
  return c ? bindTensor(c, "input", kInputs, kNumInputs, c->inputs, c->inputBound, name, t)
           : KILN_ERROR_ARGUMENT;
}

KILN_EXPORT kiln_status kiln_context_set_output(kiln_context *c, const char *name, kiln_tensor *t) {
  return c ? bindTensor(c, "output", kOutputs, kNumOutputs, c->outputs, c->outputBound, name, t)
           : KILN_ERROR_ARGUMENT;
}

KILN_EXPORT kiln_status kiln_context_execute(kiln_context *c) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (modelFailed(c))
    return c->status.code();
  for (int32_t i = 0; i < kNumInputs; ++i)
    if (!c->inputBound[i])
      return finish(c, kiln::rt::Status::error(std::string("input '") + kInputs[i].name +
                                                   "' is not set",
                                               KILN_ERROR_UNBOUND));
  for (int32_t i = 0; i < kNumOutputs; ++i)
    if (!c->outputBound[i])
      return finish(c, kiln::rt::Status::error(std::string("output '") + kOutputs[i].name +
                                                   "' is not set",
                                               KILN_ERROR_UNBOUND));
  return runChecked(c, c->inputs.data(), kNumInputs, c->outputs.data(), kNumOutputs,
                    /*staged=*/true, nullptr);
}

KILN_EXPORT kiln_status kiln_context_run(kiln_context *c, const kiln_tensor *in, int32_t numIn,
                                         kiln_tensor *out, int32_t numOut) {
  return runChecked(c, in, numIn, out, numOut, /*staged=*/true, nullptr);
}

KILN_EXPORT kiln_status kiln_context_run_device(kiln_context *c, const kiln_tensor *in,
                                                int32_t numIn, kiln_tensor *out, int32_t numOut,
                                                void *stream) {
  return runChecked(c, in, numIn, out, numOut, /*staged=*/false, stream);
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
