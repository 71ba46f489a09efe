//===- ConvertOnnxToLinalg.cpp - The tensor phase --------------------------===//
//
// This file implements kiln-convert-onnx-to-linalg (see Passes.td): it collects every
// family's patterns and runs one partial conversion in which the onnx dialect is
// illegal. Failure names the op that no pattern could lower.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "passes/lowering/Passes.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <regex>

namespace kiln {
#define GEN_PASS_DEF_CONVERTONNXTOLINALG
#include "passes/lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Why `op` cannot be lowered where Kiln knows (the limits of an inference
/// compiler with static shapes); empty otherwise.
std::string unsupportedReason(Operation *op) {
  StringRef name = op->getName().getStringRef();
  // Versioned ops carry a suffix (onnx.ScanV8): compare prefixes.
  auto is = [&](std::initializer_list<StringRef> ops) {
    return llvm::any_of(ops, [&](StringRef o) { return name.starts_with(o); });
  };
  if (is({"onnx.Bernoulli", "onnx.Multinomial", "onnx.RandomNormal", "onnx.RandomUniform"}))
    return "random number generation is not supported (a compiled model is "
           "deterministic)";
  if (name.starts_with("onnx.Dropout"))
    return "training-mode Dropout is not supported (Kiln compiles inference)";
  if (name.starts_with("onnx.BatchNormalization")) {
    auto training = op->getAttrOfType<IntegerAttr>("training_mode");
    bool statistics = op->getNumResults() > 1 && !isa<NoneType>(op->getResult(1).getType());
    if ((training && training.getInt()) || statistics)
      return "training-mode BatchNormalization (batch statistics, running-mean "
             "outputs) is decomposed only with static shapes (kiln-decompose)";
  }
  // The graph phase resolves the control flow it can (kiln-infer-shapes,
  // kiln-decompose); what reaches here needs run-time control flow.
  if (is({"onnx.If"}))
    return "an If decided at run time needs a condition of static shape (kiln-decompose "
           "outlines its branches)";
  if (is({"onnx.Loop"}))
    return "a Loop whose trip count or condition depends on run-time values and whose "
           "iterations nothing bounds is not supported (Kiln unrolls a Loop with a "
           "constant trip count or a declared scan output length; freeze inputs with "
           "--input-value)";
  if (is({"onnx.Scan"}))
    return "a Scan with non-static shapes or sequence_lens is not supported";
  auto dynamic = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && !shaped.hasStaticShape();
  };
  if (llvm::any_of(op->getOperandTypes(), dynamic) ||
      llvm::any_of(op->getResultTypes(), dynamic))
    return "its shapes are not static (pin the inputs with --input-shape, or freeze "
           "the inputs they depend on with --input-value)";
  return "";
}

struct ConvertOnnxToLinalgPass
    : kiln::impl::ConvertOnnxToLinalgBase<ConvertOnnxToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    kiln::OnnxTypeConverter converter;

    // Keep the ONNX element types of the model's interface for the emitter.
    StringRef elementType = kiln::KilnDialect::ElementTypeAttrHelper::getNameStr();
    module.walk([&](func::FuncOp func) {
      FunctionType type = func.getFunctionType();
      for (unsigned i = 0; i < type.getNumInputs(); ++i)
        func.setArgAttr(i, elementType,
                        TypeAttr::get(getElementTypeOrSelf(type.getInput(i))));
      for (unsigned i = 0; i < type.getNumResults(); ++i)
        func.setResultAttr(i, elementType,
                           TypeAttr::get(getElementTypeOrSelf(type.getResult(i))));
    });

    ConversionTarget target(*ctx);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
    target.addIllegalDialect<kiln::onnx::OnnxDialect>();
    target.addLegalOp<kiln::onnx::NoValueOp>();
    target.addIllegalOp<kiln::AttentionOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp r) { return converter.isLegal(r.getOperandTypes()); });
    target.addDynamicallyLegalOp<kiln::IfOp>([&](kiln::IfOp op) {
      return converter.isLegal(op->getOperandTypes()) && converter.isLegal(op->getResultTypes());
    });

    RewritePatternSet patterns(ctx);
    kiln::populateElementwiseLoweringPatterns(patterns, converter);
    kiln::populateConstantLoweringPatterns(patterns, converter);
    kiln::populateMatMulLoweringPatterns(patterns, converter);
    kiln::populateViewLoweringPatterns(patterns, converter);
    kiln::populateIndexingLoweringPatterns(patterns, converter);
    kiln::populateResampleLoweringPatterns(patterns, converter);
    kiln::populateGeneratorLoweringPatterns(patterns, converter);
    kiln::populateReductionLoweringPatterns(patterns, converter);
    kiln::populateNormalizationLoweringPatterns(patterns, converter);
    kiln::populateLossLoweringPatterns(patterns, converter);
    kiln::populateConvPoolLoweringPatterns(patterns, converter);
    kiln::populateAttentionLoweringPatterns(patterns, converter);
    kiln::populateControlFlowLoweringPatterns(patterns, converter);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    // Where Kiln knows why it cannot lower a node, the error says so.
    llvm::DenseMap<Location, std::string> reasons;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<kiln::onnx::OnnxDialect>(op->getDialect()))
        if (std::string why = unsupportedReason(op); !why.empty())
          reasons.try_emplace(op->getLoc(), why);
    });

    // Replace the generic "failed to legalize" with a message that says what Kiln
    // lacks; the location (the node) is kept.
    int64_t opset = 0;
    if (auto a = module->getAttrOfType<IntegerAttr>("onnx.opset"))
      opset = a.getInt();
    bool reported = false;
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      std::smatch m;
      std::string text = diag.str();
      static const std::regex illegal("failed to legalize operation '([^']+)'");
      if (diag.getSeverity() != DiagnosticSeverity::Error ||
          !std::regex_search(text, m, illegal))
        return failure(); // not ours: let it through
      if (reported)
        return success();
      reported = true;
      emitError(diag.getLocation())
          << "Kiln cannot lower " << m[1].str() << " (opset " << opset << "): "
          << (reasons.count(diag.getLocation())
                  ? reasons.lookup(diag.getLocation())
                  : std::string("unsupported operator or attribute combination"));
      return success();
    });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module.walk([](kiln::onnx::NoValueOp op) {
      if (op->use_empty())
        op->erase();
    });
  }
};

} // namespace
