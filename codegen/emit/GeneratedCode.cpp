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

void writeKernelDeclarations(llvm::raw_ostream &os, StringRef prefix,
                             const llvm::MapVector<StringRef, unsigned> &kernels) {
  os << "extern \"C\" {\n";
  for (const auto &[k, args] : kernels) {
    os << "void " << prefix << k << "(";
    for (unsigned i = 0; i < args; ++i)
      os << (i ? ", " : "") << "void *";
    os << ");\n";
  }
  os << "}\n\n";
}

} // namespace kiln
