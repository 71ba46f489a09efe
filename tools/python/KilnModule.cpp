//===- KilnModule.cpp - kiln._kiln, the Python module's runtime side -------===//
//
// Python bindings (pybind11): load a compiled model and run it through its C ABI
// from numpy. kiln/__init__.py adds kiln.compile, which runs the kiln compiler in
// its own process (MLIR and LLVM stay out of the interpreter, and no compiler
// failure can take it down).
//
//   import kiln, numpy as np
//   model = kiln.compile("tiny.onnx", input_shapes={"input": (1, 1, 10, 10)})
//   out = model.run({"input": np.zeros((1, 1, 10, 10), np.float32)})["probs"]
//
// A compiled model is its artifact directory, opened by the runtime's loader
// (kiln/runtime/Artifact.h: the manifest, libmodel.so with RTLD_LOCAL so that
// several models live in one process, the C ABI looked up there). Model.run takes a context
// from the model's pool (one is created per concurrent caller) and runs with the
// GIL released, so Python threads run one model at once. Every failure raises
// kiln.Error with Kiln's own message; nothing crashes the interpreter.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Artifact.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// Raised (as kiln.Error) with Kiln's message.
struct KilnError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// numpy dtype of a kiln element type (bfloat16, which numpy lacks: its bits as uint16).
py::dtype dtypeOf(int32_t code) {
  switch (code) {
  case KILN_F32: return py::dtype("float32");
  case KILN_F64: return py::dtype("float64");
  case KILN_F16: return py::dtype("float16");
  case KILN_BF16: return py::dtype("uint16");
  case KILN_I8: return py::dtype("int8");
  case KILN_I16: return py::dtype("int16");
  case KILN_I32: return py::dtype("int32");
  case KILN_I64: return py::dtype("int64");
  case KILN_U8: return py::dtype("uint8");
  case KILN_U16: return py::dtype("uint16");
  case KILN_U32: return py::dtype("uint32");
  case KILN_U64: return py::dtype("uint64");
  case KILN_BOOL: return py::dtype("bool");
  }
  throw KilnError("unknown element type code " + std::to_string(code));
}

/// The kiln element type of a numpy array; -1 for one Kiln has no type for (the
/// C ABI then reports the mismatch with the model's message).
int32_t codeOf(const py::dtype &dtype) {
  char kind = dtype.kind();
  auto size = dtype.itemsize();
  if (kind == 'f')
    return size == 4 ? KILN_F32 : size == 8 ? KILN_F64 : size == 2 ? KILN_F16 : -1;
  if (kind == 'i')
    return size == 1 ? KILN_I8 : size == 2 ? KILN_I16 : size == 4 ? KILN_I32
         : size == 8 ? KILN_I64 : -1;
  if (kind == 'u')
    return size == 1 ? KILN_U8 : size == 2 ? KILN_U16 : size == 4 ? KILN_U32
         : size == 8 ? KILN_U64 : -1;
  if (kind == 'b')
    return KILN_BOOL;
  return -1;
}

/// One input or output as the model declares it.
struct TensorInfo {
  std::string name;
  int32_t code;
  std::vector<int64_t> shape;
  py::dtype dtype() const { return dtypeOf(code); }
  py::tuple shapeTuple() const { return py::cast(shape); }
};

class Model;

/// One caller's run state (arena, streams): what Model.run takes from its pool, or
/// what Model.context() hands out for a thread to keep.
class Context {
public:
  Context(std::shared_ptr<Model> model);
  ~Context();
  Context(const Context &) = delete;
  py::dict run(const py::dict &feeds);

private:
  std::shared_ptr<Model> model;
  kiln_context *context = nullptr;
  std::mutex busy; // one run at a time on a context
};

class Model : public std::enable_shared_from_this<Model> {
public:
  Model(std::string dir) : dir(std::move(dir)) {
    if (kiln::rt::Status s = artifact.open(this->dir); !s)
      throw KilnError(s.message());
    library = &artifact.abi();
    model = artifact.model();
    for (bool in : {true, false})
      for (const kiln_tensor_info &info : in ? artifact.inputs() : artifact.outputs())
        (in ? inputs : outputs)
            .push_back({info.name, info.dtype,
                        std::vector<int64_t>(info.shape, info.shape + info.rank)});
  }
  ~Model() {
    for (kiln_context *c : pool)
      library->kiln_context_destroy(c);
  }
  Model(const Model &) = delete;

  /// A context from the pool (a new one when all are busy); give it back after.
  kiln_context *acquire() {
    {
      std::lock_guard<std::mutex> lock(poolMutex);
      if (!pool.empty()) {
        kiln_context *c = pool.back();
        pool.pop_back();
        return c;
      }
    }
    return create();
  }
  void release(kiln_context *c) {
    std::lock_guard<std::mutex> lock(poolMutex);
    pool.push_back(c);
  }
  kiln_context *create() {
    kiln_context *c = library->kiln_context_create(model);
    if (!c)
      throw KilnError("out of memory creating a context");
    if (const char *e = library->kiln_context_error(c)) {
      std::string error = e;
      library->kiln_context_destroy(c);
      throw KilnError(error);
    }
    return c;
  }

  /// Binds FEEDS and fresh outputs to C and runs it with the GIL released.
  py::dict runOn(kiln_context *c, const py::dict &feeds) {
    auto numpy = py::module_::import("numpy");
    std::vector<py::array> keep; // the arrays bound, alive until the run returns
    std::vector<std::vector<int64_t>> shapes;
    std::vector<kiln_tensor> in, out;
    std::vector<std::string> inNames;
    for (auto item : feeds) {
      std::string name = py::str(item.first);
      bool known = false;
      for (const TensorInfo &t : inputs)
        known |= t.name == name;
      if (!known)
        throw KilnError("the model has no input '" + name + "' (its inputs: " +
                        names(inputs) + ")");
      py::array a = numpy.attr("ascontiguousarray")(item.second);
      keep.push_back(a);
      shapes.emplace_back(a.shape(), a.shape() + a.ndim());
      inNames.push_back(name);
    }
    for (const TensorInfo &t : inputs)
      if (!feeds.contains(py::str(t.name)))
        throw KilnError("input '" + t.name + "' is missing (its inputs: " + names(inputs) +
                        ")");
    for (size_t i = 0; i < keep.size(); ++i)
      in.push_back({codeOf(keep[i].dtype()), static_cast<int32_t>(keep[i].ndim()),
                    shapes[i].data(), keep[i].mutable_data()});
    py::dict results;
    std::vector<py::array> outArrays;
    for (const TensorInfo &t : outputs) {
      py::array a = numpy.attr("empty")(t.shapeTuple(), t.dtype());
      outArrays.push_back(a);
      out.push_back({t.code, static_cast<int32_t>(t.shape.size()), t.shape.data(),
                     a.mutable_data()});
      results[py::str(t.name)] = a;
    }
    kiln_status status = KILN_OK;
    {
      py::gil_scoped_release nogil;
      for (size_t i = 0; status == KILN_OK && i < in.size(); ++i)
        status = library->kiln_context_set_input(c, inNames[i].c_str(), &in[i]);
      for (size_t i = 0; status == KILN_OK && i < out.size(); ++i)
        status = library->kiln_context_set_output(c, outputs[i].name.c_str(), &out[i]);
      if (status == KILN_OK)
        status = library->kiln_context_execute(c);
    }
    if (status != KILN_OK) {
      const char *e = library->kiln_context_error(c);
      throw KilnError(e ? e : "the run failed");
    }
    return results;
  }

  py::dict run(const py::dict &feeds) {
    kiln_context *c = acquire();
    try {
      py::dict result = runOn(c, feeds);
      release(c);
      return result;
    } catch (...) {
      release(c);
      throw;
    }
  }

  static std::string names(const std::vector<TensorInfo> &ts) {
    std::string s;
    for (const TensorInfo &t : ts)
      s += (s.empty() ? "" : ", ") + t.name;
    return s;
  }

  std::string dir;
  kiln::rt::Artifact artifact;
  const kiln::rt::ModelAbi *library = nullptr;
  kiln_model *model = nullptr;
  std::vector<TensorInfo> inputs, outputs;

private:
  std::mutex poolMutex;
  std::vector<kiln_context *> pool;
};

Context::Context(std::shared_ptr<Model> m) : model(std::move(m)), context(model->create()) {}
Context::~Context() { model->library->kiln_context_destroy(context); }
py::dict Context::run(const py::dict &feeds) {
  std::unique_lock<std::mutex> lock(busy, std::try_to_lock);
  if (!lock)
    throw KilnError("this context is running on another thread (use one context per "
                    "thread, or Model.run)");
  return model->runOn(context, feeds);
}

std::shared_ptr<Model> load(const std::string &dir) { return std::make_shared<Model>(dir); }

} // namespace

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "Kiln's runtime side: load a compiled model and run it from numpy";
  py::register_exception<KilnError>(m, "Error", PyExc_RuntimeError);
  m.attr("abi_version") = KILN_ABI_VERSION;

  py::class_<TensorInfo>(m, "TensorInfo", "An input or output: name, dtype, shape")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly("dtype", &TensorInfo::dtype)
      .def_property_readonly("shape", &TensorInfo::shapeTuple)
      .def("__repr__", [](const TensorInfo &t) {
        return "TensorInfo(" + t.name + ", " + py::str(t.dtype()).cast<std::string>() +
               ", " + py::str(t.shapeTuple()).cast<std::string>() + ")";
      });

  py::class_<Context>(m, "Context",
                      "One thread's run state of a model (arena, streams); run() on one "
                      "thread at a time")
      .def("run", &Context::run, py::arg("inputs"),
           "Runs the model on {name: ndarray}; returns {name: ndarray}");

  py::class_<Model, std::shared_ptr<Model>>(m, "Model", "A compiled model, loaded")
      .def_readonly("path", &Model::dir)
      .def_readonly("inputs", &Model::inputs)
      .def_readonly("outputs", &Model::outputs)
      .def_property_readonly(
          "manifest",
          [](const Model &self) {
            const kiln::rt::Manifest &m = self.artifact.manifest();
            py::dict d;
            d["name"] = m.name;
            d["target"] = m.target;
            d["gpu_arch"] = m.gpuArch;
            d["abi_version"] = m.abiVersion;
            d["weights_format"] = m.weightsFormat;
            d["precision"] = m.precision;
            d["embedded_weights"] = m.embeddedWeights;
            d["library_calls"] = m.libraryCalls;
            d["library_engine"] = m.libraryEngine;
            return d;
          },
          "What the artifact's manifest.json says: target, gpu_arch, abi_version, "
          "weights_format, precision, library calls and their engine")
      .def("run", &Model::run, py::arg("inputs"),
           "Runs the model on {name: ndarray} (every input, exact dtype and shape); "
           "returns {name: ndarray}. Thread-safe: concurrent calls run on contexts "
           "of their own, with the GIL released.")
      .def("context", [](const std::shared_ptr<Model> &self) {
        return std::make_unique<Context>(self);
      }, "A context of the model for one thread to keep");

  m.def("load", &load, py::arg("artifact_dir"),
        "Loads a model compiled with `kiln compile --emit lib -o artifact_dir`");
}
