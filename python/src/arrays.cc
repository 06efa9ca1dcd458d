#include "arrays.h"

#include <fmt/format.h>

#include <string>

#include "errors.h"
#include "iotx/dims.h"

namespace iotx::python {
namespace {

py::module_ Numpy() { return py::module_::import("numpy"); }

// `obj` as an int64: Python ints and anything with __index__ (numpy integers), not floats or
// bools. nullopt (the Python error cleared) for anything else; `overflow` is PyLong's sign of
// an int past int64, 0 otherwise.
std::optional<long long> IndexValue(PyObject* obj, int& overflow) {
  overflow = 0;
  PyObject* index = PyBool_Check(obj) ? nullptr : PyNumber_Index(obj);
  if (index == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  const long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  return v;
}

// The from_dlpack of the package `obj`'s class comes from (torch.from_dlpack for a
// torch.Tensor), or None where that package has none: results are numpy arrays then.
py::object CallersFromDlpack(py::handle obj) {
  try {
    const std::string module = py::str(py::type::handle_of(obj).attr("__module__"));
    py::module_ package = py::module_::import(module.substr(0, module.find('.')).c_str());
    if (py::hasattr(package, "from_dlpack")) return package.attr("from_dlpack");
  } catch (py::error_already_set&) {
    // A class whose package cannot be imported again: numpy's kind of result.
  }
  return py::none();
}

}  // namespace

ArrayArg AsArray(py::handle obj, const char* what) {
  ArrayArg arg{py::array(), py::none()};
  try {
    if (py::isinstance<py::array>(obj)) {
      arg.array = py::reinterpret_borrow<py::array>(obj);
    } else if (py::hasattr(obj, "__dlpack__")) {
      arg.array = Numpy().attr("from_dlpack")(obj);
      arg.from_dlpack = CallersFromDlpack(obj);
    } else if (PyBytes_Check(obj.ptr())) {
      arg.array = Numpy().attr("frombuffer")(obj, "uint8");
    } else {
      arg.array = Numpy().attr("asarray")(obj);
    }
  } catch (py::error_already_set& e) {
    Raise(ErrorCode::kInvalidArgument,
          fmt::format("{} must be a numpy array, an object with __dlpack__ on the CPU or one "
                      "with the buffer protocol: {}", what, e.what()));
  }
  // Object references are not bytes to move: a copy would not own them. (The descriptor's
  // NPY_ITEM_HASOBJECT flag, read directly: the Python attribute cost ~0.3 us a call.)
  constexpr char kHasObject = 0x01;
  if (py::detail::array_descriptor_proxy(py::detail::array_proxy(arg.array.ptr())->descr)->flags &
      kHasObject) {
    Raise(ErrorCode::kInvalidArgument, fmt::format("{} holds Python objects, not numbers", what));
  }
  return arg;
}

py::object ToCallerKind(py::array result, const ArrayArg& like) {
  if (like.from_dlpack.is_none()) return result;
  return like.from_dlpack(result);
}

std::vector<int64_t> ToDims(py::handle seq, const char* what) {
  std::vector<int64_t> dims;
  auto fail = [&](const std::string& why) {
    Raise(ErrorCode::kInvalidArgument, fmt::format("{} must be a sequence of ints: {}", what, why));
  };
  py::object items = py::reinterpret_steal<py::object>(PySequence_Fast(seq.ptr(), "not a sequence"));
  if (!items) {
    PyErr_Clear();
    fail(std::string(py::str(py::type::handle_of(seq).attr("__name__"))) + " is not a sequence");
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(items.ptr());
  if (static_cast<size_t>(n) > kMaxRank) {
    Raise(ErrorCode::kUnsupported,
          fmt::format("{} has {} entries, more than iotx's maximum rank {}", what, n, kMaxRank));
  }
  dims.reserve(static_cast<size_t>(n));
  PyObject** raw = PySequence_Fast_ITEMS(items.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) {
    int overflow = 0;
    const std::optional<long long> v = IndexValue(raw[i], overflow);
    if (!v) fail(fmt::format("item {} is {}", i, std::string(py::repr(raw[i]))));
    if (overflow != 0) fail(fmt::format("item {} does not fit in int64", i));
    dims.push_back(*v);
  }
  return dims;
}

std::vector<int64_t> Shape(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

std::vector<int64_t> Strides(const py::array& a) {
  return std::vector<int64_t>(a.strides(), a.strides() + a.ndim());
}

// numpy's _attempt_nocopy_reshape (C order): walk the old and new shapes in groups of equal
// product; a group of old dims must be contiguous among themselves to be re-split.
std::optional<std::vector<int64_t>> ReshapedStrides(std::span<const int64_t> shape,
                                                    std::span<const int64_t> strides,
                                                    std::span<const int64_t> new_shape,
                                                    int64_t item_size) {
  std::vector<int64_t> result(new_shape.size(), item_size);
  const std::optional<int64_t> count = CheckedProduct(shape);
  if (!count || *count == 0) {
    int64_t stride = item_size;  // nothing is read: any strides do
    for (size_t i = new_shape.size(); i-- > 0;) {
      result[i] = stride;
      stride *= std::max<int64_t>(new_shape[i], 1);
    }
    return result;
  }
  std::vector<int64_t> old_dims, old_strides;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1) {
      old_dims.push_back(shape[i]);
      old_strides.push_back(strides[i]);
    }
  }
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_shape.size() && oi < old_dims.size()) {
    int64_t np = new_shape[ni];
    int64_t op = old_dims[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= new_shape.size()) return std::nullopt;
        np *= new_shape[nj++];
      } else {
        if (oj >= old_dims.size()) return std::nullopt;
        op *= old_dims[oj++];
      }
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok) {
      if (old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]) return std::nullopt;
    }
    result[nj - 1] = old_strides[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) result[nk - 1] = result[nk] * new_shape[nk];
    ni = nj++;
    oi = oj++;
  }
  return result;  // trailing new dims are 1s: their stride never moves
}

py::array EmptyArray(const py::dtype& dtype, std::span<const int64_t> shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  return py::array(dtype, dims);
}

void* CheckOut(const ArrayArg& out, const py::dtype& dtype, std::span<const int64_t> shape) {
  const py::array& a = out.array;
  if (!py::detail::npy_api::get().PyArray_EquivTypes_(a.dtype().ptr(), dtype.ptr())) {
    Raise(ErrorCode::kInvalidArgument,
          fmt::format("out has dtype {} but the result is {}", std::string(py::str(py::handle(a.dtype()))),
                      std::string(py::str(py::handle(dtype)))));
  }
  const std::vector<int64_t> out_shape = Shape(a);
  if (!std::equal(out_shape.begin(), out_shape.end(), shape.begin(), shape.end())) {
    Raise(ErrorCode::kBufferSize, fmt::format("out has shape {} but the result is {}",
                                              ToString(out_shape), ToString(shape)));
  }
  if (!(a.flags() & py::array::c_style)) {
    Raise(ErrorCode::kInvalidArgument, "out must be C-contiguous");
  }
  // numpy marks arrays it imported through DLPack read-only although the exporter's memory is
  // the caller's own to write (a torch.Tensor passed as out=).
  if (!a.writeable() && out.from_dlpack.is_none()) {
    Raise(ErrorCode::kInvalidArgument, "out is read-only");
  }
  return const_cast<void*>(a.data());
}

int ThreadsArg(py::handle threads) {
  if (threads.is_none()) return 0;
  constexpr int kMostThreads = 1 << 16;
  int overflow = 0;
  const std::optional<long long> n = IndexValue(threads.ptr(), overflow);
  if (!n) {
    Raise(ErrorCode::kInvalidArgument,
          fmt::format("threads must be an int >= 1 or None (every core), not {}",
                      std::string(py::repr(threads))));
  }
  if (overflow < 0 || (overflow == 0 && *n < 1)) {
    Raise(ErrorCode::kInvalidArgument, "threads must be at least 1 (None: every core)");
  }
  // An upper bound: more than the machine has means every core.
  return overflow > 0 || *n > kMostThreads ? kMostThreads : static_cast<int>(*n);
}

}  // namespace iotx::python
