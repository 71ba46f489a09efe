//===- CudaRuntimeTest.cpp - CudaModel/CudaContext on the mock driver -----===//
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

CudaContext::Config config(bool graph) {
  CudaContext::Config c;
  c.arenaBytes = 1024;
  c.numStreams = 2;
  c.numEvents = 3;
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
  CudaModel model;
  float weights[16] = {1, 2, 3};
  Status s = model.init(kPtx, kNames, 2, weights, sizeof weights);
  INFO(s.message());
  REQUIRE(s);
  CudaContext m;
  s = m.init(model, config(false));
  INFO(s.message());
  REQUIRE(s);
  size_t before = mockTrace().size();
  // What the generated code issues for a plan with a fork, a dependency and a join.
  REQUIRE(m.begin(std::nullopt));
  REQUIRE(m.record(0, 0));
  REQUIRE(m.wait(0, 1));
  REQUIRE(m.launch({0, {4, 1, 1}, {128, 1, 1}, 0}, {m.arena(), m.arena() + 512}));
  REQUIRE(m.record(1, 0));
  REQUIRE(m.wait(1, 1));
  REQUIRE(m.launch({1, {1, 1, 1}, {64, 1, 1}, 1},
                   {m.arena() + 512, m.weights(), m.stagedOutput(0)}));
  REQUIRE(m.record(2, 1));
  REQUIRE(m.wait(2, 0));
  REQUIRE(m.end(std::nullopt));
  std::string run = mockTrace().substr(before);
  size_t fork = run.find("wait "), scale = run.find("launch scale"),
         cross = run.find("wait ", scale), add = run.find("launch add"),
         join = run.find("wait ", add);
  CHECK(fork < scale);
  CHECK(scale < cross);
  CHECK(cross < add);
  CHECK(join != std::string::npos);
  CHECK(run.find("ERROR") == std::string::npos);
  // A wait for an event the plan never recorded is the driver's error, reported.
  CudaContext fresh;
  REQUIRE(fresh.init(model, config(false)));
  Status unrecorded = fresh.wait(2, 1);
  REQUIRE_FALSE(unrecorded);
  CHECK(unrecorded.message().find("cuStreamWaitEvent") != std::string::npos);
}

TEST_CASE("CudaModel reports what the driver refuses", "[cuda]") {
  UseMock mock;
  CudaModel model;
  REQUIRE(model.init(kPtx, kNames, 2, nullptr, 0));
  CudaContext m;
  REQUIRE(m.init(model, config(false)));
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
  CudaModel model;
  REQUIRE(model.init(kPtx, kNames, 2, nullptr, 0));
  CudaContext m;
  REQUIRE(m.init(model, config(true)));
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

TEST_CASE("Contexts of one model share its weights and own their arenas", "[cuda]") {
  UseMock mock;
  CudaModel model;
  float weights[16] = {1};
  REQUIRE(model.init(kPtx, kNames, 2, weights, sizeof weights));
  CudaContext a, b;
  REQUIRE(a.init(model, config(false)));
  REQUIRE(b.init(model, config(false)));
  CHECK(a.weights() == model.weights());
  CHECK(b.weights() == model.weights());
  CHECK(a.arena() != b.arena());
  CHECK(a.stagedInput(0) != b.stagedInput(0));
  // Each runs on its own streams with its own events.
  for (CudaContext *c : {&a, &b}) {
    REQUIRE(c->begin(nullptr));
    REQUIRE(c->launch({0, {1, 1, 1}, {128, 1, 1}, 0}, {c->arena(), c->weights()}));
    REQUIRE(c->end(nullptr));
    REQUIRE(c->synchronize());
  }
}
