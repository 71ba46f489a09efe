//===- RunCommand.cpp - `kiln run` and `kiln bench` ------------------------===//
//
// This file implements the commands that execute a compiled artifact through its
// C ABI (kiln::rt::Artifact loads libmodel.so): inputs from .npy or ONNX TensorProto
// .pb files, outputs written as .npy; and a latency benchmark.
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/RunCommand.h"
#include "compiler/import/TensorFiles.h"

#include "kiln/runtime/Artifact.h"
#include "kiln/runtime/CudaLibraries.h"
#include "kiln/runtime/HostLibrary.h"
#include "kiln/runtime/Npy.h"
#include "kiln/runtime/model_abi.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

namespace kiln {
namespace {

int fail(const std::string &message) {
  fprintf(stderr, "kiln: error: %s\n", message.c_str());
  return 1;
}

} // namespace

namespace {

std::string fileNameFor(const std::string &name) {
  std::string s = name.empty() ? "output" : name;
  for (char &c : s)
    if (c == '/' || c == '\\' || c == '\0')
      c = '_';
  return s;
}

} // namespace

namespace {

} // namespace

int runModel(const RunOptions &options) {
  PreparedRun prepared;
  std::string err;
  if (!prepared.prepare(options.artifactDir, options.inputs, err))
    return fail(err);
  const kiln::rt::ModelAbi &abi = prepared.lib.abi();
  int32_t numInputs = prepared.numInputs, numOutputs = prepared.numOutputs;
  const std::vector<kiln_tensor_info> &outInfo = prepared.outInfo;
  std::vector<kiln_tensor> &inputs = prepared.inputs, &outputs = prepared.outputs;
  std::vector<kiln::rt::HostTensor> &results = prepared.results;
  ContextHandle ctx(prepared.lib);
  if (!prepared.execute(ctx, err))
    return fail(err);
  // --repeat/--threads: every later run, in this context or in one of its own on
  // each thread, must give the same bytes (a race between streams or between
  // contexts shows up here).
  std::vector<std::vector<char>> first;
  for (const kiln::rt::HostTensor &r : results)
    first.push_back(r.data);
  auto repeatRuns = [&](kiln_context *context, int runs, std::string &problem) {
    std::vector<std::vector<char>> mine = first;
    std::vector<kiln_tensor> outs = outputs;
    for (int32_t i = 0; i < numOutputs; ++i)
      outs[i].data = mine[i].data();
    for (int run = 0; run < runs && problem.empty(); ++run) {
      if (abi.kiln_context_run(context, inputs.data(), numInputs, outs.data(),
                               numOutputs) != KILN_OK) {
        const char *e = abi.kiln_context_error(context);
        problem = e ? e : "run failed";
        return;
      }
      for (int32_t i = 0; i < numOutputs && problem.empty(); ++i)
        if (mine[i] != first[i])
          problem = "run " + std::to_string(run + 2) + ": output '" + outInfo[i].name +
                    "' differs from the first run's";
    }
  };
  if (options.threads <= 1) {
    std::string problem;
    repeatRuns(ctx.context, options.repeat - 1, problem);
    if (!problem.empty())
      return fail(problem);
  } else {
    std::vector<std::unique_ptr<ContextHandle>> contexts;
    for (int t = 0; t < options.threads; ++t) {
      contexts.push_back(std::make_unique<ContextHandle>(prepared.lib));
      if (contexts.back()->failed())
        return fail(contexts.back()->error());
    }
    std::vector<std::string> problems(static_cast<size_t>(options.threads));
    std::vector<std::thread> threads;
    for (int t = 0; t < options.threads; ++t)
      threads.emplace_back([&, t] {
        repeatRuns(contexts[t]->context, options.repeat, problems[t]);
      });
    for (std::thread &t : threads)
      t.join();
    for (int t = 0; t < options.threads; ++t)
      if (!problems[t].empty())
        return fail("thread " + std::to_string(t) + ": " + problems[t]);
  }

  std::string dir = options.outputDir.empty() ? "." : options.outputDir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (int32_t i = 0; i < numOutputs; ++i) {
    std::string path = dir + "/" + fileNameFor(outInfo[i].name) + ".npy";
    kiln::rt::Status s = kiln::rt::writeNpy(path, results[i]);
    if (!s)
      return fail(s.message());
    printf("%s: %s\n", outInfo[i].name, path.c_str());
  }
  return 0;
}

/// One line on where an artifact's library calls run (the model's runtime loads
/// its libraries as this process would: same environment).
void printLibraryCalls(const kiln::rt::Manifest &m) {
  if (!m.libraryCalls)
    return;
  long long n = static_cast<long long>(m.libraryCalls);
  if (m.libraryEngine == "onednn") {
    std::string why;
    if (kiln::rt::hostLibraryAvailable(&why))
      std::printf("library calls: %lld, on oneDNN\n", n);
    else
      std::printf("library calls: %lld, on Kiln's kernels (%s)\n", n, why.c_str());
    return;
  }
  // The device's libraries pair the mock driver with the mock libraries.
  bool mock = m.libraryEngine == "cuda-mock";
  if (!mock) {
    std::string error;
    const kiln::rt::CudaDriver *driver = kiln::rt::loadCudaDriver(error);
    mock = driver && driver->mock;
  }
  std::printf("library calls: %lld, %s\n", n, kiln::rt::cudaLibrariesStatus(mock).c_str());
}

int benchModel(const BenchOptions &options) {
  kiln::rt::Artifact lib;
  if (kiln::rt::Status s = lib.open(options.artifactDir); !s)
    return fail(s.message());
  const kiln::rt::ModelAbi &abi = lib.abi();
  printLibraryCalls(lib.manifest());
  if (options.threads < 1)
    return fail("--threads must be at least 1");
  int32_t numInputs = static_cast<int32_t>(lib.inputs().size());
  int32_t numOutputs = static_cast<int32_t>(lib.outputs().size());
  // One context and one set of tensors per thread, inputs alike.
  struct Worker {
    std::unique_ptr<ContextHandle> ctx;
    std::vector<std::vector<char>> storage;
    std::vector<kiln_tensor> inputs, outputs;
    std::vector<double> ms;
    std::string error;
  };
  std::vector<Worker> workers(static_cast<size_t>(options.threads));
  for (Worker &w : workers) {
    w.ctx = std::make_unique<ContextHandle>(lib);
    if (w.ctx->failed())
      return fail(w.ctx->error());
    w.inputs.resize(numInputs);
    w.outputs.resize(numOutputs);
    w.storage.reserve(static_cast<size_t>(numInputs + numOutputs));
    std::mt19937 rng(0);
    for (int32_t i = 0; i < numInputs + numOutputs; ++i) {
      const kiln_tensor_info &info =
          i < numInputs ? lib.inputs()[i] : lib.outputs()[i - numInputs];
      w.storage.emplace_back(kiln::rt::tensorBytes(info), 0);
      // Floats get small random values; integer inputs (often indices) stay 0,
      // which is valid for every model.
      if (i < numInputs && info.dtype == KILN_F32) {
        std::uniform_real_distribution<float> value(-1.0f, 1.0f);
        auto *f = reinterpret_cast<float *>(w.storage.back().data());
        for (size_t k = 0; k < w.storage.back().size() / sizeof(float); ++k)
          f[k] = value(rng);
      }
      kiln_tensor t{info.dtype, info.rank, info.shape, w.storage.back().data()};
      (i < numInputs ? w.inputs[i] : w.outputs[i - numInputs]) = t;
    }
  }
  auto work = [&](Worker &w) {
    auto once = [&] {
      return abi.kiln_context_run(w.ctx->context, w.inputs.data(), numInputs,
                                  w.outputs.data(), numOutputs) == KILN_OK;
    };
    for (int i = 0; i < options.warmup; ++i)
      if (!once()) {
        w.error = w.ctx->error();
        return;
      }
    for (int i = 0; i < options.iterations; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      if (!once()) {
        w.error = w.ctx->error();
        return;
      }
      w.ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - t0).count());
    }
  };
  auto total0 = std::chrono::steady_clock::now();
  if (workers.size() == 1) {
    work(workers[0]);
  } else {
    std::vector<std::thread> threads;
    for (Worker &w : workers)
      threads.emplace_back(work, std::ref(w));
    for (std::thread &t : threads)
      t.join();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - total0).count();
  std::vector<double> ms;
  for (Worker &w : workers) {
    if (!w.error.empty())
      return fail(w.error);
    ms.insert(ms.end(), w.ms.begin(), w.ms.end());
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))];
  };
  printf("iterations: %d (warmup %d) x %d thread%s, one context each\n", options.iterations,
         options.warmup, options.threads, options.threads == 1 ? "" : "s");
  printf("latency ms: min %.4f  p50 %.4f  p90 %.4f  p99 %.4f  max %.4f\n", ms.front(),
         pct(0.5), pct(0.9), pct(0.99), ms.back());
  printf("throughput: %.1f runs/s\n", static_cast<double>(ms.size()) / seconds);
  return 0;
}

} // namespace kiln
