//===- HostLibrary.cpp - Contractions on oneDNN for the host --------------===//
//
// oneDNN's C API (v2, Debian's libdnnl-dev) is called through function pointers
// resolved with dlsym, so that libmodel.so needs no oneDNN at link time and runs
// (on Kiln's kernels) where it is missing. Built without oneDNN's headers, every
// call falls back.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/HostLibrary.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if KILN_HAVE_DNNL
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#endif

namespace kiln::rt {

#if KILN_HAVE_DNNL

namespace {

#define KILN_DNNL_FUNCTIONS(X)                                                                \
  X(dnnl_engine_create)                                                                       \
  X(dnnl_stream_create)                                                                       \
  X(dnnl_stream_destroy)                                                                      \
  X(dnnl_memory_desc_init_by_tag)                                                             \
  X(dnnl_memory_desc_init_by_strides)                                                         \
  X(dnnl_memory_desc_equal)                                                                   \
  X(dnnl_memory_desc_get_size)                                                                \
  X(dnnl_memory_create)                                                                       \
  X(dnnl_memory_set_data_handle)                                                              \
  X(dnnl_memory_destroy)                                                                      \
  X(dnnl_dilated_convolution_forward_desc_init)                                               \
  X(dnnl_matmul_desc_init)                                                                    \
  X(dnnl_post_ops_create)                                                                     \
  X(dnnl_post_ops_destroy)                                                                    \
  X(dnnl_post_ops_append_eltwise)                                                             \
  X(dnnl_post_ops_append_binary)                                                              \
  X(dnnl_post_ops_append_sum)                                                                 \
  X(dnnl_primitive_attr_create)                                                               \
  X(dnnl_primitive_attr_destroy)                                                              \
  X(dnnl_primitive_attr_set_post_ops)                                                         \
  X(dnnl_primitive_desc_create)                                                               \
  X(dnnl_primitive_desc_destroy)                                                              \
  X(dnnl_primitive_desc_query_md)                                                             \
  X(dnnl_primitive_create)                                                                    \
  X(dnnl_primitive_destroy)                                                                   \
  X(dnnl_primitive_execute)                                                                   \
  X(dnnl_reorder_primitive_desc_create)

/// The loaded library: its functions and one CPU engine, for the whole process.
struct Dnnl {
#define KILN_DNNL_POINTER(name) decltype(&::name) name = nullptr;
  KILN_DNNL_FUNCTIONS(KILN_DNNL_POINTER)
#undef KILN_DNNL_POINTER
  dnnl_engine_t engine = nullptr;
  std::string error; // why it is not available
};

const Dnnl &dnnl() {
  static const Dnnl loaded = [] {
    Dnnl d;
    const char *path = std::getenv("KILN_DNNL_LIBRARY");
    std::string name = path && *path ? path : "libdnnl.so.2";
    // oneDNN's OpenMP threads: KILN_NUM_THREADS where OMP_NUM_THREADS is unset
    // (read when libgomp starts, so only if this process has not started it).
    const char *threads = std::getenv("KILN_NUM_THREADS");
    if (threads && *threads && !std::getenv("OMP_NUM_THREADS"))
      setenv("OMP_NUM_THREADS", threads, 0);
    void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *e = dlerror();
      d.error = "cannot load oneDNN (" + name + "): " + (e ? e : "not found");
      return d;
    }
#define KILN_DNNL_RESOLVE(fn)                                                                 \
  d.fn = reinterpret_cast<decltype(&::fn)>(dlsym(handle, #fn));                               \
  if (!d.fn) {                                                                                \
    d.error = name + " has no " #fn " (oneDNN 2.x is needed)";                                \
    return d;                                                                                 \
  }
    KILN_DNNL_FUNCTIONS(KILN_DNNL_RESOLVE)
#undef KILN_DNNL_RESOLVE
    if (d.dnnl_engine_create(&d.engine, dnnl_cpu, 0) != dnnl_success) {
      d.engine = nullptr;
      d.error = "oneDNN has no CPU engine";
    }
    return d;
  }();
  return loaded;
}

bool loaded() { return dnnl().engine != nullptr; }

/// One primitive with its memory objects (handles set per run). Variant 1 of a
/// call with a residual is for a residual that is the output itself (in place:
/// oneDNN's sum post-op), variant 0 for a residual elsewhere (a binary add).
struct Primitive {
  bool tried = false;
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t src = nullptr, weights = nullptr, bias = nullptr, dst = nullptr,
                residual = nullptr;
  // Weights in the primitive's own layout, reordered once from `reorderedFrom`.
  dnnl_memory_t userWeights = nullptr;
  dnnl_primitive_t reorder = nullptr;
  std::unique_ptr<char[]> reordered;
  const void *reorderedFrom = nullptr;

  ~Primitive() {
    const Dnnl &d = dnnl();
    for (dnnl_memory_t m : {src, weights, bias, dst, residual, userWeights})
      if (m)
        d.dnnl_memory_destroy(m);
    for (dnnl_primitive_t p : {primitive, reorder})
      if (p)
        d.dnnl_primitive_destroy(p);
  }
};

/// Owns the C objects made while a primitive is built.
struct Building {
  dnnl_post_ops_t postOps = nullptr;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_desc_t pd = nullptr, reorderPd = nullptr;
  ~Building() {
    const Dnnl &d = dnnl();
    if (pd)
      d.dnnl_primitive_desc_destroy(pd);
    if (reorderPd)
      d.dnnl_primitive_desc_destroy(reorderPd);
    if (attr)
      d.dnnl_primitive_attr_destroy(attr);
    if (postOps)
      d.dnnl_post_ops_destroy(postOps);
  }
};

#define KILN_DNNL_TRY(x)                                                                      \
  do {                                                                                        \
    if ((x) != dnnl_success)                                                                  \
      return false;                                                                           \
  } while (0)

dnnl_status_t memoryOf(const dnnl_memory_desc_t &md, dnnl_memory_t &out) {
  return dnnl().dnnl_memory_create(&out, &md, dnnl().engine, DNNL_MEMORY_NONE);
}

/// Builds `p` for `call`; false when oneDNN cannot (the call falls back).
bool build(const LibraryCall &call, bool residualInPlace, bool constantWeights, Primitive &p) {
  const Dnnl &d = dnnl();
  const int64_t *s = call.shape;
  dnnl_memory_desc_t src, weights, userWeights, bias, dst;
  union {
    dnnl_convolution_desc_t conv;
    dnnl_matmul_desc_t matmul;
  } op;
  bool reorderWeights = false;
  if (call.kind == LibraryCall::Conv) {
    int64_t n = s[0], c = s[1], h = s[2], w = s[3], f = s[4], kh = s[5], kw = s[6], oh = s[7],
            ow = s[8], g = s[9];
    dnnl_dims_t srcDims = {n, c, h, w}, dstDims = {n, f, oh, ow}, biasDims = {f};
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&src, 4, srcDims, dnnl_f32, dnnl_nchw));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&dst, 4, dstDims, dnnl_f32, dnnl_nchw));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&bias, 1, biasDims, dnnl_f32, dnnl_x));
    if (g == 1) {
      dnnl_dims_t wDims = {f, c, kh, kw};
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&userWeights, 4, wDims, dnnl_f32, dnnl_oihw));
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(
          &weights, 4, wDims, dnnl_f32, constantWeights ? dnnl_format_tag_any : dnnl_oihw));
    } else {
      dnnl_dims_t wDims = {g, f / g, c / g, kh, kw};
      KILN_DNNL_TRY(
          d.dnnl_memory_desc_init_by_tag(&userWeights, 5, wDims, dnnl_f32, dnnl_goihw));
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(
          &weights, 5, wDims, dnnl_f32, constantWeights ? dnnl_format_tag_any : dnnl_goihw));
    }
    reorderWeights = constantWeights;
    dnnl_dims_t strides = {s[10], s[11]}, dilates = {s[12] - 1, s[13] - 1},
                padL = {s[14], s[15]}, padR = {s[16], s[17]};
    KILN_DNNL_TRY(d.dnnl_dilated_convolution_forward_desc_init(
        &op.conv, dnnl_forward_inference, dnnl_convolution_direct, &src, &weights,
        call.hasBias ? &bias : nullptr, &dst, strides, dilates, padL, padR));
  } else {
    int64_t b = s[0], m = s[1], n = s[2], k = s[3];
    bool transA = s[4], transB = s[5];
    dnnl_dims_t aDims = {s[6] ? b : 1, m, k}, aStrides = {m * k, transA ? 1 : k, transA ? m : 1};
    dnnl_dims_t bDims = {s[7] ? b : 1, k, n}, bStrides = {k * n, transB ? 1 : n, transB ? k : 1};
    dnnl_dims_t cDims = {b, m, n}, cStrides = {m * n, n, 1};
    dnnl_dims_t biasDims = {1, 1, n}, biasStrides = {n, n, 1};
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_strides(&src, 3, aDims, dnnl_f32, aStrides));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_strides(&weights, 3, bDims, dnnl_f32, bStrides));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_strides(&dst, 3, cDims, dnnl_f32, cStrides));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_strides(&bias, 3, biasDims, dnnl_f32, biasStrides));
    userWeights = weights;
    KILN_DNNL_TRY(d.dnnl_matmul_desc_init(&op.matmul, &src, &weights,
                                          call.hasBias ? &bias : nullptr, &dst));
  }
  // The epilogue: out = activation(acc + bias + residual).
  Building b;
  KILN_DNNL_TRY(d.dnnl_post_ops_create(&b.postOps));
  if (call.hasResidual) {
    if (residualInPlace)
      KILN_DNNL_TRY(d.dnnl_post_ops_append_sum(b.postOps, 1.0f));
    else
      KILN_DNNL_TRY(d.dnnl_post_ops_append_binary(b.postOps, dnnl_binary_add, &dst));
  }
  if (call.activation == LibraryCall::Relu)
    KILN_DNNL_TRY(d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_relu, 0.f, 0.f));
  else if (call.activation == LibraryCall::Clip)
    KILN_DNNL_TRY(d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_clip,
                                                 call.alpha, call.beta));
  KILN_DNNL_TRY(d.dnnl_primitive_attr_create(&b.attr));
  KILN_DNNL_TRY(d.dnnl_primitive_attr_set_post_ops(b.attr, b.postOps));
  KILN_DNNL_TRY(d.dnnl_primitive_desc_create(&b.pd, &op, b.attr, d.engine, nullptr));
  const dnnl_memory_desc_t *chosen = d.dnnl_primitive_desc_query_md(b.pd, dnnl_query_weights_md, 0);
  if (!chosen)
    return false;
  KILN_DNNL_TRY(d.dnnl_primitive_create(&p.primitive, b.pd));
  KILN_DNNL_TRY(memoryOf(src, p.src));
  KILN_DNNL_TRY(memoryOf(*chosen, p.weights));
  KILN_DNNL_TRY(memoryOf(bias, p.bias));
  KILN_DNNL_TRY(memoryOf(dst, p.dst));
  KILN_DNNL_TRY(memoryOf(dst, p.residual));
  if (reorderWeights && !d.dnnl_memory_desc_equal(chosen, &userWeights)) {
    KILN_DNNL_TRY(memoryOf(userWeights, p.userWeights));
    KILN_DNNL_TRY(d.dnnl_reorder_primitive_desc_create(&b.reorderPd, &userWeights, d.engine,
                                                       chosen, d.engine, nullptr));
    KILN_DNNL_TRY(d.dnnl_primitive_create(&p.reorder, b.reorderPd));
    p.reordered.reset(new (std::nothrow) char[d.dnnl_memory_desc_get_size(chosen) + 64]);
    if (!p.reordered)
      return false;
  }
  return true;
}

void *aligned64(char *p) {
  return reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t(63));
}

} // namespace

struct HostLibrary::Slot {
  Primitive variants[2];
  bool unsupported = false;
  dnnl_stream_t stream = nullptr;
  int64_t libraryRuns = 0, fallbackRuns = 0;
  ~Slot() {
    if (stream)
      dnnl().dnnl_stream_destroy(stream);
  }
};

bool hostLibraryAvailable(std::string *why) {
  if (!loaded() && why)
    *why = dnnl().error;
  return loaded();
}

Status HostLibrary::run(int index, const LibraryCall &call, const LibraryBuffers &buffers,
                        bool &ran) {
  ran = false;
  if (index < 0 || index >= static_cast<int>(slots.size()))
    return Status::error("library call " + std::to_string(index) + " is not in the plan");
  Slot &slot = *slots[index];
  if (slot.unsupported || !loaded()) {
    ++slot.fallbackRuns;
    return Status::ok();
  }
  const Dnnl &d = dnnl();
  bool inPlace = call.hasResidual && buffers.residual == buffers.output;
  Primitive &p = slot.variants[inPlace ? 1 : 0];
  if (!p.tried) {
    p.tried = true;
    // Weights reordered once are the conv's constant weights (a weight buffer never
    // changes while the model lives); a matmul's operands are used as they are.
    if ((!slot.stream && d.dnnl_stream_create(&slot.stream, d.engine, dnnl_stream_default_flags) !=
                             dnnl_success) ||
        !build(call, inPlace, call.constantWeights, p)) {
      slot.variants[inPlace ? 1 : 0].~Primitive();
      new (&slot.variants[inPlace ? 1 : 0]) Primitive();
      slot.unsupported = true;
      ++slot.fallbackRuns;
      return Status::ok();
    }
  }
  auto fail = [&](const char *what) {
    return Status::error(std::string("oneDNN: ") + what + " failed in library call " +
                         std::to_string(index));
  };
  void *weights = const_cast<void *>(buffers.weights);
  if (p.reorder) {
    if (p.reorderedFrom != buffers.weights) {
      void *target = aligned64(p.reordered.get());
      dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, p.userWeights}, {DNNL_ARG_TO, p.weights}};
      if (d.dnnl_memory_set_data_handle(p.userWeights, weights) != dnnl_success ||
          d.dnnl_memory_set_data_handle(p.weights, target) != dnnl_success ||
          d.dnnl_primitive_execute(p.reorder, slot.stream, 2, args) != dnnl_success)
        return fail("reordering the weights");
      p.reorderedFrom = buffers.weights;
    }
  } else if (d.dnnl_memory_set_data_handle(p.weights, weights) != dnnl_success) {
    return fail("binding the weights");
  }
  dnnl_exec_arg_t args[5];
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, p.src};
  args[n++] = {DNNL_ARG_WEIGHTS, p.weights};
  args[n++] = {DNNL_ARG_DST, p.dst};
  if (d.dnnl_memory_set_data_handle(p.src, const_cast<void *>(buffers.input)) != dnnl_success ||
      d.dnnl_memory_set_data_handle(p.dst, buffers.output) != dnnl_success)
    return fail("binding the buffers");
  if (call.hasBias) {
    if (d.dnnl_memory_set_data_handle(p.bias, const_cast<void *>(buffers.bias)) != dnnl_success)
      return fail("binding the bias");
    args[n++] = {DNNL_ARG_BIAS, p.bias};
  }
  if (call.hasResidual && !inPlace) {
    if (d.dnnl_memory_set_data_handle(p.residual, const_cast<void *>(buffers.residual)) !=
        dnnl_success)
      return fail("binding the residual");
    args[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p.residual};
  }
  if (d.dnnl_primitive_execute(p.primitive, slot.stream, n, args) != dnnl_success)
    return fail("the primitive");
  ++slot.libraryRuns;
  ran = true;
  return Status::ok();
}

#else // !KILN_HAVE_DNNL

struct HostLibrary::Slot {
  int64_t libraryRuns = 0, fallbackRuns = 0;
};

bool hostLibraryAvailable(std::string *why) {
  if (why)
    *why = "this runtime was built without oneDNN's headers (libdnnl-dev)";
  return false;
}

Status HostLibrary::run(int index, const LibraryCall &, const LibraryBuffers &, bool &ran) {
  ran = false;
  if (index < 0 || index >= static_cast<int>(slots.size()))
    return Status::error("library call " + std::to_string(index) + " is not in the plan");
  ++slots[index]->fallbackRuns;
  return Status::ok();
}

#endif // KILN_HAVE_DNNL

HostLibrary::HostLibrary(int numCalls) {
  for (int i = 0; i < numCalls; ++i)
    slots.push_back(std::make_unique<Slot>());
}

HostLibrary::~HostLibrary() = default;

int64_t HostLibrary::libraryRuns() const {
  int64_t n = 0;
  for (const auto &s : slots)
    n += s->libraryRuns;
  return n;
}

int64_t HostLibrary::fallbackRuns() const {
  int64_t n = 0;
  for (const auto &s : slots)
    n += s->fallbackRuns;
  return n;
}

} // namespace kiln::rt
