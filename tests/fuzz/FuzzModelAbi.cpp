//===- FuzzModelAbi.cpp - libFuzzer target: a model's C ABI ---------------===//
//
// A compiled model (libmodel.so and its weights, KILN_FUZZ_MODEL_DIR) driven
// through its C ABI by a fuzzed sequence of calls: bind inputs and outputs by
// (fuzzed) name or run by index, each tensor with a fuzzed dtype, rank and shape
// (data buffers always as large as the descriptor claims, up to 1 MiB), execute.
// Besides "no crash, no sanitizer report", the runtime's promises are checked on
// every call: an input buffer is never written; a failed run leaves the outputs'
// bytes untouched; a successful one writes every byte of them.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Artifact.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Abi : kiln::rt::ModelAbi {
  kiln_model *model = nullptr;
  std::vector<kiln_tensor_info> inputs, outputs;
};

void die(const char *what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

Abi &abi() {
  static Abi *a = [] {
    const char *dir = std::getenv("KILN_FUZZ_MODEL_DIR");
    std::string base = dir ? dir : KILN_FUZZ_DEFAULT_MODEL_DIR;
    // The runtime's loader, as every tool opens an artifact; kept for the process.
    static kiln::rt::Artifact artifact;
    if (kiln::rt::Status s = artifact.open(base); !s)
      die(s.message().c_str());
    auto *a = new Abi;
    static_cast<kiln::rt::ModelAbi &>(*a) = artifact.abi();
    a->model = artifact.model();
    a->inputs = artifact.inputs();
    a->outputs = artifact.outputs();
    return a;
  }();
  return *a;
}

/// Reads the fuzz input as a stream of small numbers.
struct Reader {
  const uint8_t *p, *end;
  uint8_t byte() { return p < end ? *p++ : 0; }
  bool done() const { return p >= end; }
};

constexpr size_t kMaxBytes = 1 << 20;
constexpr uint8_t kUnwritten = 0xA5;

/// A tensor described by the fuzz input: mostly the model's own description with
/// one field changed, sometimes anything.
struct FuzzTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  kiln_tensor tensor{};
  bool oversize = false;

  void make(Reader &r, const kiln_tensor_info &like) {
    uint8_t mode = r.byte();
    int32_t dtype = like.dtype, rank = like.rank;
    shape.assign(like.shape, like.shape + like.rank);
    switch (mode % 6) {
    case 1: dtype = r.byte() % 20; break;
    case 2: rank = r.byte() % 9; shape.resize(rank, 1); break;
    case 3:
      if (!shape.empty())
        shape[r.byte() % shape.size()] = static_cast<int8_t>(r.byte());
      break;
    case 4: // a huge dimension: the ABI must refuse it without touching the data
      if (!shape.empty())
        shape[r.byte() % shape.size()] = int64_t(1) << (40 + r.byte() % 23);
      break;
    default: break;
    }
    size_t elem = 8, count = 1;
    for (int64_t d : shape) {
      if (d < 0 || (d > 0 && count > kMaxBytes / static_cast<size_t>(d))) {
        oversize = true;
        break;
      }
      count *= static_cast<size_t>(d);
    }
    oversize = oversize || count * elem > kMaxBytes;
    // A buffer as large as the descriptor claims (8 bytes an element, the widest
    // dtype); a descriptor too large for that gets a small buffer and must be refused.
    data.assign(oversize ? 64 : std::max<size_t>(count * elem, 1), kUnwritten);
    for (uint8_t &b : data)
      if (r.done())
        break;
      else
        b = r.byte();
    tensor = {dtype, rank, shape.data(), data.data()};
    if (r.byte() % 16 == 0)
      tensor.shape = nullptr;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Abi &a = abi();
  Reader r{data, data + size};
  kiln_context *context = a.kiln_context_create(a.model);
  if (!context)
    die("no context");
  std::vector<FuzzTensor> ins(a.inputs.size()), outs(a.outputs.size());
  std::vector<std::vector<uint8_t>> inCopies(ins.size());
  for (size_t i = 0; i < ins.size(); ++i) {
    ins[i].make(r, a.inputs[i]);
    inCopies[i] = ins[i].data;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i].make(r, a.outputs[i]);
    std::memset(outs[i].data.data(), kUnwritten, outs[i].data.size());
  }
  kiln_status status;
  if (r.byte() % 2 == 0) {
    std::vector<kiln_tensor> in, out;
    for (FuzzTensor &t : ins)
      in.push_back(t.tensor);
    for (FuzzTensor &t : outs)
      out.push_back(t.tensor);
    int32_t nin = static_cast<int32_t>(in.size()), nout = static_cast<int32_t>(out.size());
    if (r.byte() % 8 == 0)
      nin += static_cast<int8_t>(r.byte()) % 3;
    if (r.byte() % 8 == 0)
      nout += static_cast<int8_t>(r.byte()) % 3;
    status = a.kiln_context_run(context, nin > 0 && nin <= static_cast<int32_t>(in.size()) ? in.data() : nullptr,
                                nin, out.data(), std::min<int32_t>(nout, out.size()));
  } else {
    for (size_t i = 0; i < ins.size(); ++i) {
      std::string name = a.inputs[i].name;
      if (r.byte() % 8 == 0)
        name += static_cast<char>(r.byte());
      a.kiln_context_set_input(context, name.c_str(), &ins[i].tensor);
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      if (r.byte() % 16 == 0)
        continue; // left unbound
      a.kiln_context_set_output(context, a.outputs[i].name, &outs[i].tensor);
    }
    status = a.kiln_context_execute(context);
  }
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i].data != inCopies[i])
      die("an input buffer was written");
  for (FuzzTensor &t : outs) {
    bool touched = false, allWritten = true;
    for (uint8_t b : t.data) {
      touched |= b != kUnwritten;
      allWritten &= b != kUnwritten;
    }
    if (status != KILN_OK && touched)
      die("a failed run wrote an output");
    (void)allWritten; // see below: success is checked on the model's own sizes
  }
  if (status == KILN_OK) {
    // Every byte of every output the model defines was written (an output value of
    // exactly 0xA5A5... is possible but the tiny model's outputs are floats from a
    // softmax, never that pattern).
    for (size_t i = 0; i < outs.size(); ++i) {
      size_t n = 4;
      for (int32_t d = 0; d < a.outputs[i].rank; ++d)
        n *= static_cast<size_t>(a.outputs[i].shape[d]);
      for (size_t b = 0; b + 4 <= n; b += 4) {
        uint32_t word;
        std::memcpy(&word, outs[i].data.data() + b, 4);
        if (word == 0xA5A5A5A5u)
          die("a successful run left an output word unwritten");
      }
    }
  } else if (!a.kiln_context_error(context)) {
    die("a failed call without a message");
  }
  a.kiln_context_destroy(context);
  return 0;
}
