/* iotx C API: apply a compiled model's required input transposes from C (C99).
 *
 * Errors: every function that can fail returns an iotx_error*, NULL on success. A non-NULL
 * error is owned by the caller and released with iotx_error_free(); iotx_error_code() gives a
 * stable code ("IOTX_E401", "NCC_IHNW003", ...) and iotx_error_message() a message; both
 * strings live as long as the error. Invalid arguments (NULL pointers, wrong buffer sizes,
 * indices out of range) are reported as errors, never crashes.
 *
 * Ownership: a transformer returned through `out` is owned by the caller and released with
 * iotx_transformer_free(). Input strings and arrays are only read during the call.
 *
 * Threading: a transformer is immutable. Any number of threads may call the query and apply
 * functions on one transformer at the same time; free it only once no call is running.
 * iotx_transformer_apply_all() uses the calling thread plus oneTBB worker threads.
 */
#ifndef IOTX_IOTX_H_
#define IOTX_IOTX_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define IOTX_C_API
#else
#define IOTX_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct iotx_error iotx_error;
typedef struct iotx_transformer iotx_transformer;

/* One entry parameter as the user feeds it: row-major dims of element_size-byte elements. */
typedef struct iotx_parameter {
  const char* name;     /* frontend name; may be NULL with from_attributes (then taken from
                           neff_input_names) */
  const int64_t* dims;  /* `rank` dims; may be NULL when rank is 0 (a scalar) */
  size_t rank;
  size_t element_size;  /* bytes per element, >= 1 */
} iotx_parameter;

/* Builds a transformer from the AwsNeuronNeff custom-call's frontend attributes
 * (valid_inputs, required_transpose, neff_input_names; neff_input_names may be NULL or "")
 * and the entry parameters in parameter-number order. */
IOTX_C_API iotx_error* iotx_transformer_from_attributes(const char* valid_inputs,
                                                        const char* required_transpose,
                                                        const char* neff_input_names,
                                                        const iotx_parameter* parameters,
                                                        size_t num_parameters,
                                                        iotx_transformer** out);

/* Builds a transformer from the text of an io_transposes.json (`json_size` bytes) and named
 * entry parameters in parameter-number order. Specs naming no parameter are ignored. */
IOTX_C_API iotx_error* iotx_transformer_from_json(const char* json, size_t json_size,
                                                  const iotx_parameter* parameters,
                                                  size_t num_parameters, iotx_transformer** out);

/* Number of entry parameters. */
IOTX_C_API iotx_error* iotx_transformer_num_inputs(const iotx_transformer* transformer,
                                                   size_t* out);

/* *out = 1 if input `index` is sent to the device, 0 for a zero-sized parameter. */
IOTX_C_API iotx_error* iotx_transformer_is_fed(const iotx_transformer* transformer, size_t index,
                                               int* out);

/* Bytes of the device-layout buffer of input `index` (equal to the input's bytes). */
IOTX_C_API iotx_error* iotx_transformer_output_bytes(const iotx_transformer* transformer,
                                                     size_t index, size_t* out);

/* The device-side shape of input `index`: writes up to `capacity` dims to `dims` and the rank
 * to *rank. A capacity smaller than the rank is an error that still sets *rank, so callers may
 * ask with capacity 0 first. */
IOTX_C_API iotx_error* iotx_transformer_output_shape(const iotx_transformer* transformer,
                                                     size_t index, int64_t* dims,
                                                     size_t capacity, size_t* rank);

/* Writes the device layout of input `index` from src (src_size bytes) into dst (dst_size
 * bytes). Buffers must not overlap, except in place for an input without a transpose. */
IOTX_C_API iotx_error* iotx_transformer_apply(const iotx_transformer* transformer, size_t index,
                                              const void* src, size_t src_size, void* dst,
                                              size_t dst_size);

/* All inputs of one inference (arrays of num_inputs entries), in parallel. Every argument is
 * checked before anything is written. `count` must equal the transformer's num_inputs. */
IOTX_C_API iotx_error* iotx_transformer_apply_all(const iotx_transformer* transformer,
                                                  const void* const* srcs,
                                                  const size_t* src_sizes, void* const* dsts,
                                                  const size_t* dst_sizes, size_t count);

/* Releases a transformer; NULL is ignored. */
IOTX_C_API void iotx_transformer_free(iotx_transformer* transformer);

/* The stable code of an error, e.g. "IOTX_E401"; "" for NULL. */
IOTX_C_API const char* iotx_error_code(const iotx_error* error);
/* The message of an error; "" for NULL. */
IOTX_C_API const char* iotx_error_message(const iotx_error* error);
/* Releases an error; NULL is ignored. */
IOTX_C_API void iotx_error_free(iotx_error* error);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* IOTX_IOTX_H_ */
