//===- MockCudaDriver.cpp - A CUDA driver that checks instead of running --===//
//
// libkiln_mock_cuda.so exports the driver entry points kiln_runtime loads
// (KILN_CUDA_DRIVER=path/to/libkiln_mock_cuda.so). Memory is host memory, so copies
// are real; kernels do not run. Instead every call is checked and traced:
//   - a launch names a function of the loaded PTX, passes exactly as many
//     parameters as its .entry declares, each a 16-byte aligned pointer inside a
//     live allocation (the arena, weights, scratch, staging or a caller's buffer),
//     a block within
//     the entry's .maxntid, on a live stream;
//   - a stream may only wait for an event that was recorded before;
//   - nothing is used after it is freed or destroyed;
//   - a function is looked up in the module that holds it (each module its own
//     functions: several models load side by side).
// Every entry point takes one lock, so contexts on several threads may call it.
// A failed check returns CUDA_ERROR_INVALID_VALUE and is traced as "ERROR ...".
// The trace goes to $KILN_MOCK_CUDA_TRACE (appended) and to kiln_mock_trace().
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

using CUdeviceptr = unsigned long long;
constexpr int kInvalid = 1;

struct Function {
  std::string name;
  int params = 0;
  int maxThreads = 1024;
};

struct State {
  // Every entry point holds it: contexts on several threads (a server's model
  // instances, the GPU check's parallel tests) call the driver at once.
  std::recursive_mutex mutex;
  std::string trace;
  std::string lastError;
  std::map<CUdeviceptr, size_t> allocations; // base -> bytes
  std::vector<Function> functions;           // handle = index + 1, of every module
  std::vector<std::vector<size_t>> modules;   // handle = index + 1: its functions
  std::set<uintptr_t> streams, events, recorded;
  uintptr_t nextHandle = 0x1000;
  // Streams being captured, each with the stream whose capture it joined (by
  // waiting for an event recorded in that capture), and where events were recorded.
  std::map<uintptr_t, uintptr_t> captureOf, eventCapture;
  int launches = 0;
};

State &state() {
  static State s;
  return s;
}

#define KILN_MOCK_LOCKED std::lock_guard<std::recursive_mutex> lock(state().mutex)

void log(const std::string &line) {
  State &s = state();
  s.trace += line + "\n";
  if (const char *path = std::getenv("KILN_MOCK_CUDA_TRACE"))
    if (FILE *f = std::fopen(path, "a")) {
      std::fputs((line + "\n").c_str(), f);
      std::fclose(f);
    }
}

int fail(const std::string &why) {
  state().lastError = why;
  log("ERROR " + why);
  return kInvalid;
}

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(v));
  return buf;
}

/// The allocation holding [p, p + bytes), or none.
bool inAllocation(CUdeviceptr p, size_t bytes) {
  State &s = state();
  auto it = s.allocations.upper_bound(p);
  if (it == s.allocations.begin())
    return false;
  --it;
  return p >= it->first && p + bytes <= it->first + it->second;
}

std::string streamName(void *stream) {
  return stream ? "S" + hex(reinterpret_cast<uintptr_t>(stream)) : "S0(legacy)";
}

bool liveStream(void *stream) {
  return !stream || state().streams.count(reinterpret_cast<uintptr_t>(stream));
}

} // namespace

extern "C" {

/// Marks this driver as Kiln's mock: the runtime then pairs it with the mock
/// cuBLASLt and cuDNN (MockCublasLt.cpp, MockCudnn.cpp), which compute on host memory.
void kiln_mock_cuda_driver() {}
const char *kiln_mock_trace() { return state().trace.c_str(); }
int kiln_mock_launches() { return state().launches; }

int cuInit(unsigned) {
  KILN_MOCK_LOCKED;
  log("init");
  return 0;
}
int cuDeviceGet(int *device, int ordinal) {
  KILN_MOCK_LOCKED;
  *device = ordinal;
  return ordinal == 0 ? 0 : fail("no device " + std::to_string(ordinal));
}
int cuDevicePrimaryCtxRetain(void **ctx, int) {
  KILN_MOCK_LOCKED;
  *ctx = reinterpret_cast<void *>(0x1);
  return 0;
}
int cuCtxSetCurrent(void *) { return 0; }

int cuModuleLoadData(void **module, const void *image) {
  KILN_MOCK_LOCKED;
  const char *ptx = static_cast<const char *>(image);
  if (!ptx || std::strncmp(ptx, "//", 2) != 0 || !std::strstr(ptx, ".version"))
    return fail("module image is not PTX text");
  State &s = state();
  std::vector<size_t> &functions = s.modules.emplace_back();
  // .entry NAME( .param .u64 ..., ... ) [.maxntid X, Y, Z]
  std::string text(ptx);
  std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)\s*(\.maxntid\s+(\d+),\s*(\d+),\s*(\d+))?)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry);
       it != std::sregex_iterator(); ++it) {
    Function f;
    f.name = (*it)[1];
    std::string params = (*it)[2];
    for (size_t pos = 0; (pos = params.find(".param", pos)) != std::string::npos; ++pos)
      ++f.params;
    if ((*it)[3].matched)
      f.maxThreads = std::stoi((*it)[4]) * std::stoi((*it)[5]) * std::stoi((*it)[6]);
    functions.push_back(s.functions.size());
    s.functions.push_back(f);
  }
  *module = reinterpret_cast<void *>(s.modules.size());
  log("module entries=" + std::to_string(functions.size()));
  return 0;
}
int cuModuleUnload(void *module) {
  KILN_MOCK_LOCKED;
  uintptr_t m = reinterpret_cast<uintptr_t>(module);
  if (m == 0 || m > state().modules.size())
    return fail("unload of an unknown module");
  log("module-unload");
  return 0;
}
int cuModuleGetFunction(void **fn, void *module, const char *name) {
  KILN_MOCK_LOCKED;
  State &s = state();
  uintptr_t m = reinterpret_cast<uintptr_t>(module);
  if (m == 0 || m > s.modules.size())
    return fail(std::string("kernel ") + name + " looked up in an unknown module");
  for (size_t i : s.modules[m - 1])
    if (s.functions[i].name == name) {
      *fn = reinterpret_cast<void *>(i + 1);
      return 0;
    }
  return fail(std::string("no kernel named ") + name + " in the module");
}

int cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  KILN_MOCK_LOCKED;
  void *mem = std::calloc(1, bytes ? bytes : 1);
  if (!mem)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *p = reinterpret_cast<CUdeviceptr>(mem);
  state().allocations[*p] = bytes;
  log("alloc " + std::to_string(bytes));
  return 0;
}
int cuMemFree_v2(CUdeviceptr p) {
  KILN_MOCK_LOCKED;
  State &s = state();
  if (!s.allocations.erase(p))
    return fail("free of " + hex(p) + ", which is not an allocation");
  std::free(reinterpret_cast<void *>(p));
  return 0;
}
int cuMemcpyHtoD_v2(CUdeviceptr to, const void *from, size_t bytes) {
  KILN_MOCK_LOCKED;
  if (!inAllocation(to, bytes))
    return fail("htod outside an allocation");
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  log("htod " + std::to_string(bytes));
  return 0;
}
int cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from, size_t bytes, void *stream) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream))
    return fail("htod on a dead stream");
  if (!inAllocation(to, bytes))
    return fail("htod outside an allocation");
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  log("htod-async " + std::to_string(bytes));
  return 0;
}
int cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes, void *stream) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream))
    return fail("dtoh on a dead stream");
  if (!inAllocation(from, bytes))
    return fail("dtoh outside an allocation");
  std::memcpy(to, reinterpret_cast<void *>(from), bytes);
  log("dtoh-async " + std::to_string(bytes));
  return 0;
}
int cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, void *stream) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream))
    return fail("dtod on a dead stream");
  if (!inAllocation(to, bytes) || !inAllocation(from, bytes))
    return fail("dtod outside an allocation");
  std::memmove(reinterpret_cast<void *>(to), reinterpret_cast<void *>(from), bytes);
  log("dtod " + std::to_string(bytes));
  return 0;
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  KILN_MOCK_LOCKED;
  State &s = state();
  uintptr_t index = reinterpret_cast<uintptr_t>(fn);
  if (index == 0 || index > s.functions.size())
    return fail("launch of an unknown function");
  const Function &f = s.functions[index - 1];
  if (!liveStream(stream))
    return fail("launch of " + f.name + " on a dead stream");
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535)
    return fail("launch of " + f.name + " with an invalid grid or block");
  if (static_cast<int>(bx * by * bz) > f.maxThreads)
    return fail("launch of " + f.name + " with " + std::to_string(bx * by * bz) +
                " threads, over its .maxntid " + std::to_string(f.maxThreads));
  if (extra || !params)
    return fail("launch of " + f.name + " without kernelParams");
  // Every parameter of Kiln's kernels is a buffer pointer (bare-pointer ABI).
  for (int i = 0; i < f.params; ++i) {
    CUdeviceptr p = *static_cast<CUdeviceptr *>(params[i]);
    if (!inAllocation(p, 1))
      return fail("launch of " + f.name + ": parameter " + std::to_string(i) + " (" +
                  hex(p) + ") is outside every allocation");
    if (p % 16 != 0) // the kernels assume it (vector accesses)
      return fail("launch of " + f.name + ": parameter " + std::to_string(i) + " (" +
                  hex(p) + ") is not 16-byte aligned");
  }
  ++s.launches;
  log(std::string(s.captureOf.count(reinterpret_cast<uintptr_t>(stream)) ? "capture " : "") +
      "launch " + f.name + " grid=" +
      std::to_string(gx) + "," + std::to_string(gy) + "," + std::to_string(gz) +
      " block=" + std::to_string(bx) + "," + std::to_string(by) + "," + std::to_string(bz) +
      " params=" + std::to_string(f.params) + " shared=" + std::to_string(shared) +
      " " + streamName(stream));
  return 0;
}

int cuStreamCreate(void **stream, unsigned) {
  KILN_MOCK_LOCKED;
  uintptr_t h = state().nextHandle++;
  state().streams.insert(h);
  *stream = reinterpret_cast<void *>(h);
  log("stream-create " + streamName(*stream));
  return 0;
}
int cuStreamDestroy_v2(void *stream) {
  KILN_MOCK_LOCKED;
  if (!state().streams.erase(reinterpret_cast<uintptr_t>(stream)))
    return fail("destroy of an unknown stream");
  return 0;
}
int cuStreamSynchronize(void *stream) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream))
    return fail("sync of a dead stream");
  log("sync " + streamName(stream));
  return 0;
}
int cuEventCreate(void **event, unsigned) {
  KILN_MOCK_LOCKED;
  uintptr_t h = state().nextHandle++;
  state().events.insert(h);
  *event = reinterpret_cast<void *>(h);
  return 0;
}
int cuEventRecord(void *event, void *stream) {
  KILN_MOCK_LOCKED;
  uintptr_t e = reinterpret_cast<uintptr_t>(event);
  if (!state().events.count(e) || !liveStream(stream))
    return fail("record of an unknown event or on a dead stream");
  State &s = state();
  s.recorded.insert(e);
  auto capture = s.captureOf.find(reinterpret_cast<uintptr_t>(stream));
  if (capture != s.captureOf.end())
    s.eventCapture[e] = capture->second;
  else
    s.eventCapture.erase(e);
  log("record E" + hex(e) + " " + streamName(stream));
  return 0;
}
int cuStreamWaitEvent(void *stream, void *event, unsigned) {
  KILN_MOCK_LOCKED;
  uintptr_t e = reinterpret_cast<uintptr_t>(event);
  if (!liveStream(stream))
    return fail("wait on a dead stream");
  State &s = state();
  if (!s.recorded.count(e))
    return fail("wait for event E" + hex(e) + ", which was never recorded");
  // Waiting for an event recorded in a capture joins that capture (as CUDA does).
  auto capture = s.eventCapture.find(e);
  if (capture != s.eventCapture.end() && s.captureOf.count(capture->second))
    s.captureOf[reinterpret_cast<uintptr_t>(stream)] = capture->second;
  log("wait " + streamName(stream) + " E" + hex(e));
  return 0;
}
int cuEventDestroy_v2(void *event) {
  KILN_MOCK_LOCKED;
  if (!state().events.erase(reinterpret_cast<uintptr_t>(event)))
    return fail("destroy of an unknown event");
  return 0;
}
int cuGetErrorString(int code, const char **text) {
  KILN_MOCK_LOCKED;
  *text = code == 0 ? "no error" : state().lastError.c_str();
  return 0;
}
int cuStreamBeginCapture_v2(void *stream, int) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream) || !stream)
    return fail("capture needs a live, non-legacy stream");
  uintptr_t s = reinterpret_cast<uintptr_t>(stream);
  state().captureOf[s] = s;
  log("capture-begin " + streamName(stream));
  return 0;
}
int cuStreamEndCapture(void *stream, void **graph) {
  KILN_MOCK_LOCKED;
  State &s = state();
  uintptr_t origin = reinterpret_cast<uintptr_t>(stream);
  auto it = s.captureOf.find(origin);
  if (it == s.captureOf.end() || it->second != origin)
    return fail("end of a capture that never began");
  for (auto j = s.captureOf.begin(); j != s.captureOf.end();)
    j = j->second == origin ? s.captureOf.erase(j) : std::next(j);
  *graph = reinterpret_cast<void *>(state().nextHandle++);
  log("capture-end");
  return 0;
}
int cuGraphInstantiateWithFlags(void **exec, void *, unsigned long long) {
  KILN_MOCK_LOCKED;
  *exec = reinterpret_cast<void *>(state().nextHandle++);
  return 0;
}
int cuGraphLaunch(void *, void *stream) {
  KILN_MOCK_LOCKED;
  if (!liveStream(stream))
    return fail("graph launch on a dead stream");
  log("graph-launch " + streamName(stream));
  return 0;
}
int cuGraphExecDestroy(void *) { return 0; }
int cuGraphDestroy(void *) { return 0; }

} // extern "C"
