// IOTX_API marks the symbols libiotx.so exports; everything else is hidden.
#pragma once

#if defined(_WIN32)
#define IOTX_API
#else
#define IOTX_API __attribute__((visibility("default")))
#endif
