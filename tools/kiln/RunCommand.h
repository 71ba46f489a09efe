//===- RunCommand.h - `kiln run` and `kiln bench` ---------------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_RUNCOMMAND_H
#define KILN_TOOLS_KILN_RUNCOMMAND_H

#include <string>
#include <vector>

namespace kiln {

struct RunOptions {
  std::string artifactDir;
  std::vector<std::string> inputs; // NAME=path or path (positional)
  std::string outputDir;
};

struct BenchOptions {
  std::string artifactDir;
  int warmup = 10;
  int iterations = 100;
};

/// Returns the process exit code; errors are reported as one line on stderr.
int runModel(const RunOptions &options);
int benchModel(const BenchOptions &options);

} // namespace kiln

#endif // KILN_TOOLS_KILN_RUNCOMMAND_H
