/*===- model_abi.h - The C ABI of a compiled Kiln model -----------*- C -*-===*\
 *
 * Every libmodel.so that `kiln compile --emit lib` builds exports these functions,
 * whatever the target (host, cuda, cuda-sim). Its shape is TensorRT's engine and
 * execution context:
 *   - a model (kiln_model) is immutable once created: the weights, the kernels (a
 *     loaded PTX module on cuda). Any number of threads may use one at once.
 *   - a context (kiln_context) is one caller's run state: the arena, the streams
 *     and events (threads on the host), bound tensors, a CUDA graph, the last
 *     error. One thread at a time per context; N threads run one model at once
 *     with N contexts and share one copy of the weights.
 * Errors are kiln_status codes plus a message on the object that failed; nothing
 * here exits, throws or keeps global mutable state.
 *
 * Usage:
 *   kiln_model *m = kiln_model_create("out/model.weights");
 *   if (kiln_model_status(m) != KILN_OK) fprintf(stderr, "%s\n", kiln_model_error(m));
 *   kiln_context *c = kiln_context_create(m);
 *   kiln_tensor in = {KILN_F32, 4, shape, data}, out = {...};
 *   kiln_context_set_input(c, "x", &in);          // by name ...
 *   kiln_context_set_output(c, "y", &out);
 *   if (kiln_context_execute(c) != KILN_OK) ... kiln_context_error(c) ...
 *   kiln_context_run(c, &in, 1, &out, 1);          // ... or all by index
 *   kiln_context_destroy(c);
 *   kiln_model_destroy(m);                         // after its contexts
\*===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_MODEL_ABI_H
#define KILN_RUNTIME_MODEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 3 (from 2): the functions below are compiled once into kiln_runtime
 * and work on any model; a model's code holds only its kiln_model_definition.
 * New: kiln_model_create_from. A model compiled with `kiln compile --name NAME`
 * (kiln_add_model always names its models) exports kiln_model_definition_NAME
 * instead of kiln_model_create, so several models link into one program; an
 * unnamed model and every libmodel.so export kiln_model_create as before. */
#define KILN_ABI_VERSION 3

/* Element types, numbered as ONNX's TensorProto.DataType. */
enum {
  KILN_F32 = 1, KILN_U8 = 2, KILN_I8 = 3, KILN_U16 = 4, KILN_I16 = 5,
  KILN_I32 = 6, KILN_I64 = 7, KILN_BOOL = 9, KILN_F16 = 10, KILN_F64 = 11,
  KILN_U32 = 12, KILN_U64 = 13, KILN_BF16 = 16
};

/* What a call returns; the object's error message says more. */
typedef enum {
  KILN_OK = 0,
  KILN_ERROR_ARGUMENT = 1, /* a null pointer, or an index or name the model lacks */
  KILN_ERROR_MISMATCH = 2, /* a tensor's count, dtype or shape is not the model's */
  KILN_ERROR_UNBOUND = 3,  /* execute with an input or output not set */
  KILN_ERROR_LOAD = 4,     /* the weights: missing, truncated, another model's */
  KILN_ERROR_MEMORY = 5,   /* host or device memory could not be allocated */
  KILN_ERROR_DEVICE = 6,   /* no CUDA driver, or a driver call failed */
  KILN_ERROR_RUN = 7       /* a kernel failed while running (the simulator's checks) */
} kiln_status;

typedef struct kiln_model kiln_model;
typedef struct kiln_context kiln_context;
/* A compiled model's constant description (its tables, its kernels). */
typedef struct kiln_model_definition kiln_model_definition;

/* The definition a model compiled with `--name NAME` exports, and its declaration:
 *   KILN_DECLARE_MODEL(classifier);
 *   kiln_model *m = kiln_model_create_from(KILN_MODEL(classifier), path); */
#define KILN_MODEL(name) kiln_model_definition_##name()
#ifdef __cplusplus
#define KILN_DECLARE_MODEL(name) \
  extern "C" const kiln_model_definition *kiln_model_definition_##name(void)
#else
#define KILN_DECLARE_MODEL(name) \
  const kiln_model_definition *kiln_model_definition_##name(void)
#endif

/* A tensor the caller owns: dense, row-major. */
typedef struct {
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
  void *data;
} kiln_tensor;

/* What a model expects at one input or output. */
typedef struct {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
} kiln_tensor_info;

int32_t kiln_abi_version(void);

/* Loads the weights (and on cuda the kernels) once. `weights_path` NULL or "": the
 * weights built into the model (`kiln compile --embed-weights`; an error for a
 * model compiled without). Returns NULL only when memory for the model object
 * itself cannot be allocated; otherwise check kiln_model_status. */
kiln_model *kiln_model_create(const char *weights_path);
/* The same for the model `definition` (KILN_MODEL(NAME)); kiln_model_create is
 * this for the model of an unnamed model.cpp or a libmodel.so. */
kiln_model *kiln_model_create_from(const kiln_model_definition *definition,
                                   const char *weights_path);
/* Destroy a model after all its contexts. */
void kiln_model_destroy(kiln_model *model);
/* Whether the model loaded, and why not (NULL when it did). */
kiln_status kiln_model_status(const kiln_model *model);
const char *kiln_model_error(const kiln_model *model);

int32_t kiln_model_num_inputs(const kiln_model *model);
int32_t kiln_model_num_outputs(const kiln_model *model);
kiln_status kiln_model_input_info(const kiln_model *model, int32_t index,
                                  kiln_tensor_info *info);
kiln_status kiln_model_output_info(const kiln_model *model, int32_t index,
                                   kiln_tensor_info *info);
/* The index of the input or output named `name`; -1 when there is none. */
int32_t kiln_model_input_index(const kiln_model *model, const char *name);
int32_t kiln_model_output_index(const kiln_model *model, const char *name);

/* A context of a loaded model: its own arena, streams and events. Returns NULL
 * only when memory for the context object cannot be allocated; otherwise check
 * kiln_context_status (a model that failed to load gives failed contexts). */
kiln_context *kiln_context_create(kiln_model *model);
void kiln_context_destroy(kiln_context *context);
/* The last call's status and message (NULL after a success). */
kiln_status kiln_context_status(const kiln_context *context);
const char *kiln_context_error(const kiln_context *context);

/* Binds a tensor (host memory) to the input or output `name`, checked against the
 * model's dtype and shape; kept until bound again. */
kiln_status kiln_context_set_input(kiln_context *context, const char *name,
                                   const kiln_tensor *tensor);
kiln_status kiln_context_set_output(kiln_context *context, const char *name,
                                    kiln_tensor *tensor);
/* Runs the model on the bound tensors; returns when the outputs are written. */
kiln_status kiln_context_execute(kiln_context *context);

/* Runs the model on host tensors given in the model's order (count, dtypes and
 * shapes exactly the model's); returns when the outputs are written. */
kiln_status kiln_context_run(kiln_context *context, const kiln_tensor *inputs,
                             int32_t num_inputs, kiln_tensor *outputs,
                             int32_t num_outputs);

/* Runs the model on tensors already in the target's memory: for cuda models, device
 * pointers, the work enqueued in order with `stream` (a CUstream; NULL is CUDA's
 * default stream, as in cuBLAS and cuDNN): it starts after the stream's earlier work
 * and the stream's later work starts after it; the call does not wait. For host
 * models, host pointers, synchronously (`stream` unused). */
kiln_status kiln_context_run_device(kiln_context *context, const kiln_tensor *inputs,
                                    int32_t num_inputs, kiln_tensor *outputs,
                                    int32_t num_outputs, void *stream);

#ifdef __cplusplus
}
#endif

/* Every function above, for callers that dlopen a model and look each one up:
 *   #define LOOKUP(f) f##_fn = (decltype(&f))dlsym(handle, #f);
 *   KILN_MODEL_ABI_FUNCTIONS(LOOKUP) */
#define KILN_MODEL_ABI_FUNCTIONS(X)                                                    \
  X(kiln_abi_version) X(kiln_model_create) X(kiln_model_destroy) X(kiln_model_status)  \
  X(kiln_model_error) X(kiln_model_num_inputs) X(kiln_model_num_outputs)               \
  X(kiln_model_input_info) X(kiln_model_output_info) X(kiln_model_input_index)         \
  X(kiln_model_output_index) X(kiln_context_create) X(kiln_context_destroy)            \
  X(kiln_context_status) X(kiln_context_error) X(kiln_context_set_input)               \
  X(kiln_context_set_output) X(kiln_context_execute) X(kiln_context_run)               \
  X(kiln_context_run_device)

#endif /* KILN_RUNTIME_MODEL_ABI_H */
