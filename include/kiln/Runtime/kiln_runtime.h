/*===- kiln_runtime.h - Kiln's C runtime API ------------------------------===*
 *
 * The C face of the runtime, for other languages. Every function that can
 * fail returns a kiln_status: NULL on success, otherwise an error whose
 * message stays valid until kiln_status_free. Results come back through
 * out_ parameters. Modules are immutable and may be shared across threads;
 * a session is used by one thread at a time.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_KILN_RUNTIME_H
#define KILN_RUNTIME_KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_status_s *kiln_status;
typedef struct kiln_module_s kiln_module;
typedef struct kiln_session_s kiln_session;

const char *kiln_status_message(kiln_status status);
void kiln_status_free(kiln_status status);

kiln_status kiln_module_load(const char *path, kiln_module **out_module);
kiln_status kiln_module_load_from_memory(const void *data, size_t size,
                                         kiln_module **out_module);
void kiln_module_release(kiln_module *module);

size_t kiln_module_num_inputs(const kiln_module *module);
size_t kiln_module_num_outputs(const kiln_module *module);
/* Describes input (is_output = 0) or output (is_output = 1) `index`.
   `out_dtype` is an ONNX TensorProto.DataType; the name and shape stay
   valid while the module lives. An output whose extent along one dim
   depends on the data has -1 there; its `out_bytes` is the size of its
   upper bound, the buffer kiln_session_run needs. */
kiln_status kiln_module_tensor_info(const kiln_module *module, int is_output,
                                    size_t index, const char **out_name,
                                    int32_t *out_dtype, size_t *out_rank,
                                    const int64_t **out_shape,
                                    size_t *out_bytes);

/* A module compiled for a batch range (kiln-compile
   --input-shape=NAME:MIN..MAXx...): its least, greatest and optimum batch
   (0 for other modules). Its batched tensors (kiln_module_tensor_batched)
   have the batch as dim 0, described at the greatest. */
void kiln_module_batch_range(const kiln_module *module, int64_t *out_min,
                             int64_t *out_max, int64_t *out_opt);
int kiln_module_tensor_batched(const kiln_module *module, int is_output,
                               size_t index);

/* A module compiled for a length range (kiln-compile
   --input-shape=NAME:...xMIN..MAX...): its least, greatest and optimum
   length (0 for other modules). The dims of a tensor that are the length
   (kiln_module_tensor_length_dims: `*out_count` of them, 0 for most) are
   described at the greatest. Such a module runs with kiln_session_run_at. */
void kiln_module_length_range(const kiln_module *module, int64_t *out_min,
                              int64_t *out_max, int64_t *out_opt);
kiln_status kiln_module_tensor_length_dims(const kiln_module *module,
                                           int is_output, size_t index,
                                           size_t *out_count,
                                           const int64_t **out_dims);

/* The graph's sequence and optional inputs and outputs (kiln-compile
   --input-sequence, --input-absent, or sequences the graph returns), as
   compiled. Composite `index` is held by `length` of the module's tensors
   from `first` among its inputs (or its outputs, `is_output` 1): a
   sequence's elements, named NAME[0], NAME[1], ...; an optional tensor's
   value, named NAME. `kind`: 0 a sequence, 1 an optional tensor, 2 an
   optional sequence; `absent`: an optional compiled without a value (no
   tensors). The name stays valid while the module lives; any out pointer
   may be NULL. */
size_t kiln_module_num_composites(const kiln_module *module);
kiln_status kiln_module_composite_info(const kiln_module *module, size_t index,
                                       const char **out_name,
                                       int *out_is_output, int *out_kind,
                                       size_t *out_first, size_t *out_length,
                                       int *out_absent);
/* Whether output composite `index` has a count known only at run time (a
   sequence split by a run-time size, an optional one If branch leaves
   absent): its `length` tensors are the most it can have, and the output
   after them (`first + length`, an int64 scalar named NAME.length or
   NAME.present) holds how many a run gave (an optional: 1 when present, 0
   when absent). */
kiln_status kiln_module_composite_run_time_count(const kiln_module *module,
                                                 size_t index,
                                                 int *out_run_time_count);

kiln_status kiln_session_create(kiln_module *module,
                                kiln_session **out_session);
/* A session on a named device: "default" (the module's own), "cpu",
   "cuda" or "emulator" (a GPU module's kernels run on the CPU). Fails with
   a status, "no CUDA device" say, when the device cannot run the module. */
kiln_status kiln_session_create_on(kiln_module *module, const char *device,
                                   kiln_session **out_session);
void kiln_session_release(kiln_session *session);
/* Runs on buffers in the module's input and output order; the byte sizes
   are checked against the signature. A module compiled for a batch range
   runs the batch that the byte sizes of its batched inputs give (its
   maximum when `input_bytes` is NULL); kiln_session_output_shape tells
   the outputs' shapes. An output with a data-dependent
   extent comes back packed at the start of its buffer, in row-major order
   of the shape kiln_session_output_shape gives. */
kiln_status kiln_session_run(kiln_session *session, const void *const *inputs,
                             const size_t *input_bytes, void *const *outputs,
                             const size_t *output_bytes);
/* Runs a batch-range or length-range module at `batch` (0 for a module
   without a batch range) and `length` (0 for one without a length range):
   each buffer holds its tensor at that batch and length, in the module's
   order; kiln_session_output_shape tells the outputs' shapes. */
kiln_status kiln_session_run_at(kiln_session *session, int64_t batch,
                                int64_t length, const void *const *inputs,
                                void *const *outputs);
/* CUDA sessions: runs on device buffers the caller owns (CUdeviceptr
   values, each of its tensor's byte size, in the module's order), enqueued
   on the caller's CUstream `stream` (NULL: the session's own) without
   copies; returns without waiting for the kernels. */
kiln_status kiln_session_run_device(kiln_session *session,
                                    const uint64_t *inputs,
                                    const uint64_t *outputs, void *stream);
/* The shape of output `index` from the session's last run (the
   signature's, with a data-dependent extent resolved); valid until the next
   run. */
kiln_status kiln_session_output_shape(const kiln_session *session, size_t index,
                                      size_t *out_rank,
                                      const int64_t **out_shape);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_KILN_RUNTIME_H */
