//===- HostModel.cpp - The host target's model hooks ----------------------===//
//
// This file implements kHostHooks (HostModel.h): the weights stay in host memory,
// a context is an arena, the plan's streams as threads and oneDNN's library calls.
//
//===----------------------------------------------------------------------===//
#include "HostModelImpl.h"
#include "kiln/runtime/HostLibrary.h"

namespace kiln::rt {

HostRun::~HostRun() = default;

constexpr TargetHooks kHostHooks = hostHooks<HostLibrary>();

} // namespace kiln::rt
