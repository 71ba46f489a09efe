//===- KilnDialect.cpp - Kiln's kernels and plans -------------------------===//
//
// This file implements the kiln dialect: registration, the verifiers of its ops
// and attributes, and of the discardable attributes it declares (kiln.kernel on
// outlined kernel functions, kiln.element_type on function arguments and results).
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/kiln/KilnAttrs.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/kiln/KilnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == getKernelAttrHelper().getName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << attr.getName() << " must be a unit attribute";
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << attr.getName() << " marks kernel functions only";
    return success();
  }
  if (attr.getName() == getEngineAttrHelper().getName()) {
    auto engine = dyn_cast<StringAttr>(attr.getValue());
    if (!engine || !isa<LaunchOp>(op) ||
        (engine.getValue() != kEngineTensorCores && engine.getValue() != kEngineSimt))
      return op->emitError() << attr.getName() << " is a kiln.launch's \""
                             << kEngineTensorCores << "\" or \"" << kEngineSimt << "\"";
    return success();
  }
  if (attr.getName() == getEstimatedNsAttrHelper().getName()) {
    if (!isa<IntegerAttr>(attr.getValue()) || !isa<LaunchOp>(op))
      return op->emitError() << attr.getName() << " is an integer attribute of kiln.launch";
    return success();
  }
  if (attr.getName() == getEngineReasonAttrHelper().getName()) {
    if (!isa<StringAttr>(attr.getValue()) || !isa<LaunchOp>(op))
      return op->emitError() << attr.getName() << " is a string attribute of kiln.launch";
    return success();
  }
  if (attr.getName() == getKernelCacheAttrHelper().getName()) {
    auto cache = dyn_cast<DictionaryAttr>(attr.getValue());
    auto dir = cache ? cache.getAs<StringAttr>("dir") : StringAttr();
    auto kernels = cache ? cache.getAs<ArrayAttr>("kernels") : ArrayAttr();
    bool pairs = kernels && llvm::all_of(kernels, [](Attribute a) {
      auto pair = dyn_cast<ArrayAttr>(a);
      return pair && pair.size() == 2 && isa<StringAttr>(pair[0]) && isa<StringAttr>(pair[1]);
    });
    if (op->getName().getStringRef() != "gpu.module" || !dir || !pairs)
      return op->emitError() << attr.getName()
                             << " is a gpu.module's {dir = \"...\", kernels = "
                                "[[\"name\", \"key\"], ...]}";
    return success();
  }
  if (attr.getName() == getElementTypeAttrHelper().getName())
    return op->emitError() << attr.getName()
                           << " belongs on function arguments and results";
  return op->emitError() << "unknown kiln attribute " << attr.getName();
}

/// kiln.element_type: a TypeAttr holding an integer or float type.
static LogicalResult verifyValueAttribute(Operation *op, NamedAttribute attr,
                                          const char *what) {
  if (attr.getName() != KilnDialect::ElementTypeAttrHelper::getNameStr())
    return op->emitError() << "unknown kiln " << what << " attribute " << attr.getName();
  auto type = dyn_cast<TypeAttr>(attr.getValue());
  if (!type || !type.getValue().isIntOrFloat())
    return op->emitError() << attr.getName() << " must be an integer or float type";
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned, unsigned,
                                                    NamedAttribute attr) {
  return verifyValueAttribute(op, attr, "argument");
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned,
                                                       NamedAttribute attr) {
  return verifyValueAttribute(op, attr, "result");
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult GpuStageAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringAttr function, ArrayRef<int64_t> grid,
                                   ArrayRef<int64_t> block, BoolAttr sync) {
  if (!function || function.getValue().empty())
    return emitError() << "gpu stage needs a function name";
  if (grid.size() != 3 || block.size() != 3)
    return emitError() << "gpu stage " << function << " needs a 3-d grid and block";
  int64_t threads = 1;
  for (int64_t d : block) {
    if (d < 1)
      return emitError() << "gpu stage " << function << " has a block dimension < 1";
    threads *= d;
  }
  if (threads > 1024)
    return emitError() << "gpu stage " << function << " has " << threads
                       << " threads per block (at most 1024)";
  for (int64_t d : grid)
    if (d < 1 || d > INT32_MAX)
      return emitError() << "gpu stage " << function << " has a grid dimension out of range";
  if (!sync)
    return emitError() << "gpu stage " << function << " needs sync";
  return success();
}

LogicalResult LibraryCallAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      StringAttr kind, ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> operands, StringAttr activation,
                                      FloatAttr alpha, FloatAttr beta, FloatAttr scale) {
  size_t shapeSize = 0;
  if (kind && kind.getValue() == "conv")
    shapeSize = 18;
  else if (kind && kind.getValue() == "matmul")
    shapeSize = 8;
  else
    return emitError() << "library call kind must be \"conv\" or \"matmul\"";
  if (shape.size() != shapeSize)
    return emitError() << "library call " << kind << " needs " << shapeSize
                       << " shape values, not " << shape.size();
  for (int64_t d : shape)
    if (d < 0)
      return emitError() << "library call " << kind << " has a negative shape value";
  if (operands.size() != 5)
    return emitError() << "library call needs 5 operand indices (input, weights, bias, "
                          "residual, output)";
  if (operands[0] < 0 || operands[1] < 0 || operands[4] < 0)
    return emitError() << "library call needs an input, weights and an output";
  if (!activation ||
      !llvm::is_contained({"none", "relu", "clip", "gelu_erf", "gelu_tanh"},
                          activation.getValue()))
    return emitError()
           << "library call activation must be none, relu, clip, gelu_erf or gelu_tanh";
  if (!alpha || !beta || !scale)
    return emitError() << "library call needs alpha, beta and scale";
  if (scale.getValueAsDouble() != 1.0 && operands.size() == 5 && operands[2] >= 0)
    return emitError() << "library call scales its accumulator and has a bias";
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  auto q = cast<RankedTensorType>(getQ().getType());
  auto kt = cast<RankedTensorType>(getKt().getType());
  auto v = cast<RankedTensorType>(getV().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  int64_t r = q.getRank();
  if (r < 2 || kt.getRank() != r || v.getRank() != r || out.getRank() != r)
    return emitOpError("needs q, kt, v and the result of one rank >= 2");
  if (!q.hasStaticShape() || !kt.hasStaticShape() || !v.hasStaticShape() ||
      !out.hasStaticShape())
    return emitOpError("needs static shapes");
  ArrayRef<int64_t> qs = q.getShape(), ks = kt.getShape(), vs = v.getShape(),
                    os = out.getShape();
  if (qs.drop_back(2) != ks.drop_back(2) || qs.drop_back(2) != vs.drop_back(2) ||
      qs.drop_back(2) != os.drop_back(2))
    return emitOpError("needs equal batch dims");
  if (qs[r - 1] != ks[r - 2] || ks[r - 1] != vs[r - 2] || os[r - 2] != qs[r - 2] ||
      os[r - 1] != vs[r - 1])
    return emitOpError("q [..., Sq, D], kt [..., D, Sk], v [..., Sk, Dv] and the result "
                       "[..., Sq, Dv] disagree");
  StringRef kind = getMaskKind();
  if (kind != "none" && kind != "add" && kind != "keep")
    return emitOpError("mask_kind must be none, add or keep");
  if ((kind == "none") != !getMask())
    return emitOpError("a mask goes with mask_kind add or keep, and only then");
  return success();
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but "
                         << body.getNumArguments() << " block arguments";
  for (auto [input, arg] : llvm::zip(getInputs(), body.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError() << "block argument type " << arg.getType()
                           << " differs from input type " << input.getType();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields types that differ from its results";
  return success();
}

/// The ops of type `IoOp` in `plan`, ordered by index; false with a diagnostic when
/// the indices are not 0..n-1, each once.
template <typename IoOp>
static LogicalResult collectByIndex(PlanOp plan, const char *what,
                                    SmallVectorImpl<IoOp> &ordered) {
  SmallVector<IoOp> ops(plan.getBody().getOps<IoOp>());
  ordered.assign(ops.size(), IoOp());
  for (IoOp op : ops) {
    uint64_t index = op.getIndex();
    if (index >= ops.size())
      return op.emitOpError() << "index " << index << " of " << ops.size() << " " << what
                              << "s is out of range";
    if (ordered[index])
      return op.emitOpError() << what << " " << index << " is bound twice";
    ordered[index] = op;
  }
  return success();
}

SmallVector<InputOp> PlanOp::getInputOps() {
  SmallVector<InputOp> ops;
  (void)collectByIndex(*this, "input", ops);
  return ops;
}

SmallVector<OutputOp> PlanOp::getOutputOps() {
  SmallVector<OutputOp> ops;
  (void)collectByIndex(*this, "output", ops);
  return ops;
}

LogicalResult PlanOp::verify() {
  SmallVector<InputOp> inputs;
  SmallVector<OutputOp> outputs;
  if (failed(collectByIndex(*this, "input", inputs)) ||
      failed(collectByIndex(*this, "output", outputs)))
    return failure();
  // Each event is recorded once, before any wait on it, on another stream.
  DenseMap<int64_t, RecordOp> recorded;
  for (Operation &op : getBody().front()) {
    if (auto r = dyn_cast<RecordOp>(op)) {
      if (!recorded.try_emplace(r.getEvent(), r).second)
        return r.emitOpError() << "records event " << r.getEvent() << " a second time";
    } else if (auto w = dyn_cast<WaitOp>(op)) {
      auto it = recorded.find(w.getEvent());
      if (it == recorded.end())
        return w.emitOpError() << "waits on event " << w.getEvent()
                               << ", which no earlier kiln.record records";
      if (it->second.getStream() == w.getStream())
        return w.emitOpError() << "waits on event " << w.getEvent()
                               << " on the stream that records it";
    }
  }
  for (Operation &op : getBody().front()) {
    int64_t stream = 0;
    if (auto l = dyn_cast<LaunchOp>(op)) stream = l.getStream();
    else if (auto c = dyn_cast<CopyOp>(op)) stream = c.getStream();
    else if (auto r = dyn_cast<RecordOp>(op)) stream = r.getStream();
    else if (auto w = dyn_cast<WaitOp>(op)) stream = w.getStream();
    if (stream < -1 || stream >= 64)
      return op.emitOpError() << "runs on stream " << stream << " (0..63, or -1 unassigned)";
  }
  return success();
}

/// Guards are one-element i1 buffers, each with the value that lets the op run.
static LogicalResult verifyGuards(Operation *op, ValueRange guards,
                                  std::optional<ArrayRef<bool>> values) {
  if (guards.size() != (values ? values->size() : 0))
    return op->emitOpError() << "has " << guards.size() << " guards but "
                             << (values ? values->size() : 0) << " guard values";
  for (Value g : guards) {
    auto type = cast<MemRefType>(g.getType());
    if (type.getNumElements() != 1 || !type.getElementType().isInteger(1))
      return op->emitOpError() << "guard " << type << " is not one i1 element";
  }
  return success();
}

LogicalResult IfOp::verify() {
  auto cond = cast<RankedTensorType>(getCond().getType());
  if (!cond.hasStaticShape() || cond.getNumElements() != 1 ||
      !cond.getElementType().isInteger(1))
    return emitOpError() << "condition " << cond << " is not one i1 element";
  return success();
}

LogicalResult IfOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FunctionType expected =
      FunctionType::get(getContext(), getInputs().getTypes(), getResultTypes());
  for (FlatSymbolRefAttr ref : {getThenBranchAttr(), getElseBranchAttr()}) {
    auto fn = symbols.lookupNearestSymbolFrom<FunctionOpInterface>(*this, ref);
    if (!fn)
      return emitOpError() << "branch " << ref << " is no function";
    if (fn.getFunctionType() != expected)
      return emitOpError() << "branch " << ref << " has type " << fn.getFunctionType()
                           << ", expected " << expected;
  }
  return success();
}

LogicalResult CopyOp::verify() {
  return verifyGuards(*this, getGuards(), getGuardValues());
}

LogicalResult LaunchOp::verify() {
  if (failed(verifyGuards(*this, getGuards(), getGuardValues())))
    return failure();
  if (getNumInputs() > getBuffers().size())
    return emitOpError() << "reads " << getNumInputs() << " buffers but has "
                         << getBuffers().size();
  if (LibraryCallAttr library = getLibraryAttr()) {
    int64_t numBuffers = static_cast<int64_t>(getBuffers().size());
    ArrayRef<int64_t> operands = library.getOperands();
    for (auto [i, index] : llvm::enumerate(operands)) {
      bool written = i == 4;
      if (index < -1 || index >= numBuffers ||
          (index >= 0 && (index >= static_cast<int64_t>(getNumInputs())) != written))
        return emitOpError() << "library call operand " << i << " names buffer " << index
                             << ", not " << (written ? "a written" : "a read") << " one";
    }
  }
  if (getScratch() && !getGpuStages())
    return emitOpError() << "has a scratch buffer but no gpu_stages to use it";
  if (std::optional<ArrayRef<int64_t>> inPlace = getInPlace()) {
    if (inPlace->size() != getWrittenBuffers().size())
      return emitOpError() << "in_place has " << inPlace->size() << " entries for "
                           << getWrittenBuffers().size() << " written buffers";
    for (int64_t i : *inPlace)
      if (i < -1 || i >= static_cast<int64_t>(getNumInputs()))
        return emitOpError() << "in_place names input " << i << " of " << getNumInputs();
  }
  return success();
}

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
