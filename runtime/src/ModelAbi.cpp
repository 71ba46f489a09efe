//===- ModelAbi.cpp - The C ABI every compiled model shares ---------------===//
//
// This file implements model_abi.h once, for any kiln_model_definition: model and
// context lifetime, status and messages, binding by name and the argument checks of
// a run. What differs between targets is behind the definition's TargetHooks; what
// differs between models is the definition itself.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/ModelDefinition.h"

#include <cstring>
#include <new>
#include <string>
#include <vector>

using kiln::rt::Status;

namespace kiln::rt {
ModelState::~ModelState() = default;
ContextState::~ContextState() = default;
} // namespace kiln::rt

/// A loaded model: its definition, whether it loaded, the target's state.
struct kiln_model {
  const kiln_model_definition *definition = nullptr;
  Status status;
  std::unique_ptr<kiln::rt::ModelState> state;
};

/// One caller's run state: the last call's status, the tensors bound by name and
/// the target's state.
struct kiln_context {
  kiln_model *model = nullptr;
  Status status;
  std::vector<kiln_tensor> inputs, outputs;
  std::vector<char> inputBound, outputBound;
  std::unique_ptr<kiln::rt::ContextState> state;
};

namespace {

/// Records `s` as the context's last status.
kiln_status finish(kiln_context *c, Status s) {
  c->status = std::move(s);
  return c->status.code();
}

int32_t indexOf(const kiln_tensor_info *list, int32_t count, const char *name) {
  for (int32_t i = 0; name && i < count; ++i)
    if (std::strcmp(list[i].name, name) == 0)
      return i;
  return -1;
}

/// Loads the definition's weights (from `path`, or the image built in when no
/// path is given) and hands them to its target.
Status loadModel(kiln_model *m, const char *path) {
  const kiln_model_definition &d = *m->definition;
  if (d.abiVersion != KILN_ABI_VERSION)
    return Status::error("the model was compiled for C ABI version " +
                             std::to_string(d.abiVersion) + ", this runtime has " +
                             std::to_string(KILN_ABI_VERSION) + " (recompile it)",
                         KILN_ERROR_LOAD);
  kiln::rt::AlignedBuffer weights;
  Status s = Status::ok();
  if ((!path || !*path) && d.embeddedWeights)
    s = kiln::rt::loadWeightsImage(d.embeddedWeights,
                                   static_cast<uint64_t>(d.embeddedWeightsEnd -
                                                         d.embeddedWeights),
                                   "the embedded weights", d.weightBytes,
                                   d.weightsChecksum, weights);
  else
    s = kiln::rt::loadWeights(path ? path : "", d.weightBytes, d.weightsChecksum, weights);
  if (!s)
    return s;
  return d.target->load(d, std::move(weights), m->state);
}

/// Binds `t` to the input or output (`what`) named `name` of `list`.
kiln_status bindTensor(kiln_context *c, const char *what, const kiln_tensor_info *list,
                       int32_t count, std::vector<kiln_tensor> &slots,
                       std::vector<char> &bound, const char *name, const kiln_tensor *t) {
  int32_t i = indexOf(list, count, name);
  if (i < 0 || !t)
    return finish(c, Status::error(t ? "the model has no " + std::string(what) + " '" +
                                           std::string(name ? name : "") + "'"
                                     : std::string("no tensor"),
                                   KILN_ERROR_ARGUMENT));
  Status s = kiln::rt::checkTensor(std::string(what) + " '" + name + "'", *t, list[i]);
  if (s) {
    slots[i] = *t;
    bound[i] = 1;
  }
  return finish(c, std::move(s));
}

/// The context is usable: its model loaded and it was created; otherwise that
/// failure, recorded as the call's status.
bool ready(kiln_context *c) {
  if (c->model && c->model->status && c->state)
    return true;
  if (!c->model)
    finish(c, Status::error("no model", KILN_ERROR_ARGUMENT));
  else if (!c->model->status)
    finish(c, c->model->status);
  else if (c->status)
    finish(c, Status::error("the context was not created", KILN_ERROR_MEMORY));
  return false;
}

kiln_status runChecked(kiln_context *c, const kiln_tensor *in, int32_t numIn,
                       kiln_tensor *out, int32_t numOut, bool staged, void *stream) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (!ready(c))
    return c->status.code();
  const kiln_model_definition &d = *c->model->definition;
  Status s = kiln::rt::checkTensors("input", in, numIn, d.inputs, d.numInputs);
  if (s)
    s = kiln::rt::checkTensors("output", out, numOut, d.outputs, d.numOutputs);
  if (s)
    s = d.target->run(d, *c->model->state, *c->state, in, out, staged, stream);
  return finish(c, std::move(s));
}

} // namespace

extern "C" {

int32_t kiln_abi_version(void) { return KILN_ABI_VERSION; }

kiln_model *kiln_model_create_from(const kiln_model_definition *definition,
                                   const char *weightsPath) {
  kiln_model *m = new (std::nothrow) kiln_model();
  if (!m)
    return nullptr;
  m->definition = definition;
  m->status = definition ? loadModel(m, weightsPath)
                         : Status::error("no model definition", KILN_ERROR_ARGUMENT);
  return m;
}

void kiln_model_destroy(kiln_model *m) { delete m; }

kiln_status kiln_model_status(const kiln_model *m) {
  return m ? m->status.code() : KILN_ERROR_ARGUMENT;
}

const char *kiln_model_error(const kiln_model *m) {
  if (!m)
    return "no model";
  return m->status ? nullptr : m->status.message().c_str();
}

int32_t kiln_model_num_inputs(const kiln_model *m) {
  return m && m->definition ? m->definition->numInputs : 0;
}

int32_t kiln_model_num_outputs(const kiln_model *m) {
  return m && m->definition ? m->definition->numOutputs : 0;
}

kiln_status kiln_model_input_info(const kiln_model *m, int32_t i, kiln_tensor_info *info) {
  if (!info || i < 0 || i >= kiln_model_num_inputs(m))
    return KILN_ERROR_ARGUMENT;
  *info = m->definition->inputs[i];
  return KILN_OK;
}

kiln_status kiln_model_output_info(const kiln_model *m, int32_t i, kiln_tensor_info *info) {
  if (!info || i < 0 || i >= kiln_model_num_outputs(m))
    return KILN_ERROR_ARGUMENT;
  *info = m->definition->outputs[i];
  return KILN_OK;
}

int32_t kiln_model_input_index(const kiln_model *m, const char *name) {
  return m && m->definition
             ? indexOf(m->definition->inputs, m->definition->numInputs, name)
             : -1;
}

int32_t kiln_model_output_index(const kiln_model *m, const char *name) {
  return m && m->definition
             ? indexOf(m->definition->outputs, m->definition->numOutputs, name)
             : -1;
}

kiln_context *kiln_context_create(kiln_model *m) {
  kiln_context *c = new (std::nothrow) kiln_context();
  if (!c)
    return nullptr;
  c->model = m;
  if (!m || !m->definition) {
    c->status = Status::error("no model", KILN_ERROR_ARGUMENT);
    return c;
  }
  if (!m->status) {
    c->status = m->status;
    return c;
  }
  const kiln_model_definition &d = *m->definition;
  c->inputs.resize(d.numInputs);
  c->outputs.resize(d.numOutputs);
  c->inputBound.assign(d.numInputs, 0);
  c->outputBound.assign(d.numOutputs, 0);
  c->status = d.target->createContext(d, *m->state, c->state);
  if (c->status && !c->state)
    c->status = Status::error("the target created no context", KILN_ERROR_MEMORY);
  return c;
}

void kiln_context_destroy(kiln_context *c) { delete c; }

kiln_status kiln_context_status(const kiln_context *c) {
  return c ? c->status.code() : KILN_ERROR_ARGUMENT;
}

const char *kiln_context_error(const kiln_context *c) {
  if (!c)
    return "no context";
  return c->status ? nullptr : c->status.message().c_str();
}

kiln_status kiln_context_set_input(kiln_context *c, const char *name, const kiln_tensor *t) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (!ready(c))
    return c->status.code();
  const kiln_model_definition &d = *c->model->definition;
  return bindTensor(c, "input", d.inputs, d.numInputs, c->inputs, c->inputBound, name, t);
}

kiln_status kiln_context_set_output(kiln_context *c, const char *name, kiln_tensor *t) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (!ready(c))
    return c->status.code();
  const kiln_model_definition &d = *c->model->definition;
  return bindTensor(c, "output", d.outputs, d.numOutputs, c->outputs, c->outputBound, name,
                    t);
}

kiln_status kiln_context_execute(kiln_context *c) {
  if (!c)
    return KILN_ERROR_ARGUMENT;
  if (!ready(c))
    return c->status.code();
  const kiln_model_definition &d = *c->model->definition;
  for (int32_t i = 0; i < d.numInputs; ++i)
    if (!c->inputBound[i])
      return finish(c, Status::error(std::string("input '") + d.inputs[i].name +
                                         "' is not set",
                                     KILN_ERROR_UNBOUND));
  for (int32_t i = 0; i < d.numOutputs; ++i)
    if (!c->outputBound[i])
      return finish(c, Status::error(std::string("output '") + d.outputs[i].name +
                                         "' is not set",
                                     KILN_ERROR_UNBOUND));
  return runChecked(c, c->inputs.data(), d.numInputs, c->outputs.data(), d.numOutputs,
                    /*staged=*/true, nullptr);
}

kiln_status kiln_context_run(kiln_context *c, const kiln_tensor *in, int32_t numIn,
                             kiln_tensor *out, int32_t numOut) {
  return runChecked(c, in, numIn, out, numOut, /*staged=*/true, nullptr);
}

kiln_status kiln_context_run_device(kiln_context *c, const kiln_tensor *in, int32_t numIn,
                                    kiln_tensor *out, int32_t numOut, void *stream) {
  return runChecked(c, in, numIn, out, numOut, /*staged=*/false, stream);
}

} // extern "C"
