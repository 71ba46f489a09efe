//===- HostOptions.h - The options of the host-code targets -----*- C++ -*-===//
#ifndef KILN_CODEGEN_HOST_HOSTOPTIONS_H
#define KILN_CODEGEN_HOST_HOSTOPTIONS_H

#include <string>

namespace kiln {

/// What the targets that compile host code read (host; cuda-sim, whose kernels
/// are host code, reads `cpu`).
struct HostOptions {
  /// The CPU to tune for ("native": this machine).
  std::string cpu = "native";
  /// host: each library call's own kernel stays in the artifact, the run's
  /// fallback where oneDNN is missing or cannot run the call. Without them the
  /// artifact is the library calls and the other kernels (ResNet-50: 3% of the
  /// object code, a third of the compile time), and such a run fails, saying so.
  bool fallbackKernels = true;
};

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTOPTIONS_H
