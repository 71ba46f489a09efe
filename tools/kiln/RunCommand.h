//===- RunCommand.h - `kiln run` and `kiln bench` ---------------*- C++ -*-===//
//
// The commands that execute a compiled artifact (compiler/driver/ArtifactRun.h
// loads and runs it).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUNCOMMAND_H
#define KILN_TOOLS_KILN_RUNCOMMAND_H

#include "compiler/driver/ArtifactRun.h"

#include <string>
#include <vector>

namespace kiln {

struct RunOptions {
  std::string artifactDir;
  std::vector<std::string> inputs; // NAME=path or path (positional)
  std::string outputDir;
  /// Runs this many times; every run's outputs must equal the first's, bitwise.
  int repeat = 1;
  /// With more than one: each thread runs `repeat` times in a context of its own
  /// (of the one model), every output checked against the first run's.
  int threads = 1;
};

struct BenchOptions {
  std::string artifactDir;
  int warmup = 10;
  int iterations = 100;
  /// Threads running at once, each with its own context of the one model.
  int threads = 1;
};

/// Returns the process exit code; errors are reported as one line on stderr.
int runModel(const RunOptions &options);
int benchModel(const BenchOptions &options);

} // namespace kiln

#endif // KILN_TOOLS_KILN_RUNCOMMAND_H
