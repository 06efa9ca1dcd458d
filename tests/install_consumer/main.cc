// Uses the installed public headers and libiotx.so only.
#include <iostream>

#include <iotx/dims.h>
#include <iotx/dtype.h>
#include <iotx/status.h>
#include <iotx/version.h>

int main() {
  iotx::Dims dims = {3, 2048, 2, 128};
  auto dtype = iotx::ParseDType("bf16");
  if (!dtype) {
    std::cerr << dtype.error().ToString() << '\n';
    return 1;
  }
  std::cout << "iotx " << IOTX_VERSION_STRING << " " << iotx::ToString(dims) << " "
            << iotx::ElementSize(*dtype) << '\n';
  return 0;
}
