// Arrays coming from Python: numpy arrays, anything with __dlpack__ (PyTorch tensors, ...)
// and buffer-protocol objects, all seen as a numpy array over the caller's memory (no copy),
// plus what turns a result back into the caller's kind of object.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iotx::python {

namespace py = pybind11;

struct ArrayArg {
  py::array array;      // a view of the caller's memory
  py::object from_dlpack;  // the caller's library's from_dlpack, or None for numpy's own kind
};

// `obj` as a numpy array over the same memory: a numpy array itself, np.from_dlpack(obj)
// for objects with __dlpack__ (CPU memory), np.frombuffer(obj, uint8) for bytes (np.asarray
// would make it one string element) and np.asarray(obj) for the buffer protocol.
// `what` names the argument in errors (kInvalidArgument).
ArrayArg AsArray(py::handle obj, const char* what);

// `result` as the kind of object `like` came as (a torch.Tensor for a torch.Tensor).
py::object ToCallerKind(py::array result, const ArrayArg& like);

// A sequence of ints (list, tuple, numpy array) as int64s; kInvalidArgument naming `what`.
std::vector<int64_t> ToDims(py::handle seq, const char* what);

// A threads= argument: None gives 0 (every core), an int >= 1 itself (at most 65536).
// kInvalidArgument for anything else (floats, strings, bools, 0).
int ThreadsArg(py::handle threads);

std::vector<int64_t> Shape(const py::array& a);
std::vector<int64_t> Strides(const py::array& a);

// Byte strides of `a` viewed with `new_shape` (C order) without a copy, or nullopt when the
// view cannot exist (numpy's reshape would copy then). The element counts must be equal.
std::optional<std::vector<int64_t>> ReshapedStrides(std::span<const int64_t> shape,
                                                    std::span<const int64_t> strides,
                                                    std::span<const int64_t> new_shape,
                                                    int64_t item_size);

// An uninitialized C-contiguous numpy array.
py::array EmptyArray(const py::dtype& dtype, std::span<const int64_t> shape);

// Checks a caller's out= array: C-contiguous, writable, `dtype` and `shape` as given
// (kBufferSize for the shape, kInvalidArgument otherwise). Returns its data pointer.
void* CheckOut(const ArrayArg& out, const py::dtype& dtype, std::span<const int64_t> shape);

}  // namespace iotx::python
