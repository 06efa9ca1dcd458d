/* feed_inputs: how a C runtime uses iotx to feed a batch of inputs in device layout.
 *
 *   feed_inputs [--chunk BYTES] json IO_TRANSPOSES_JSON PARAM...
 *   feed_inputs [--chunk BYTES] attrs VALID_INPUTS REQUIRED_TRANSPOSE NEFF_INPUT_NAMES PARAM...
 *
 * PARAM is NAME:D0xD1x...:ELEMENT_SIZE (a scalar is NAME::ELEMENT_SIZE). Each input is filled
 * with the byte pattern (i * 31 + 7 * k) mod 256 (i = byte offset, k = input index), all
 * inputs are applied in one batch (or, with --chunk, each input in ranges of BYTES bytes of
 * its device layout, as a runtime streaming DMA-sized pieces would), and each output is
 * printed as
 *   <index> <name> fed=<0|1> shape=[d0,d1,...] bytes=<n> fnv1a=<hex>
 * so a test can recompute the same with numpy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotx/iotx.h"

enum { kMaxParams = 256, kMaxRank = 16 };

typedef struct {
  char name[256];
  int64_t dims[kMaxRank];
  iotx_parameter desc;
} param_storage;

static int parse_param(const char* text, param_storage* p) {
  const char* colon1 = strchr(text, ':');
  const char* colon2 = colon1 ? strchr(colon1 + 1, ':') : NULL;
  if (colon1 == NULL || colon2 == NULL || (size_t)(colon1 - text) >= sizeof(p->name)) return 0;
  memcpy(p->name, text, (size_t)(colon1 - text));
  p->name[colon1 - text] = '\0';
  size_t rank = 0;
  const char* s = colon1 + 1;
  while (s < colon2) {
    char* end = NULL;
    long long d = strtoll(s, &end, 10);
    if (end == s || rank == kMaxRank) return 0;
    p->dims[rank++] = (int64_t)d;
    s = end;
    if (*s == 'x') ++s;
  }
  p->desc.name = p->name;
  p->desc.dims = p->dims;
  p->desc.rank = rank;
  p->desc.element_size = (size_t)strtoull(colon2 + 1, NULL, 10);
  return 1;
}

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* Feeds input k in ranges of `chunk` bytes of its device layout: each range could go to the
 * device while the next is made. Here they land side by side in dst. */
static iotx_error* feed_in_chunks(const iotx_transformer* t, size_t k, const void* src,
                                  void* dst, size_t bytes, size_t chunk) {
  iotx_apply_options options = IOTX_APPLY_OPTIONS_INIT;
  size_t offset;
  options.flags = IOTX_APPLY_RANGE;
  for (offset = 0; offset < bytes; offset += chunk) {
    iotx_error* error;
    options.range_offset = offset;
    options.range_length = bytes - offset < chunk ? bytes - offset : chunk;
    error = iotx_transformer_apply_ex(t, k, src, bytes, (unsigned char*)dst + offset,
                                      options.range_length, &options);
    if (error != NULL) return error;
  }
  return NULL;
}

static int fail(iotx_error* error) {
  fprintf(stderr, "feed_inputs: %s: %s\n", iotx_error_code(error), iotx_error_message(error));
  iotx_error_free(error);
  return 1;
}

int main(int argc, char** argv) {
  static param_storage params[kMaxParams];
  iotx_parameter descs[kMaxParams];
  iotx_transformer* transformer = NULL;
  iotx_error* error = NULL;
  int first_param;
  size_t chunk = 0; /* 0: one batch */

  if (argc >= 3 && strcmp(argv[1], "--chunk") == 0) {
    chunk = (size_t)strtoull(argv[2], NULL, 10);
    if (chunk == 0) return 2;
    argv += 2;
    argc -= 2;
  }
  if (argc >= 3 && strcmp(argv[1], "json") == 0) {
    first_param = 3;
  } else if (argc >= 5 && strcmp(argv[1], "attrs") == 0) {
    first_param = 5;
  } else {
    fprintf(stderr,
            "usage: feed_inputs [--chunk BYTES] json IO_TRANSPOSES_JSON PARAM...\n"
            "       feed_inputs [--chunk BYTES] attrs VALID_INPUTS REQUIRED_TRANSPOSE "
            "NEFF_INPUT_NAMES PARAM...\n"
            "PARAM: NAME:D0xD1x...:ELEMENT_SIZE\n");
    return 2;
  }
  size_t n = (size_t)(argc - first_param);
  if (n > kMaxParams) return 2;
  for (size_t i = 0; i < n; ++i) {
    if (!parse_param(argv[first_param + (int)i], &params[i])) {
      fprintf(stderr, "feed_inputs: bad parameter '%s'\n", argv[first_param + (int)i]);
      return 2;
    }
    descs[i] = params[i].desc;
  }

  if (first_param == 3) {
    size_t json_size = 0;
    char* json = read_file(argv[2], &json_size);
    if (json == NULL) {
      fprintf(stderr, "feed_inputs: cannot read %s\n", argv[2]);
      return 1;
    }
    error = iotx_transformer_from_json(json, json_size, descs, n, &transformer);
    free(json);
  } else {
    error = iotx_transformer_from_attributes(argv[2], argv[3], argv[4], descs, n, &transformer);
  }
  if (error != NULL) return fail(error);

  size_t count = 0;
  if ((error = iotx_transformer_num_inputs(transformer, &count)) != NULL) return fail(error);

  /* One batch: the user's buffers in, device-layout buffers out. */
  const void* srcs[kMaxParams];
  void* dsts[kMaxParams];
  size_t sizes[kMaxParams];
  for (size_t k = 0; k < count; ++k) {
    if ((error = iotx_transformer_output_bytes(transformer, k, &sizes[k])) != NULL) {
      return fail(error);
    }
    unsigned char* src = malloc(sizes[k] ? sizes[k] : 1);
    for (size_t i = 0; i < sizes[k]; ++i) src[i] = (unsigned char)((i * 31 + 7 * k) & 0xff);
    srcs[k] = src;
    dsts[k] = malloc(sizes[k] ? sizes[k] : 1);
  }
  if (chunk == 0) {
    error = iotx_transformer_apply_all(transformer, srcs, sizes, dsts, sizes, count);
    if (error != NULL) return fail(error);
  } else {
    for (size_t k = 0; k < count; ++k) {
      error = feed_in_chunks(transformer, k, srcs[k], dsts[k], sizes[k], chunk);
      if (error != NULL) return fail(error);
    }
  }

  for (size_t k = 0; k < count; ++k) {
    int fed = 0;
    int64_t shape[kMaxRank];
    size_t rank = 0;
    if ((error = iotx_transformer_is_fed(transformer, k, &fed)) != NULL) return fail(error);
    if ((error = iotx_transformer_output_shape(transformer, k, shape, kMaxRank, &rank)) != NULL) {
      return fail(error);
    }
    uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a, 64-bit */
    const unsigned char* out = dsts[k];
    for (size_t i = 0; i < sizes[k]; ++i) hash = (hash ^ out[i]) * 0x100000001b3ull;
    printf("%zu %s fed=%d shape=[", k, params[k].name, fed);
    for (size_t d = 0; d < rank; ++d) printf(d ? ",%lld" : "%lld", (long long)shape[d]);
    printf("] bytes=%zu fnv1a=%016llx\n", sizes[k], (unsigned long long)hash);
    free((void*)srcs[k]);
    free(dsts[k]);
  }
  iotx_transformer_free(transformer);
  return 0;
}
