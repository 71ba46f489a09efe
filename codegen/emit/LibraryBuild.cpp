//===- LibraryBuild.cpp - Build libmodel.so -------------------------------===//
//
// This file implements the library build (LibraryBuild.h): one compiler call, with
// a version script that keeps every symbol but the C ABI (kiln_model_*,
// kiln_context_*, kiln_abi_version) local.
//
//===----------------------------------------------------------------------===//
#include "codegen/emit/LibraryBuild.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace kiln {

bool buildModelLibrary(const LibraryBuild &build, std::string &error) {
  std::string mapFile = build.dir + "/model.exports";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(mapFile, ec);
    if (ec) {
      error = "cannot write " + mapFile + ": " + ec.message();
      return false;
    }
    os << "{ global: kiln_abi_version; kiln_model_*; kiln_context_*; local: *; };\n";
  }
  auto compiler = llvm::sys::findProgramByName(build.compiler);
  if (!compiler) {
    error = "cannot find the C++ compiler '" + build.compiler + "' to build libmodel.so";
    return false;
  }
  std::vector<std::string> args = {
      *compiler, "-std=c++17", build.optimize ? "-O1" : "-O0", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", "-DKILN_MODEL_LIBRARY",
      "-I" + build.runtimeIncludeDir, "-I" + build.dir, build.dir + "/model.cpp"};
#ifdef KILN_SANITIZE_THREAD
  // A ThreadSanitizer build's models are built and linked with it too.
  args.push_back("-fsanitize=thread");
#endif
#ifdef KILN_SANITIZE_ADDRESS
  // The runtime library linked in is instrumented: the model needs the ASan and
  // UBSan runtimes (and is checked by them).
  args.push_back("-fsanitize=address,undefined");
#endif
  args.insert(args.end(), build.linkInputs.begin(), build.linkInputs.end());
  if (build.embedWeights) {
    args.push_back("-Wa,-I," + build.dir); // where .incbin finds model.weights
    args.push_back(build.dir + "/model_weights.S");
  }
  for (std::string a : {build.runtimeLibrary, "-Wl,--version-script=" + mapFile,
                        std::string("-lm"), std::string("-ldl"), std::string("-pthread"), std::string("-o"),
                        build.dir + "/libmodel.so"})
    args.push_back(a);
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::string log = build.dir + "/build.log";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    error = "building libmodel.so failed (see " + log + ")" +
            (execError.empty() ? "" : ": " + execError);
    return false;
  }
  return true;
}

} // namespace kiln
