//===- HostLibrary.h - Contractions on oneDNN for the host ------*- C++ -*-===//
//
// The host target runs a plan's library calls (#kiln.library_call: a convolution
// or matrix product with its scale, bias, residual and activation) through oneDNN, on all
// cores (oneDNN's threads; OMP_NUM_THREADS or KILN_NUM_THREADS to limit them).
// oneDNN is loaded with dlopen on first use, like the CUDA driver: libdnnl.so.2,
// or the file KILN_DNNL_LIBRARY names ("none": never load it). Where it is missing, or has no
// implementation for a call, the call says so and the generated code runs the
// call's own Kiln kernel instead, which the artifact always contains.
//
//   kiln::rt::HostLibrary library(2);            // a context's 2 calls
//   bool ran = false;
//   Status s = library.run(0, call, buffers, ran);
//   if (s && !ran) k0(...);                      // the fallback kernel
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_HOSTLIBRARY_H
#define KILN_RUNTIME_HOSTLIBRARY_H

#include "kiln/runtime/LibraryCall.h"
#include "kiln/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

/// True when oneDNN is loaded (or loads now); otherwise `why` says why not.
bool hostLibraryAvailable(std::string *why = nullptr);

/// A context's library calls: each call's primitive is created on its first run
/// and kept (with its weights reordered once into the layout oneDNN prefers). A
/// call runs on one stream, so calls on different streams never share a slot.
class HostLibrary {
public:
  explicit HostLibrary(int numCalls);
  ~HostLibrary();
  HostLibrary(const HostLibrary &) = delete;
  HostLibrary &operator=(const HostLibrary &) = delete;

  /// Runs call `index`. `ran` is false when the library cannot run it (not
  /// loaded, or no implementation for this call): the caller runs its kernel.
  Status run(int index, const LibraryCall &call, const LibraryBuffers &buffers, bool &ran);

  /// How many calls ran on the library and how many fell back, since creation.
  int64_t libraryRuns() const;
  int64_t fallbackRuns() const;

private:
  struct Slot;
  std::vector<std::unique_ptr<Slot>> slots;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_HOSTLIBRARY_H
