//===- ConvertOnnxToLinalg.cpp - The tensor phase --------------------------===//
//
// This file implements convert-onnx-to-linalg (see Passes.td): it collects every
// family's patterns and runs one partial conversion in which the onnx dialect is
// illegal. Failure names the op that no pattern could lower.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"

#include <regex>

namespace kiln {
#define GEN_PASS_DEF_CONVERTONNXTOLINALG
#include "passes/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

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
                           math::MathDialect, tensor::TensorDialect>();
    target.addIllegalDialect<kiln::onnx::OnnxDialect>();
    target.addLegalOp<kiln::onnx::NoValueOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp r) { return converter.isLegal(r.getOperandTypes()); });

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
    kiln::populateConvPoolLoweringPatterns(patterns, converter);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

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
          << "Kiln cannot lower " << m[1].str() << " (opset " << opset
          << "): unsupported operator or attribute combination";
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
