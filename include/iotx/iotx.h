/* iotx C API: apply a compiled model's required input transposes from C (C99; docs/runtime.md).
 *
 * Errors: every function that can fail returns an iotx_error*, NULL on success (and only on
 * success: when even an error cannot be allocated, a static out-of-memory error, code
 * IOTX_E901, is returned). A non-NULL error is owned by the caller and released with
 * iotx_error_free(). iotx_error_enum() gives its code as a value (iotx_code, values never
 * change), iotx_error_code() as a string ("IOTX_E401", "NCC_IHNW003", ...) and
 * iotx_error_message() what was wrong, where and what was expected, without the code and at
 * most IOTX_MAX_MESSAGE_BYTES long; both strings live as long as the error. Invalid
 * arguments (NULL pointers, wrong buffer sizes, indices out of range, a struct_size this
 * version cannot read) are reported as errors, never crashes; no call ends in an abort or
 * lets a C++ exception out. Arrays and strings are trusted to have the sizes passed with them.
 *
 * Ownership: a transformer returned through `out` is owned by the caller and released with
 * iotx_transformer_free(). Input strings and arrays are only read during the call; strings a
 * query returns live as long as the transformer.
 *
 * Threading: a transformer is immutable. Any number of threads may call the query and apply
 * functions on one transformer at the same time; free it only once no call is running. By
 * default the apply functions use the calling thread plus oneTBB worker threads;
 * iotx_apply_options runs a call on the calling thread only, caps its threads, or hands its
 * parallel work to the caller's own parallel-for (iotx then creates no thread).
 *
 * ABI: options structs begin with their own size (struct_size = sizeof the struct the caller
 * compiled against), so later versions can add fields at the end without breaking callers:
 * fields beyond struct_size take their defaults. Initialize them with the _INIT macros.
 */
#ifndef IOTX_IOTX_H_
#define IOTX_IOTX_H_

#include <stddef.h>
#include <stdint.h>

#include "iotx/version.h" /* IOTX_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

#if defined(_WIN32)
#define IOTX_C_API
#else
#define IOTX_C_API __attribute__((visibility("default")))
#endif

/* MAJOR * 10000 + MINOR * 100 + PATCH of this header; compare with iotx_version(). */
#define IOTX_VERSION_NUMBER \
  (IOTX_VERSION_MAJOR * 10000 + IOTX_VERSION_MINOR * 100 + IOTX_VERSION_PATCH)

/* Longest message iotx_error_message() returns, in bytes, without the terminating NUL. */
#define IOTX_MAX_MESSAGE_BYTES 1024

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ---------------------------------------------------------------------------- */

/* IOTX_VERSION_NUMBER of the library actually loaded; a caller built against this header
 * runs with any library of the same major and minor version (the soname's). */
IOTX_C_API unsigned iotx_version(void);
/* "MAJOR.MINOR.PATCH" of the library actually loaded (static storage). */
IOTX_C_API const char* iotx_version_string(void);

/* ---- errors ------------------------------------------------------------------------------ */

/* Every stable code as a value, one constant per code of iotx/error_codes.inc (the one list
 * of codes): IOTX_Ennn = nnn, NCC_IIOTnnn = 1000 + nnn, NCC_IHNWnnn = 1100 + nnn. Values are
 * never changed or reused; new codes get new values. IOTX_OK is not an error. */
typedef enum iotx_code {
  IOTX_OK = 0,
#define IOTX_ERROR_CODE(enumerator, value, code, summary) code = value,
#include "iotx/error_codes.inc"
#undef IOTX_ERROR_CODE
} iotx_code;

typedef struct iotx_error iotx_error;

/* The code of an error as a value; IOTX_OK for NULL. */
IOTX_C_API iotx_code iotx_error_enum(const iotx_error* error);
/* The stable code of an error as a string, e.g. "IOTX_E401"; "" for NULL. */
IOTX_C_API const char* iotx_error_code(const iotx_error* error);
/* What was wrong, where and what was expected (no code: print it with iotx_error_code(),
 * e.g. "%s: %s"); "" for NULL. At most IOTX_MAX_MESSAGE_BYTES bytes; echoed input is cut. */
IOTX_C_API const char* iotx_error_message(const iotx_error* error);
/* Releases an error (the static out-of-memory error too); NULL is ignored. */
IOTX_C_API void iotx_error_free(iotx_error* error);

/* ---- building a transformer -------------------------------------------------------------- */

typedef struct iotx_transformer iotx_transformer;

/* One entry parameter as the user feeds it: row-major dims of element_size-byte elements. */
typedef struct iotx_parameter {
  const char* name;     /* frontend name; may be NULL with from_attributes (then taken from
                           neff_input_names) */
  const int64_t* dims;  /* `rank` dims, each >= 0; may be NULL when rank is 0 (a scalar) */
  size_t rank;          /* at most 64 */
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

/* Builds a transformer from the text of an io_transposes.json (exactly `json_size` bytes: a
 * NUL or anything after the document within them is an error) and uniquely named entry
 * parameters in parameter-number order. An entry whose input_name matches no parameter is an
 * error (IOTX_E117: its input would reach the device in the wrong layout); see
 * iotx_transformer_from_json_ex to ignore such entries instead. */
IOTX_C_API iotx_error* iotx_transformer_from_json(const char* json, size_t json_size,
                                                  const iotx_parameter* parameters,
                                                  size_t num_parameters, iotx_transformer** out);

/* iotx_build_options.flags: ignore io_transposes entries that match no parameter (they are
 * listed by iotx_transformer_ignored_spec) instead of failing with IOTX_E117. */
#define IOTX_BUILD_IGNORE_UNMATCHED_SPECS 0x1u
/* iotx_build_options.flags: the runtime feeds on its own threads (iotx_apply_options'
 * parallel_for, or max_threads 1): building starts none of oneTBB's worker threads (by
 * default the first large plan starts them, so that the first feed is not slower). */
#define IOTX_BUILD_CALLER_THREADS 0x2u

typedef struct iotx_build_options {
  size_t struct_size; /* sizeof(iotx_build_options) */
  uint32_t flags;     /* IOTX_BUILD_* bits; others must be 0 */
} iotx_build_options;
#define IOTX_BUILD_OPTIONS_INIT {sizeof(iotx_build_options), 0u}

/* The builders above with options; `options` may be NULL (the defaults). */
IOTX_C_API iotx_error* iotx_transformer_from_attributes_ex(const char* valid_inputs,
                                                           const char* required_transpose,
                                                           const char* neff_input_names,
                                                           const iotx_parameter* parameters,
                                                           size_t num_parameters,
                                                           const iotx_build_options* options,
                                                           iotx_transformer** out);
IOTX_C_API iotx_error* iotx_transformer_from_json_ex(const char* json, size_t json_size,
                                                     const iotx_parameter* parameters,
                                                     size_t num_parameters,
                                                     const iotx_build_options* options,
                                                     iotx_transformer** out);

/* Releases a transformer; NULL is ignored. */
IOTX_C_API void iotx_transformer_free(iotx_transformer* transformer);

/* ---- what was built (queries: O(1), no allocation) --------------------------------------- */

/* Number of entry parameters. */
IOTX_C_API iotx_error* iotx_transformer_num_inputs(const iotx_transformer* transformer,
                                                   size_t* out);

/* The name of input `index` (from the parameters, neff_input_names or "input<index>"). */
IOTX_C_API iotx_error* iotx_transformer_input_name(const iotx_transformer* transformer,
                                                   size_t index, const char** out);

/* *out = 1 if input `index` is sent to the device, 0 for a zero-sized parameter. */
IOTX_C_API iotx_error* iotx_transformer_is_fed(const iotx_transformer* transformer, size_t index,
                                               int* out);

/* *out = 1 if input `index` has a spec (a reshape + transpose), 0 if it is copied unchanged. */
IOTX_C_API iotx_error* iotx_transformer_has_transpose(const iotx_transformer* transformer,
                                                      size_t index, int* out);

/* *out = 0 when the device layout of input `index` is its input layout (no spec, or a spec
 * that only moves size-1 dims such as "1,24|1,0"): applying it in place is free, and a
 * runtime may hand the user's buffer to the device as is. */
IOTX_C_API iotx_error* iotx_transformer_changes_layout(const iotx_transformer* transformer,
                                                       size_t index, int* out);

/* Bytes of the device-layout buffer of input `index` (equal to the input's bytes). */
IOTX_C_API iotx_error* iotx_transformer_output_bytes(const iotx_transformer* transformer,
                                                     size_t index, size_t* out);

/* Rank of the device-side shape of input `index`. */
IOTX_C_API iotx_error* iotx_transformer_output_rank(const iotx_transformer* transformer,
                                                    size_t index, size_t* out);

/* The device-side shape of input `index`: writes up to `capacity` dims to `dims` and the rank
 * to *rank. A capacity smaller than the rank is an error (IOTX_E401) that still sets *rank. */
IOTX_C_API iotx_error* iotx_transformer_output_shape(const iotx_transformer* transformer,
                                                     size_t index, int64_t* dims,
                                                     size_t capacity, size_t* rank);

/* Bytes a range of input `index` (IOTX_APPLY_RANGE) should span to cost about its share of the
 * whole: thinner ranges read the source sparsely (one cache line per few output bytes). */
IOTX_C_API iotx_error* iotx_transformer_range_granule(const iotx_transformer* transformer,
                                                      size_t index, size_t* out);

/* Number of io_transposes entries that matched no parameter and were ignored
 * (IOTX_BUILD_IGNORE_UNMATCHED_SPECS), and the name of ignored entry `index`. */
IOTX_C_API iotx_error* iotx_transformer_num_ignored_specs(const iotx_transformer* transformer,
                                                          size_t* out);
IOTX_C_API iotx_error* iotx_transformer_ignored_spec(const iotx_transformer* transformer,
                                                     size_t index, const char** out);

/* What was built, as `iotx plan` prints it: per input its name, shapes, spec and the kernel's
 * plan. snprintf-style: writes at most capacity - 1 bytes and a NUL to `buffer` (NULL is
 * allowed with capacity 0) and sets *length to the full text's length without the NUL, so
 * a caller may ask with capacity 0 first and call again with *length + 1. A short buffer is
 * not an error. Allocates (not for the hot path). */
IOTX_C_API iotx_error* iotx_transformer_describe(const iotx_transformer* transformer,
                                                 char* buffer, size_t capacity, size_t* length);

/* ---- feeding inputs ---------------------------------------------------------------------- */

/* The caller's parallel-for: must call task(task_context, i) exactly once for every i in
 * [0, count), on any of its threads in any order, and return only once all calls have
 * returned. iotx never calls it from inside one of its tasks. A task needs up to 384 KiB of
 * free stack (the kernels' staging blocks live there, not on the heap), as does a thread
 * that applies by itself; default pthread and oneTBB stacks (8 and 4 MiB) have it. */
typedef void (*iotx_task_fn)(void* task_context, size_t index);
typedef void (*iotx_parallel_for_fn)(void* context, size_t count, iotx_task_fn task,
                                     void* task_context);

/* iotx_apply_options.flags: write only the output bytes [range_offset, range_offset +
 * range_length) (iotx_transformer_apply_ex only). */
#define IOTX_APPLY_RANGE 0x1u

/* How one apply call runs. Zero-initialized fields (IOTX_APPLY_OPTIONS_INIT) are defaults. */
typedef struct iotx_apply_options {
  size_t struct_size;                /* sizeof(iotx_apply_options) */
  uint32_t flags;                    /* IOTX_APPLY_* bits; others must be 0 */
  /* Upper bound on threads: 0 = iotx's choice, 1 = the calling thread only (no oneTBB call),
   * n = at most n. */
  uint32_t max_threads;
  /* When not NULL, iotx's parallel work is handed to this function and iotx creates no
   * thread; with max_threads 0 the work is split for the machine's hardware threads. */
  iotx_parallel_for_fn parallel_for;
  void* parallel_for_context;        /* passed to parallel_for as `context` */
  /* With IOTX_APPLY_RANGE: the bytes of the device-layout output to write, any offsets;
   * dst_size must equal range_length. Ranges covering the output give exactly the whole
   * output's bytes, and may run on different threads at once. */
  size_t range_offset;
  size_t range_length;
} iotx_apply_options;
#define IOTX_APPLY_OPTIONS_INIT {sizeof(iotx_apply_options), 0u, 0u, NULL, NULL, 0, 0}

/* Writes the device layout of input `index` from src (src_size bytes) into dst (dst_size
 * bytes). Buffers must not overlap, except in place (src == dst) for an input whose layout
 * does not change (iotx_transformer_changes_layout), which costs nothing. No heap allocation. */
IOTX_C_API iotx_error* iotx_transformer_apply(const iotx_transformer* transformer, size_t index,
                                              const void* src, size_t src_size, void* dst,
                                              size_t dst_size);

/* iotx_transformer_apply with options (NULL: the defaults). With IOTX_APPLY_RANGE, src is the
 * whole input and dst receives range_length bytes of the output; an input whose layout does
 * not change may name its own bytes (dst == src + range_offset), free. A range allocates a
 * little for planning its pieces. */
IOTX_C_API iotx_error* iotx_transformer_apply_ex(const iotx_transformer* transformer,
                                                 size_t index, const void* src,
                                                 size_t src_size, void* dst, size_t dst_size,
                                                 const iotx_apply_options* options);

/* All inputs of one inference (arrays of `count` entries, count = num_inputs), in parallel.
 * Every argument is checked before anything is written, including that no destination shares
 * a byte with any other buffer of the batch (sources may share bytes). No heap allocation up
 * to 64 inputs (above, one reused per-thread array for the overlap check). */
IOTX_C_API iotx_error* iotx_transformer_apply_all(const iotx_transformer* transformer,
                                                  const void* const* srcs,
                                                  const size_t* src_sizes, void* const* dsts,
                                                  const size_t* dst_sizes, size_t count);

/* iotx_transformer_apply_all with options (NULL: the defaults; IOTX_APPLY_RANGE is refused). */
IOTX_C_API iotx_error* iotx_transformer_apply_all_ex(const iotx_transformer* transformer,
                                                     const void* const* srcs,
                                                     const size_t* src_sizes,
                                                     void* const* dsts, const size_t* dst_sizes,
                                                     size_t count,
                                                     const iotx_apply_options* options);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* IOTX_IOTX_H_ */
