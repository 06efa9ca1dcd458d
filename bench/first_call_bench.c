/* The first InputTransformer call of a process against its later ones, through the C API, next
 * to the first and later memcpy of the same bytes in the same process: whether the first
 * call is an outlier of iotx's or the cold caches and TLB every first copy meets.
 *
 * Builds a transformer for the source document's example (6144 x 256 bf16, reshape
 * 3,2048,2,128, transpose 0,3,2,1), then times Apply 52 times and memcpy 52 times on buffers
 * of its size, each pair of buffers written before (so no first touch of a page is timed), in
 * the order given: `iotx_first_call_bench` Apply first, `iotx_first_call_bench memcpy-first`
 * memcpy first. Prints the build, the first and second call and the median of the other 50
 * of each, in milliseconds. Run it several times: each run is one fresh process.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iotx/iotx.h"

enum { kCalls = 52 };

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int Less(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* First, second and median of the rest, in milliseconds (sorts the rest in place). */
static void Summary(const char* what, double* seconds) {
  qsort(seconds + 2, kCalls - 2, sizeof(double), Less);
  printf("%s first %.3f second %.3f median %.3f ms", what, seconds[0] * 1e3, seconds[1] * 1e3,
         seconds[2 + (kCalls - 2) / 2] * 1e3);
}

static int TimeMemcpy(char* dst, const char* src, size_t bytes, double* seconds) {
  for (int i = 0; i < kCalls; ++i) {
    const double t0 = Now();
    memcpy(dst, src, bytes);
    seconds[i] = Now() - t0;
  }
  return dst[bytes - 1] == src[bytes - 1] ? 0 : 1;
}

int main(int argc, char** argv) {
  const int memcpy_first = argc > 1 && strcmp(argv[1], "memcpy-first") == 0;
  if (argc > 1 && !memcpy_first) {
    fprintf(stderr, "usage: iotx_first_call_bench [memcpy-first]\n");
    return 2;
  }
  static const char kSpecs[] =
      "[{\"input_name\": \"x\", \"reshape\": [3, 2048, 2, 128], \"transpose\": [0, 3, 2, 1]}]";
  const int64_t dims[2] = {6144, 256};
  const iotx_parameter parameter = {"x", dims, 2, 2};
  const size_t bytes = 6144 * 256 * 2;
  char* src = malloc(bytes);
  char* dst = malloc(bytes);
  char* copy_src = malloc(bytes);
  char* copy_dst = malloc(bytes);
  if (!src || !dst || !copy_src || !copy_dst) return 1;
  /* Non-zero fills: a compiler may turn malloc + memset(0) into calloc, whose pages are then
   * first touched inside the timed calls. */
  memset(src, 1, bytes);
  memset(dst, 2, bytes);
  memset(copy_src, 1, bytes);
  memset(copy_dst, 2, bytes);

  double copies[kCalls], applies[kCalls];
  if (memcpy_first && TimeMemcpy(copy_dst, copy_src, bytes, copies) != 0) return 1;
  iotx_transformer* transformer = NULL;
  const double t0 = Now();
  iotx_error* error =
      iotx_transformer_from_json(kSpecs, sizeof kSpecs - 1, &parameter, 1, &transformer);
  const double build = Now() - t0;
  for (int i = 0; i < kCalls && !error; ++i) {
    const double t = Now();
    error = iotx_transformer_apply(transformer, 0, src, bytes, dst, bytes);
    applies[i] = Now() - t;
  }
  if (error) {
    fprintf(stderr, "iotx_first_call_bench: %s %s\n", iotx_error_code(error),
            iotx_error_message(error));
    iotx_error_free(error);
    iotx_transformer_free(transformer);
    return 1;
  }
  if (!memcpy_first && TimeMemcpy(copy_dst, copy_src, bytes, copies) != 0) return 1;

  printf("build %.2f ms | ", build * 1e3);
  Summary("apply", applies);
  printf(" | ");
  Summary("memcpy", copies);
  printf("\n");
  iotx_transformer_free(transformer);
  free(src);
  free(dst);
  free(copy_src);
  free(copy_dst);
  return 0;
}
