//===- HostLibrary.cpp - Contractions on oneDNN for the host --------------===//
//
// oneDNN's C API (v2, Debian's libdnnl-dev) is called through function pointers
// resolved with dlsym, so that libmodel.so needs no oneDNN at link time and runs
// (on Kiln's kernels) where it is missing. Built without oneDNN's headers, every
// call falls back.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/HostLibrary.h"
#include "kiln/runtime/Half.h"

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
    if (name == "none") {
      d.error = "KILN_DNNL_LIBRARY=none: library calls run Kiln's kernels";
      return d;
    }
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

/// `p` rounded up to 64 bytes (buffers are allocated 64 bytes larger).
void *aligned64(char *p) {
  return reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t(63));
}

/// One call's primitive with its memory objects (handles set per run). A
/// convolution computes in the layouts oneDNN prefers (blocked channels): its input
/// is reordered in, its output (and residual) reordered out, through per-thread
/// scratch; constant weights are reordered once.
///
/// An f16 call runs as the f32 one on its operands widened (this oneDNN has no f16
/// convolution or matrix product without AVX512-FP16, and its f16 reorders are
/// scalar: 250 ms a ResNet-50 run), and its output rounded back to f16: what the
/// kernel computes, f16 operands accumulated in f32, with the epilogue in f32
/// too. Constant weights are widened once (into their reordered copy, or into a
/// copy of their own where the primitive reads them as they are).
struct Primitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t src = nullptr, weights = nullptr, bias = nullptr, dst = nullptr;
  // The caller's plain layouts, and the reorders between them and the primitive's.
  dnnl_memory_t userSrc = nullptr, userDst = nullptr, userWeights = nullptr;
  dnnl_primitive_t srcIn = nullptr, dstIn = nullptr, dstOut = nullptr, weightsIn = nullptr;
  size_t srcBytes = 0, dstBytes = 0, plainDstBytes = 0;
  std::unique_ptr<char[]> reordered;
  const void *reorderedFrom = nullptr;
  // f16 calls: each operand's elements, and the bias widened.
  size_t srcElements = 0, weightsElements = 0, dstElements = 0, biasElements = 0;
  std::unique_ptr<float[]> widenedBias;

  ~Primitive() {
    const Dnnl &d = dnnl();
    for (dnnl_memory_t m : {src, weights, bias, dst, userSrc, userDst, userWeights})
      if (m)
        d.dnnl_memory_destroy(m);
    for (dnnl_primitive_t p : {primitive, srcIn, dstIn, dstOut, weightsIn})
      if (p)
        d.dnnl_primitive_destroy(p);
  }
};

/// Owns the C objects made while a primitive is built.
struct Building {
  dnnl_post_ops_t postOps = nullptr;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  ~Building() {
    const Dnnl &d = dnnl();
    if (pd)
      d.dnnl_primitive_desc_destroy(pd);
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

/// A reorder from `from` to `to` (both made as memory objects in `fromMem`/`toMem`
/// when not null).
bool makeReorder(const dnnl_memory_desc_t &from, const dnnl_memory_desc_t &to,
                 dnnl_primitive_t &out) {
  const Dnnl &d = dnnl();
  dnnl_primitive_desc_t pd = nullptr;
  if (d.dnnl_reorder_primitive_desc_create(&pd, &from, d.engine, &to, d.engine, nullptr) !=
      dnnl_success)
    return false;
  bool ok = d.dnnl_primitive_create(&out, pd) == dnnl_success;
  d.dnnl_primitive_desc_destroy(pd);
  return ok;
}

/// Builds `p` for `call`; false when oneDNN cannot (the call falls back).
bool build(const LibraryCall &call, Primitive &p) {
  const Dnnl &d = dnnl();
  const int64_t *s = call.shape;
  dnnl_memory_desc_t src, weights, userWeights, bias, dst, userSrc, userDst;
  union {
    dnnl_convolution_desc_t conv;
    dnnl_matmul_desc_t matmul;
  } op;
  if (call.kind == LibraryCall::Conv) {
    int64_t n = s[0], c = s[1], h = s[2], w = s[3], f = s[4], kh = s[5], kw = s[6], oh = s[7],
            ow = s[8], g = s[9];
    dnnl_dims_t srcDims = {n, c, h, w}, dstDims = {n, f, oh, ow}, biasDims = {f};
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&userSrc, 4, srcDims, dnnl_f32, dnnl_nchw));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&userDst, 4, dstDims, dnnl_f32, dnnl_nchw));
    KILN_DNNL_TRY(
        d.dnnl_memory_desc_init_by_tag(&src, 4, srcDims, dnnl_f32, dnnl_format_tag_any));
    KILN_DNNL_TRY(
        d.dnnl_memory_desc_init_by_tag(&dst, 4, dstDims, dnnl_f32, dnnl_format_tag_any));
    KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&bias, 1, biasDims, dnnl_f32, dnnl_x));
    dnnl_format_tag_t any = dnnl_format_tag_any;
    if (g == 1) {
      dnnl_dims_t wDims = {f, c, kh, kw};
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(&userWeights, 4, wDims, dnnl_f32, dnnl_oihw));
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(
          &weights, 4, wDims, dnnl_f32, call.constantWeights ? any : dnnl_oihw));
    } else {
      dnnl_dims_t wDims = {g, f / g, c / g, kh, kw};
      KILN_DNNL_TRY(
          d.dnnl_memory_desc_init_by_tag(&userWeights, 5, wDims, dnnl_f32, dnnl_goihw));
      KILN_DNNL_TRY(d.dnnl_memory_desc_init_by_tag(
          &weights, 5, wDims, dnnl_f32, call.constantWeights ? any : dnnl_goihw));
    }
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
    userSrc = src;
    userDst = dst;
    userWeights = weights;
    KILN_DNNL_TRY(d.dnnl_matmul_desc_init(&op.matmul, &src, &weights,
                                          call.hasBias ? &bias : nullptr, &dst));
  }
  // The epilogue: out = activation(scale * acc + bias + residual); the residual is put in
  // the output first and summed into it.
  Building b;
  KILN_DNNL_TRY(d.dnnl_post_ops_create(&b.postOps));
  if (call.scale != 1.0f)
    KILN_DNNL_TRY(
        d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_linear, call.scale, 0.f));
  if (call.hasResidual)
    KILN_DNNL_TRY(d.dnnl_post_ops_append_sum(b.postOps, 1.0f));
  if (call.activation == LibraryCall::Relu)
    KILN_DNNL_TRY(d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_relu, 0.f, 0.f));
  else if (call.activation == LibraryCall::Clip)
    KILN_DNNL_TRY(d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_clip,
                                                 call.alpha, call.beta));
  else if (call.activation == LibraryCall::GeluErf)
    KILN_DNNL_TRY(
        d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_gelu_erf, 0.f, 0.f));
  else if (call.activation == LibraryCall::GeluTanh)
    KILN_DNNL_TRY(
        d.dnnl_post_ops_append_eltwise(b.postOps, 1.0f, dnnl_eltwise_gelu_tanh, 0.f, 0.f));
  KILN_DNNL_TRY(d.dnnl_primitive_attr_create(&b.attr));
  KILN_DNNL_TRY(d.dnnl_primitive_attr_set_post_ops(b.attr, b.postOps));
  KILN_DNNL_TRY(d.dnnl_primitive_desc_create(&b.pd, &op, b.attr, d.engine, nullptr));
  const dnnl_memory_desc_t *chosenSrc = d.dnnl_primitive_desc_query_md(b.pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *chosenW = d.dnnl_primitive_desc_query_md(b.pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *chosenDst = d.dnnl_primitive_desc_query_md(b.pd, dnnl_query_dst_md, 0);
  if (!chosenSrc || !chosenW || !chosenDst)
    return false;
  KILN_DNNL_TRY(d.dnnl_primitive_create(&p.primitive, b.pd));
  KILN_DNNL_TRY(memoryOf(*chosenSrc, p.src));
  KILN_DNNL_TRY(memoryOf(*chosenW, p.weights));
  KILN_DNNL_TRY(memoryOf(bias, p.bias));
  KILN_DNNL_TRY(memoryOf(*chosenDst, p.dst));
  p.plainDstBytes = d.dnnl_memory_desc_get_size(&userDst);
  if (!d.dnnl_memory_desc_equal(chosenSrc, &userSrc)) {
    KILN_DNNL_TRY(memoryOf(userSrc, p.userSrc));
    if (!makeReorder(userSrc, *chosenSrc, p.srcIn))
      return false;
    p.srcBytes = d.dnnl_memory_desc_get_size(chosenSrc);
  }
  if (!d.dnnl_memory_desc_equal(chosenDst, &userDst)) {
    KILN_DNNL_TRY(memoryOf(userDst, p.userDst));
    if (!makeReorder(*chosenDst, userDst, p.dstOut) ||
        (call.hasResidual && !makeReorder(userDst, *chosenDst, p.dstIn)))
      return false;
    p.dstBytes = d.dnnl_memory_desc_get_size(chosenDst);
  }
  if (!d.dnnl_memory_desc_equal(chosenW, &userWeights)) {
    KILN_DNNL_TRY(memoryOf(userWeights, p.userWeights));
    if (!makeReorder(userWeights, *chosenW, p.weightsIn))
      return false;
    p.reordered.reset(new (std::nothrow) char[d.dnnl_memory_desc_get_size(chosenW) + 64]);
    if (!p.reordered)
      return false;
  }
  if (call.dtype == LibraryCall::F16) {
    p.srcElements = d.dnnl_memory_desc_get_size(&userSrc) / sizeof(float);
    p.weightsElements = d.dnnl_memory_desc_get_size(&userWeights) / sizeof(float);
    p.dstElements = d.dnnl_memory_desc_get_size(&userDst) / sizeof(float);
    p.biasElements = d.dnnl_memory_desc_get_size(&bias) / sizeof(float);
    if (call.constantWeights && !p.weightsIn) {
      p.reordered.reset(new (std::nothrow) char[p.weightsElements * sizeof(float) + 64]);
      if (!p.reordered)
        return false;
    }
    if (call.hasBias) {
      p.widenedBias.reset(new (std::nothrow) float[p.biasElements]);
      if (!p.widenedBias)
        return false;
    }
  } else if (call.inputType != LibraryCall::F32 || call.outputType != LibraryCall::F32) {
    return false;
  }
  return true;
}

/// Scratch of this thread (a stream's calls run one at a time on its thread).
/// Which: 0 the input and 1 the output in oneDNN's layout; f16 calls' widened 2
/// weights, 3 input and 4 output (holding the residual first).
void *threadScratch(int which, size_t bytes) {
  thread_local std::unique_ptr<char[]> buffers[5];
  thread_local size_t capacity[5] = {};
  if (capacity[which] < bytes) {
    buffers[which].reset(new (std::nothrow) char[bytes + 64]);
    capacity[which] = buffers[which] ? bytes : 0;
    if (!buffers[which])
      return nullptr;
  }
  return aligned64(buffers[which].get());
}


} // namespace

struct HostLibrary::Slot {
  Primitive primitive;
  bool tried = false, unsupported = false;
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

Status HostLibrary::run(int index, const LibraryCall &call, const LibraryBuffers &given,
                        bool &ran) {
  ran = false;
  if (index < 0 || index >= static_cast<int>(slots.size()))
    return Status::error("library call " + std::to_string(index) + " is not in the plan");
  Slot &slot = *slots[index];
  const Dnnl &d = dnnl();
  if (!slot.tried && loaded()) {
    slot.tried = true;
    slot.unsupported =
        d.dnnl_stream_create(&slot.stream, d.engine, dnnl_stream_default_flags) != dnnl_success ||
        !build(call, slot.primitive);
    if (slot.unsupported) {
      slot.primitive.~Primitive();
      new (&slot.primitive) Primitive();
    }
  }
  if (!slot.tried || slot.unsupported) {
    ++slot.fallbackRuns;
    return Status::ok();
  }
  Primitive &p = slot.primitive;
  auto fail = [&](const char *what) {
    return Status::error(std::string("oneDNN: ") + what + " failed in library call " +
                         std::to_string(index));
  };
  auto bind = [&](dnnl_memory_t m, const void *ptr) {
    return d.dnnl_memory_set_data_handle(m, const_cast<void *>(ptr)) == dnnl_success;
  };
  auto reorder = [&](dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    return d.dnnl_primitive_execute(r, slot.stream, 2, args) == dnnl_success;
  };
  auto outOfMemory = [&] {
    return Status::error("out of memory for library call " + std::to_string(index),
                         KILN_ERROR_MEMORY);
  };
  // f16: the operands widened to f32 (constant weights below, once), the output
  // computed in f32 scratch (holding the residual first) and rounded at the end.
  LibraryBuffers buffers = given;
  bool half = call.dtype == LibraryCall::F16;
  float *wide = nullptr;
  auto widened = [&](int which, const void *from, size_t n) {
    auto *to = static_cast<float *>(threadScratch(which, n * sizeof(float)));
    if (to)
      widenHalves(static_cast<const uint16_t *>(from), to, n);
    return to;
  };
  if (half) {
    wide = static_cast<float *>(threadScratch(4, p.dstElements * sizeof(float)));
    if (!wide)
      return outOfMemory();
    if (call.inputType == LibraryCall::F32) { // an f32 input, read as f16
      auto *rounded = static_cast<float *>(threadScratch(3, p.srcElements * sizeof(float)));
      if (!rounded)
        return outOfMemory();
      roundThroughHalves(static_cast<const float *>(given.input), rounded, p.srcElements);
      buffers.input = rounded;
    } else if (!(buffers.input = widened(3, given.input, p.srcElements))) {
      return outOfMemory();
    }
    if (call.hasResidual)
      widenHalves(static_cast<const uint16_t *>(given.residual), wide, p.dstElements);
    buffers.output = wide;
    buffers.residual = call.hasResidual ? wide : nullptr;
    if (call.hasBias) {
      widenHalves(static_cast<const uint16_t *>(given.bias), p.widenedBias.get(),
                  p.biasElements);
      buffers.bias = p.widenedBias.get();
    }
  }
  if (p.weightsIn || (half && call.constantWeights)) {
    // Constant weights: reordered (f16: widened first, or only widened where the
    // primitive reads them as they are) on the first run, and again if the
    // model's weights moved, which they do not while it lives.
    void *target = aligned64(p.reordered.get());
    if (p.reorderedFrom != given.weights) {
      if (!p.weightsIn) {
        widenHalves(static_cast<const uint16_t *>(given.weights), static_cast<float *>(target),
                    p.weightsElements);
      } else {
        const void *from = given.weights;
        if (half && !(from = widened(2, given.weights, p.weightsElements)))
          return outOfMemory();
        if (!bind(p.userWeights, from) || !bind(p.weights, target) ||
            !reorder(p.weightsIn, p.userWeights, p.weights))
          return fail("reordering the weights");
      }
      p.reorderedFrom = given.weights;
    }
    if (!p.weightsIn && !bind(p.weights, target))
      return fail("binding the weights");
  } else {
    const void *weights = given.weights;
    if (half && !(weights = widened(2, given.weights, p.weightsElements)))
      return outOfMemory();
    if (!bind(p.weights, weights))
      return fail("binding the weights");
  }
  // The input, in the primitive's layout.
  if (p.srcIn) {
    void *blocked = threadScratch(0, p.srcBytes);
    if (!blocked)
      return outOfMemory();
    if (!bind(p.userSrc, buffers.input) || !bind(p.src, blocked) ||
        !reorder(p.srcIn, p.userSrc, p.src))
      return fail("reordering the input");
  } else if (!bind(p.src, buffers.input)) {
    return fail("binding the input");
  }
  // The output (holding the residual first, when there is one).
  void *dst = buffers.output;
  if (p.dstOut) {
    dst = threadScratch(1, p.dstBytes);
    if (!dst)
      return outOfMemory();
    if (!bind(p.dst, dst) || !bind(p.userDst, buffers.output))
      return fail("binding the output");
    if (call.hasResidual &&
        (!bind(p.userDst, buffers.residual) || !reorder(p.dstIn, p.userDst, p.dst) ||
         !bind(p.userDst, buffers.output)))
      return fail("reordering the residual");
  } else {
    if (!bind(p.dst, dst))
      return fail("binding the output");
    if (call.hasResidual && buffers.residual != buffers.output)
      std::memmove(buffers.output, buffers.residual, p.plainDstBytes);
  }
  dnnl_exec_arg_t args[4];
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, p.src};
  args[n++] = {DNNL_ARG_WEIGHTS, p.weights};
  args[n++] = {DNNL_ARG_DST, p.dst};
  if (call.hasBias) {
    if (!bind(p.bias, buffers.bias))
      return fail("binding the bias");
    args[n++] = {DNNL_ARG_BIAS, p.bias};
  }
  if (d.dnnl_primitive_execute(p.primitive, slot.stream, n, args) != dnnl_success)
    return fail("the primitive");
  if (p.dstOut && !reorder(p.dstOut, p.dst, p.userDst))
    return fail("reordering the output");
  if (half && call.outputType == LibraryCall::F32)
    roundThroughHalves(wide, static_cast<float *>(given.output), p.dstElements);
  else if (half)
    narrowToHalves(wide, static_cast<uint16_t *>(given.output), p.dstElements);
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
