//===- ChooseEngines.cpp - Library call or Kiln's kernel, by cost ---------===//
//
// This file implements kiln-choose-engines (see Passes.td): for each launch that
// both a library and Kiln's kernel can run, the cheaper on the device model.
//
//===----------------------------------------------------------------------===//
#include "passes/plan/CostModel.h"
#include "passes/plan/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace kiln {
#define GEN_PASS_DEF_CHOOSEENGINES
#include "passes/plan/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct ChooseEnginesPass : kiln::impl::ChooseEnginesBase<ChooseEnginesPass> {
  using ChooseEnginesBase::ChooseEnginesBase;

  void runOnOperation() override {
    std::optional<DeviceModel> device = findDeviceModel(deviceModel);
    if (!device) {
      getOperation().emitError() << "kiln-choose-engines: unknown device model '"
                                 << deviceModel << "' (" << deviceModelList() << ")";
      return signalPassFailure();
    }
    device->tf32 = tf32;
    auto reasonOf = KilnDialect::EngineReasonAttrHelper(&getContext());
    getOperation().walk([&](LaunchOp l) {
      if (!l.getLibrary())
        return;
      Engine kernel = onTensorCores(l) ? Engine::TensorCores : Engine::Simt;
      double library = estimateCost(l, *device, Engine::Library).seconds;
      double own = estimateCost(l, *device, kernel).seconds;
      bool keepLibrary = library <= own;
      auto us = [](double s) { return llvm::formatv("{0:f1} us", s * 1e6).str(); };
      std::string reason =
          keepLibrary ? "library " + us(library) + " <= " + engineName(kernel).str() + " " +
                            us(own)
                      : engineName(kernel).str() + " " + us(own) + " < library " + us(library);
      if (StringAttr why = reasonOf.getAttr(l))
        reason += "; " + engineName(kernel).str() + ": " + why.str();
      reasonOf.setAttr(l, StringAttr::get(&getContext(), reason));
      if (!keepLibrary)
        l.removeLibraryAttr();
    });
  }
};

} // namespace
