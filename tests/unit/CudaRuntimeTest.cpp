//===- CudaRuntimeTest.cpp - CudaModel against the mock driver ------------===//
//
// Runs kiln_runtime's CUDA half on libkiln_mock_cuda.so (MockCudaDriver.cpp), which
// checks every call: launches against the PTX's entries, pointers against live
// allocations, event waits against earlier records.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/CudaRuntime.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <string>

using namespace kiln::rt;

namespace {

const char kPtx[] = R"(//
// A module as LLVM's NVPTX backend writes it.
.version 7.0
.target sm_80
.address_size 64

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u64 scale_param_1
)
.maxntid 128, 1, 1
{
	ret;
}

.visible .entry add(
	.param .u64 add_param_0,
	.param .u64 add_param_1,
	.param .u64 add_param_2
)
.maxntid 128, 1, 1
{
	ret;
}
)";
const char *const kNames[] = {"scale", "add"};

std::string mockTrace() {
  void *lib = dlopen(KILN_MOCK_CUDA, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib);
  auto trace = reinterpret_cast<const char *(*)()>(dlsym(lib, "kiln_mock_trace"));
  REQUIRE(trace);
  return trace();
}

CudaModel::Config config(bool graph) {
  CudaModel::Config c;
  c.ptx = kPtx;
  c.functions = kNames;
  c.numFunctions = 2;
  c.arenaBytes = 1024;
  c.numStreams = 2;
  c.useGraph = graph;
  c.inputBytes = {16};
  c.outputBytes = {16};
  return c;
}

struct UseMock {
  UseMock() { setenv("KILN_CUDA_DRIVER", KILN_MOCK_CUDA, 1); }
};

} // namespace

TEST_CASE("CudaModel orders streams with events and stays inside its buffers",
          "[cuda]") {
  UseMock mock;
  CudaModel m;
  float weights[16] = {1, 2, 3};
  Status s = m.init(config(false), weights, sizeof weights);
  INFO(s.message());
  REQUIRE(s);
  size_t before = mockTrace().size();
  REQUIRE(m.begin(nullptr));
  REQUIRE(m.launch({0, {4, 1, 1}, {128, 1, 1}, 0}, {m.arena(), m.arena() + 512}));
  REQUIRE(m.crossStream(0, 1));
  REQUIRE(m.launch({1, {1, 1, 1}, {64, 1, 1}, 1},
                   {m.arena() + 512, m.weights(), m.stagedOutput(0)}));
  REQUIRE(m.end(nullptr));
  std::string run = mockTrace().substr(before);
  // Stream 1 forks from stream 0, waits for scale's stream before add, and stream
  // 0 joins it at the end.
  size_t fork = run.find("wait "), scale = run.find("launch scale"),
         cross = run.find("wait ", scale), add = run.find("launch add"),
         join = run.find("wait ", add);
  CHECK(fork < scale);
  CHECK(scale < cross);
  CHECK(cross < add);
  CHECK(join != std::string::npos);
  CHECK(run.find("ERROR") == std::string::npos);
}

TEST_CASE("CudaModel reports what the driver refuses", "[cuda]") {
  UseMock mock;
  CudaModel m;
  REQUIRE(m.init(config(false), nullptr, 0));
  Status outside = m.launch({0, {1, 1, 1}, {32, 1, 1}, 0}, {m.arena(), m.arena() + 4096});
  REQUIRE_FALSE(outside);
  CHECK(outside.message().find("scale") != std::string::npos);
  CHECK(outside.message().find("outside every allocation") != std::string::npos);
  Status tooWide = m.launch({0, {1, 1, 1}, {256, 1, 1}, 0}, {m.arena(), m.arena()});
  REQUIRE_FALSE(tooWide);
  CHECK(tooWide.message().find(".maxntid") != std::string::npos);
}

TEST_CASE("CudaModel captures a run once and replays it", "[cuda]") {
  UseMock mock;
  CudaModel m;
  REQUIRE(m.init(config(true), nullptr, 0));
  size_t before = mockTrace().size();
  auto body = [&] {
    return m.launch({0, {1, 1, 1}, {128, 1, 1}, 0}, {m.arena(), m.stagedInput(0)});
  };
  std::vector<CUdeviceptr> bindings = {m.stagedInput(0)};
  REQUIRE(m.run(nullptr, bindings, body));
  REQUIRE(m.run(nullptr, bindings, body));
  std::string run = mockTrace().substr(before);
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t p = run.find(what); p != std::string::npos; p = run.find(what, p + 1))
      ++n;
    return n;
  };
  CHECK(count("capture-begin") == 1);
  CHECK(count("capture launch scale") == 1);
  CHECK(count("graph-launch") == 2);
  // New bindings (a caller's other buffers) are captured anew.
  bindings = {m.stagedOutput(0)};
  REQUIRE(m.run(nullptr, bindings, body));
  run = mockTrace().substr(before);
  CHECK(count("capture-begin") == 2);
}
