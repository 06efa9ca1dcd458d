/* A C99 program against the installed iotx.h and libiotx.so. */
#include <stdio.h>
#include <string.h>

#include <iotx/iotx.h>

int main(void) {
  const char* json = "[{\"input_name\": \"w\", \"reshape\": [2, 3], \"transpose\": [1, 0]}]";
  int64_t dims[2] = {2, 3};
  iotx_parameter param = {"w", dims, 2, 4};
  iotx_transformer* t = NULL;
  iotx_error* e = iotx_transformer_from_json(json, strlen(json), &param, 1, &t);
  if (e != NULL) {
    fprintf(stderr, "%s: %s\n", iotx_error_code(e), iotx_error_message(e));
    iotx_error_free(e);
    return 1;
  }
  const float src[6] = {0, 1, 2, 3, 4, 5};
  float dst[6];
  e = iotx_transformer_apply(t, 0, src, sizeof src, dst, sizeof dst);
  if (e != NULL) {
    iotx_error_free(e);
    return 1;
  }
  printf("c api %g %g %g %g %g %g\n", dst[0], dst[1], dst[2], dst[3], dst[4], dst[5]);
  iotx_transformer_free(t);
  return 0;
}
