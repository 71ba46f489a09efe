//===- KilnDialect.cpp - Kiln's kernels and plans -------------------------===//
//
// This file implements the kiln dialect: registration and the kernel verifier.
//
//===----------------------------------------------------------------------===//
#include "dialects/kiln/KilnDialect.h"

using namespace mlir;
using namespace kiln;

#include "dialects/kiln/KilnDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
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

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
