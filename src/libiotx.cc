// libiotx.so is its layers (core, fs, kernels, schema, runtime), linked whole; see
// src/CMakeLists.txt. A shared library target needs one source of its own: this is it.
