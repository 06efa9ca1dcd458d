/* A C99 program against the installed iotx.h and libiotx.so, built with -std=c99 -pedantic
 * -Werror as a runtime integrator's code would be: every call of the C API with good, NULL
 * and hostile arguments, byte ranges against whole outputs, a feed through the caller's own
 * parallel-for during which iotx must start no thread. Prints its last line,
 * "c api 0 3 1 4 2 5", only when every check passed (the install test matches that line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iotx/iotx.h>

static int failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

/* NULL on success, else prints the error and counts a failure. */
#define OK(call)                                                                      \
  do {                                                                                \
    iotx_error* ok_error_ = (call);                                                   \
    if (ok_error_ != NULL) {                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,          \
              iotx_error_code(ok_error_), iotx_error_message(ok_error_));             \
      iotx_error_free(ok_error_);                                                     \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

/* An error with `code`: its value, its string and a message that does not repeat the code. */
static void expect_error(iotx_error* e, iotx_code code, int line) {
  char want[32];
  if (e == NULL) {
    fprintf(stderr, "FAIL line %d: expected error %d, got success\n", line, (int)code);
    ++failures;
    return;
  }
  if ((int)code >= 1100) {
    sprintf(want, "NCC_IHNW%03d", (int)code - 1100);
  } else if ((int)code >= 1000) {
    sprintf(want, "NCC_IIOT%03d", (int)code - 1000);
  } else {
    sprintf(want, "IOTX_E%03d", (int)code);
  }
  if (iotx_error_enum(e) != code || strcmp(iotx_error_code(e), want) != 0 ||
      iotx_error_message(e)[0] == '\0' || strstr(iotx_error_message(e), want) != NULL ||
      strlen(iotx_error_message(e)) > IOTX_MAX_MESSAGE_BYTES) {
    fprintf(stderr, "FAIL line %d: expected %s, got %s (%d): %s\n", line, want,
            iotx_error_code(e), (int)iotx_error_enum(e), iotx_error_message(e));
    ++failures;
  }
  iotx_error_free(e);
}
#define EXPECT_ERROR(call, code) expect_error((call), (code), __LINE__)

/* Threads of this process (Linux), or 0 when it cannot be read. */
static size_t count_threads(void) {
  char line[256];
  size_t threads = 0;
  FILE* f = fopen("/proc/self/status", "r");
  if (f == NULL) return 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "Threads:", 8) == 0) threads = (size_t)strtoul(line + 8, NULL, 10);
  }
  fclose(f);
  return threads;
}

/* A runtime's parallel-for; this one runs the tasks on the calling thread, in order. */
typedef struct {
  size_t calls;
  size_t tasks;
  int run_nothing; /* a broken pool */
} pool;

static void pool_parallel_for(void* context, size_t count, iotx_task_fn task, void* task_context) {
  pool* p = (pool*)context;
  size_t i;
  p->calls++;
  p->tasks += count;
  if (p->run_nothing) return;
  for (i = 0; i < count; ++i) task(task_context, i);
}

static iotx_transformer* from_json(const char* json, const iotx_parameter* params, size_t n) {
  iotx_transformer* t = NULL;
  OK(iotx_transformer_from_json(json, strlen(json), params, n, &t));
  return t;
}

/* The small model of the original consumer: "w" (2 x 3 f32) transposed. */
static int small_model(float out[6]) {
  const char* json = "[{\"input_name\": \"w\", \"reshape\": [2, 3], \"transpose\": [1, 0]}]";
  int64_t dims[2] = {2, 3};
  iotx_parameter param = {"w", dims, 2, 4};
  const float src[6] = {0, 1, 2, 3, 4, 5};
  iotx_transformer* t = from_json(json, &param, 1);
  if (t == NULL) return 0;
  OK(iotx_transformer_apply(t, 0, src, sizeof src, out, 6 * sizeof(float)));
  iotx_transformer_free(t);
  return 1;
}

static void versions_and_codes(void) {
  CHECK(iotx_version() == IOTX_VERSION_NUMBER);
  CHECK(strcmp(iotx_version_string(), IOTX_VERSION_STRING) == 0);
  CHECK(IOTX_VERSION_NUMBER ==
        IOTX_VERSION_MAJOR * 10000 + IOTX_VERSION_MINOR * 100 + IOTX_VERSION_PATCH);
  CHECK(IOTX_OK == 0 && IOTX_E100 == 100 && IOTX_E401 == 401 && IOTX_E901 == 901);
  CHECK(NCC_IIOT001 == 1001 && NCC_IHNW003 == 1103);
  CHECK(iotx_error_enum(NULL) == IOTX_OK);
  CHECK(strcmp(iotx_error_code(NULL), "") == 0 && strcmp(iotx_error_message(NULL), "") == 0);
  iotx_error_free(NULL);
  iotx_transformer_free(NULL);
}

static void building(void) {
  const char* json =
      "[{\"input_name\": \"w\", \"reshape\": [6, 4], \"transpose\": [1, 0]},"
      " {\"input_name\": \"ghost\", \"reshape\": [2], \"transpose\": [0]}]";
  int64_t dims[2] = {4, 6};
  int64_t negative[2] = {4, -6};
  iotx_parameter p = {"w", dims, 2, 4};
  iotx_parameter deep = {"w", dims, (size_t)-1, 4};
  iotx_parameter neg = {"w", negative, 2, 4};
  iotx_build_options options = IOTX_BUILD_OPTIONS_INIT;
  iotx_transformer* t = NULL;
  const char* name = NULL;
  size_t n = 0;
  char with_nul[] = "[]\0[]";

  /* A spec that matches no parameter is an error unless the caller opts out. */
  EXPECT_ERROR(iotx_transformer_from_json(json, strlen(json), &p, 1, &t), IOTX_E117);
  CHECK(t == NULL);
  options.flags = IOTX_BUILD_IGNORE_UNMATCHED_SPECS;
  OK(iotx_transformer_from_json_ex(json, strlen(json), &p, 1, &options, &t));
  OK(iotx_transformer_num_ignored_specs(t, &n));
  CHECK(n == 1);
  OK(iotx_transformer_ignored_spec(t, 0, &name));
  CHECK(name != NULL && strcmp(name, "ghost") == 0);
  EXPECT_ERROR(iotx_transformer_ignored_spec(t, 1, &name), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_ignored_spec(t, 0, NULL), IOTX_E400);
  iotx_transformer_free(t);
  t = NULL;

  /* Hostile arguments. */
  EXPECT_ERROR(iotx_transformer_from_json(with_nul, sizeof with_nul - 1, &p, 1, &t), IOTX_E100);
  EXPECT_ERROR(iotx_transformer_from_json("[] x", 4, &p, 1, &t), IOTX_E100);
  EXPECT_ERROR(iotx_transformer_from_json(NULL, 2, &p, 1, &t), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_json("[]", 2, &p, 1, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_json("[]", 2, NULL, 1, &t), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_json("[]", 2, &deep, 1, &t), IOTX_E403);
  EXPECT_ERROR(iotx_transformer_from_json("[]", 2, &neg, 1, &t), IOTX_E111);
  options.struct_size = 0;
  EXPECT_ERROR(iotx_transformer_from_json_ex("[]", 2, &p, 1, &options, &t), IOTX_E400);
  options.struct_size = sizeof options;
  options.flags = 0x8000u;
  EXPECT_ERROR(iotx_transformer_from_json_ex("[]", 2, &p, 1, &options, &t), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_attributes(NULL, "", "", &p, 1, &t), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_attributes("1", NULL, "", &p, 1, &t), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_from_attributes("1", "4,6|1,0;", "", &p, 1, &t), IOTX_E121);
  EXPECT_ERROR(iotx_transformer_from_attributes("1", "5,5|1,0", "", &p, 1, &t), NCC_IHNW003);
  options.flags = 0x8000u;
  EXPECT_ERROR(iotx_transformer_from_attributes_ex("1", "", "", &p, 1, &options, &t), IOTX_E400);
  options.flags = IOTX_BUILD_CALLER_THREADS;
  OK(iotx_transformer_from_attributes_ex("1", "", "", &p, 1, &options, &t));
  iotx_transformer_free(t);
  t = NULL;
  EXPECT_ERROR(iotx_transformer_from_attributes_ex("1", "", "", &p, 1, &options, NULL),
               IOTX_E400);
  CHECK(t == NULL);
}

static void queries(void) {
  int64_t dims[2] = {4, 6};
  int64_t zero[2] = {0, 5};
  iotx_parameter params[3] = {{NULL, dims, 2, 4}, {NULL, dims, 2, 4}, {NULL, zero, 2, 4}};
  iotx_transformer* t = NULL;
  const char* name = NULL;
  int flag = -1;
  size_t n = 0, rank = 0, length = 0;
  int64_t shape[4];
  char* text = NULL;
  char small[4];
  float buf[24];
  memset(buf, 0, sizeof buf);

  /* "1,24|1,0" only moves a size-1 dim: the layout does not change. */
  OK(iotx_transformer_from_attributes("1,1,0", "6,4|1,0;1,24|1,0;", "a,b,z", params, 3, &t));
  if (t == NULL) return;
  OK(iotx_transformer_num_inputs(t, &n));
  CHECK(n == 3);
  OK(iotx_transformer_input_name(t, 1, &name));
  CHECK(name != NULL && strcmp(name, "b") == 0);
  OK(iotx_transformer_has_transpose(t, 1, &flag));
  CHECK(flag == 1);
  OK(iotx_transformer_changes_layout(t, 1, &flag));
  CHECK(flag == 0);
  OK(iotx_transformer_changes_layout(t, 0, &flag));
  CHECK(flag == 1);
  OK(iotx_transformer_is_fed(t, 2, &flag));
  CHECK(flag == 0);
  OK(iotx_transformer_output_rank(t, 0, &rank));
  CHECK(rank == 2);
  OK(iotx_transformer_output_shape(t, 0, shape, 4, &rank));
  CHECK(rank == 2 && shape[0] == 4 && shape[1] == 6);
  OK(iotx_transformer_output_bytes(t, 0, &n));
  CHECK(n == 96);
  OK(iotx_transformer_range_granule(t, 0, &n));
  CHECK(n >= 1);
  /* In place for the input whose layout does not change: free, and accepted. */
  OK(iotx_transformer_apply(t, 1, buf, sizeof buf, buf, sizeof buf));
  EXPECT_ERROR(iotx_transformer_apply(t, 0, buf, sizeof buf, buf, sizeof buf), IOTX_E400);

  /* describe, snprintf-style. */
  OK(iotx_transformer_describe(t, NULL, 0, &length));
  CHECK(length > 0);
  text = (char*)malloc(length + 1);
  if (text != NULL) {
    OK(iotx_transformer_describe(t, text, length + 1, &n));
    CHECK(n == length && strlen(text) == length && strstr(text, "strategy:") != NULL);
    free(text);
  }
  OK(iotx_transformer_describe(t, small, sizeof small, &n));
  CHECK(n == length && strlen(small) == 3);

  /* NULL and hostile arguments on every query. */
  EXPECT_ERROR(iotx_transformer_num_inputs(NULL, &n), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_num_inputs(t, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_input_name(t, 3, &name), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_input_name(t, (size_t)-1, &name), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_input_name(NULL, 0, &name), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_input_name(t, 0, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_has_transpose(t, 3, &flag), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_has_transpose(t, 0, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_changes_layout(NULL, 0, &flag), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_is_fed(t, 9, &flag), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_output_rank(t, 3, &rank), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_output_rank(t, 0, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_output_shape(t, 0, shape, 1, &rank), IOTX_E401);
  CHECK(rank == 2);
  EXPECT_ERROR(iotx_transformer_output_bytes(t, 0, NULL), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_range_granule(t, 3, &n), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_num_ignored_specs(NULL, &n), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_describe(NULL, NULL, 0, &n), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_describe(t, NULL, 8, &n), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_describe(t, small, sizeof small, NULL), IOTX_E400);
  iotx_transformer_free(t);
}

/* A 4 MiB transpose: large enough that iotx would use threads. */
static void feeding(void) {
  enum { kN = 1024, kBytes = kN * kN * 4, kRange = 100003 };
  const char* json =
      "[{\"input_name\": \"x\", \"reshape\": [1024, 1024], \"transpose\": [1, 0]}]";
  int64_t dims[2] = {kN, kN};
  iotx_parameter p = {"x", dims, 2, 4};
  iotx_build_options build = IOTX_BUILD_OPTIONS_INIT;
  iotx_transformer* t = NULL;
  const size_t threads_before = count_threads();
  unsigned char* src = (unsigned char*)malloc(kBytes);
  unsigned char* whole = (unsigned char*)malloc(kBytes);
  unsigned char* pieces = (unsigned char*)malloc(kBytes);
  iotx_apply_options options = IOTX_APPLY_OPTIONS_INIT;
  pool callers_pool = {0, 0, 0};
  const void* srcs[2];
  void* dsts[2];
  size_t sizes[2];
  size_t i, offset;
  int ok = 1;
  /* The runtime brings its own threads: building starts none either. */
  build.flags = IOTX_BUILD_CALLER_THREADS;
  OK(iotx_transformer_from_json_ex(json, strlen(json), &p, 1, &build, &t));
  if (threads_before != 0) CHECK(count_threads() == threads_before);
  if (t == NULL || src == NULL || whole == NULL || pieces == NULL) {
    CHECK(!"set-up");
    goto done;
  }
  for (i = 0; i < (size_t)kBytes; ++i) src[i] = (unsigned char)(i * 31 + (i >> 12));

  /* The caller's parallel-for: iotx hands it the work and starts no thread of its own. */
  options.parallel_for = pool_parallel_for;
  options.parallel_for_context = &callers_pool;
  OK(iotx_transformer_apply_ex(t, 0, src, kBytes, whole, kBytes, &options));
  CHECK(callers_pool.calls >= 1);
  for (i = 0; i < 16 && ok; ++i) {  /* spot-check the transpose */
    size_t r = (i * 97) % kN, c = (i * 389) % kN;
    ok = memcmp(whole + (c * kN + r) * 4, src + (r * kN + c) * 4, 4) == 0;
  }
  CHECK(ok);
  /* Ranges of an odd size, through the same pool, equal the whole output byte for byte. */
  options.flags = IOTX_APPLY_RANGE;
  for (offset = 0; offset < (size_t)kBytes; offset += kRange) {
    options.range_offset = offset;
    options.range_length = offset + kRange <= (size_t)kBytes ? kRange : kBytes - offset;
    OK(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces + offset, options.range_length,
                                 &options));
  }
  CHECK(memcmp(pieces, whole, kBytes) == 0);
  /* The calling thread only: the pool is not even called. */
  callers_pool.calls = 0;
  options.flags = 0;
  options.max_threads = 1;
  memset(pieces, 0, kBytes);
  OK(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces, kBytes, &options));
  CHECK(callers_pool.calls == 0);
  CHECK(memcmp(pieces, whole, kBytes) == 0);
  if (threads_before != 0) CHECK(count_threads() == threads_before);

  /* A pool that runs nothing gets an error, not a silent success. */
  callers_pool.run_nothing = 1;
  options.max_threads = 0;
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces, kBytes, &options), IOTX_E400);

  /* Hostile arguments. */
  options.struct_size = 0;
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces, kBytes, &options), IOTX_E400);
  options = (iotx_apply_options)IOTX_APPLY_OPTIONS_INIT;
  options.flags = IOTX_APPLY_RANGE;
  options.range_offset = kBytes - 2;
  options.range_length = 4;
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces, 4, &options), IOTX_E401);
  options.range_offset = 0;
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 0, src, kBytes, pieces, 5, &options), IOTX_E401);
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 0, src, kBytes, src + 8, 4, &options), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_apply_ex(NULL, 0, src, kBytes, pieces, 4, &options), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_apply_ex(t, 1, src, kBytes, pieces, 4, &options), IOTX_E402);
  EXPECT_ERROR(iotx_transformer_apply(t, 0, src, kBytes - 1, pieces, kBytes), IOTX_E401);
  EXPECT_ERROR(iotx_transformer_apply(t, 0, NULL, kBytes, pieces, kBytes), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_apply(t, 0, src, kBytes, src + 4, kBytes), IOTX_E400);
  srcs[0] = src;
  dsts[0] = pieces;
  sizes[0] = kBytes;
  EXPECT_ERROR(iotx_transformer_apply_all_ex(t, srcs, sizes, dsts, sizes, 1, &options),
               IOTX_E400); /* ranges are for one input */
  EXPECT_ERROR(iotx_transformer_apply_all(t, srcs, sizes, dsts, sizes, 2), IOTX_E400);
  EXPECT_ERROR(iotx_transformer_apply_all(t, NULL, sizes, dsts, sizes, 1), IOTX_E400);
  OK(iotx_transformer_apply_all(t, srcs, sizes, dsts, sizes, 1));
  CHECK(memcmp(pieces, whole, kBytes) == 0);

  /* iotx's own threads (the default): reported, not required (a 1-core machine has none). */
  OK(iotx_transformer_apply(t, 0, src, kBytes, pieces, kBytes));
  printf("threads: %lu before, %lu after a default feed\n", (unsigned long)threads_before,
         (unsigned long)count_threads());

done:
  free(src);
  free(whole);
  free(pieces);
  iotx_transformer_free(t);
}

/* Two inputs of one batch may not share a destination. */
static void batches(void) {
  const char* json = "[{\"input_name\": \"a\", \"reshape\": [4, 6], \"transpose\": [1, 0]}]";
  int64_t dims[2] = {4, 6};
  iotx_parameter params[2] = {{"a", dims, 2, 4}, {"b", dims, 2, 4}};
  iotx_transformer* t = from_json(json, params, 2);
  float a[24], b[24], out[24], out2[24];
  const void* srcs[2];
  void* dsts[2];
  size_t sizes[2] = {sizeof a, sizeof b};
  if (t == NULL) return;
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  srcs[0] = a;
  srcs[1] = b;
  dsts[0] = out;
  dsts[1] = out;
  EXPECT_ERROR(iotx_transformer_apply_all(t, srcs, sizes, dsts, sizes, 2), IOTX_E400);
  dsts[1] = a; /* the destination of b is the source of a */
  EXPECT_ERROR(iotx_transformer_apply_all(t, srcs, sizes, dsts, sizes, 2), IOTX_E400);
  dsts[1] = out2;
  OK(iotx_transformer_apply_all(t, srcs, sizes, dsts, sizes, 2));
  iotx_transformer_free(t);
}

int main(void) {
  float out[6];
  versions_and_codes();
  building();
  queries();
  feeding();
  batches();
  if (!small_model(out)) ++failures;
  if (failures != 0) {
    fprintf(stderr, "consumer_c: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c api %g %g %g %g %g %g\n", out[0], out[1], out[2], out[3], out[4], out[5]);
  return 0;
}
