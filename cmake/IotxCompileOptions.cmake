# Warnings for iotx's own targets (never for dependencies).
add_library(iotx_warnings INTERFACE)
target_compile_options(iotx_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra>)

option(IOTX_WERROR "Treat warnings as errors" OFF)
if(IOTX_WERROR)
  target_compile_options(iotx_warnings INTERFACE -Werror)
endif()

# Python with numpy is the independent reference in the tests. Debian's python3-numpy lives
# beside /usr/bin/python3, which a pyenv or venv earlier on PATH would hide, so prefer it.
if(EXISTS /usr/bin/python3)
  set(IOTX_PYTHON_DEFAULT /usr/bin/python3)
else()
  find_program(IOTX_PYTHON_DEFAULT python3)
endif()
set(IOTX_PYTHON "${IOTX_PYTHON_DEFAULT}" CACHE FILEPATH "Python 3 with numpy, used by the tests")
