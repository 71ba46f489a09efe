/*===- model_abi.h - The C ABI of a compiled Kiln model -----------*- C -*-===*\
 *
 * Every libmodel.so that `kiln compile --emit lib` builds exports these functions,
 * whatever the target (host or cuda). kiln_model_run takes host memory on every
 * target (a cuda model copies through staging buffers and synchronizes).
 * `kiln run`, `kiln bench`, the tests and foreign-language callers use only this
 * header. Errors are status values plus a message on the
 * model object; nothing here exits or throws.
 *
 * Usage:
 *   kiln_model *m = kiln_model_create("out/model.weights");
 *   if (kiln_model_error(m)) { fprintf(stderr, "%s\n", kiln_model_error(m)); }
 *   kiln_tensor in = {KILN_F32, 4, shape, data}, out = {...};
 *   if (kiln_model_run(m, &in, 1, &out, 1) != 0) ... kiln_model_error(m) ...
 *   kiln_model_destroy(m);
\*===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_MODEL_ABI_H
#define KILN_RUNTIME_MODEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_VERSION 1

/* Element types, numbered as ONNX's TensorProto.DataType. */
enum {
  KILN_F32 = 1, KILN_U8 = 2, KILN_I8 = 3, KILN_U16 = 4, KILN_I16 = 5,
  KILN_I32 = 6, KILN_I64 = 7, KILN_BOOL = 9, KILN_F16 = 10, KILN_F64 = 11,
  KILN_U32 = 12, KILN_U64 = 13, KILN_BF16 = 16
};

typedef struct kiln_model kiln_model;

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

/* Loads the weights and allocates the arena. `weights_path` NULL or "": the weights
 * built into the model (`kiln compile --embed-weights`; an error for a model
 * compiled without). Returns NULL only when memory for the model object itself
 * cannot be allocated; otherwise check kiln_model_error. */
kiln_model *kiln_model_create(const char *weights_path);
void kiln_model_destroy(kiln_model *model);

/* The last error, or NULL when the last call succeeded. */
const char *kiln_model_error(const kiln_model *model);

int32_t kiln_model_abi_version(void);
int32_t kiln_model_num_inputs(const kiln_model *model);
int32_t kiln_model_num_outputs(const kiln_model *model);
/* 0 on success, -1 when the index is out of range. */
int32_t kiln_model_input_info(const kiln_model *model, int32_t index,
                              kiln_tensor_info *info);
int32_t kiln_model_output_info(const kiln_model *model, int32_t index,
                               kiln_tensor_info *info);

/* Runs the model. Inputs and outputs are in the model's order and must match its
 * count, dtypes and shapes exactly. Returns 0, or non-zero with kiln_model_error. */
int32_t kiln_model_run(kiln_model *model, const kiln_tensor *inputs,
                       int32_t num_inputs, kiln_tensor *outputs,
                       int32_t num_outputs);

/* Runs the model on tensors already in the target's memory: device pointers on
 * `stream` (a CUstream; NULL: the model's own stream) for cuda models, where the
 * call only enqueues the work; host pointers, synchronously, for host models. */
int32_t kiln_model_run_device(kiln_model *model, const kiln_tensor *inputs,
                              int32_t num_inputs, kiln_tensor *outputs,
                              int32_t num_outputs, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_MODEL_ABI_H */
