// iotx.apply: one array into device layout with the permute kernel, read through its strides.
#include <pybind11/numpy.h>

#include <optional>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "iotx/plan.h"
#include "iotx/spec.h"
#include "runtime/plan_cache.h"

namespace iotx::python {
namespace {

constexpr const char* kApplyDoc = R"(apply(array, reshape, transpose, *, out=None, threads=None)

Puts `array` into device layout: the result equals numpy's
``np.ascontiguousarray(array.reshape(reshape).transpose(transpose))``, with shape
``[reshape[p] for p in transpose]`` and the same dtype, made by iotx's parallel SIMD permute
kernel with the GIL released.

array: a numpy array of any dtype (bfloat16 as ``<V2`` included), an object with
    ``__dlpack__`` in CPU memory (a torch.Tensor) or one with the buffer protocol. A
    non-contiguous view (``a.T``, ``a[::2]``, ``a[:, ::-1]``) is read through its strides,
    with no copy first (unless ``reshape`` cannot be a view of it, where numpy's reshape
    would copy too). The result is the same kind of object as ``array`` (numpy for the
    buffer protocol).
reshape, transpose: the spec, sequences of ints; product(reshape) must equal array.size.
out: optional C-contiguous, writable array of the result's shape and dtype, written in
    place and returned; it must not overlap ``array``.
threads: at most this many threads (default: every core oneTBB offers).

Raises iotx.Error with .code: NCC_IHNW003 (reshape does not fit the array), IOTX_E110 (not a
permutation), IOTX_E111 (negative dim), IOTX_E401 (out's shape), IOTX_E400 (other arguments).)";

std::vector<int64_t> DenseStrides(std::span<const int64_t> shape, int64_t item) {
  std::vector<int64_t> strides(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = item;
    item *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

py::object Apply(py::handle array, py::handle reshape, py::handle transpose, py::handle out,
                 py::handle threads) {
  ArrayArg in = AsArray(array, "array");
  TransposeSpec spec{Dims(ToDims(reshape, "reshape")), Dims(ToDims(transpose, "transpose"))};
  const std::vector<int64_t> shape = Shape(in.array);
  Check(CheckSpecFits(spec, shape, ""));

  PlanOptions options;
  options.max_threads = ThreadsArg(threads);

  const auto item = static_cast<int64_t>(in.array.itemsize());
  const std::vector<int64_t> dense = DenseStrides(spec.reshape, item);
  std::optional<std::vector<int64_t>> strides =
      ReshapedStrides(shape, Strides(in.array), spec.reshape, item);
  if (!strides) {
    // The one case with a copy: numpy's own reshape of this view would copy as well.
    in.array = py::module_::import("numpy").attr("ascontiguousarray")(in.array);
    strides = dense;
  }
  PlanPtr plan;
  if (*strides == dense) {
    plan = Unwrap(runtime::PlanCache::Global().GetOrCreate(spec.reshape, spec.transpose,
                                                           static_cast<size_t>(item), options));
  } else {
    plan = Unwrap(MakePlan(spec.reshape, *strides, spec.transpose, static_cast<size_t>(item), options));
  }

  const Dims device_shape = DeviceShape(spec);
  py::object result;
  void* dst = nullptr;
  if (out.is_none()) {
    py::array made = EmptyArray(in.array.dtype(), device_shape);
    dst = made.mutable_data();
    result = ToCallerKind(std::move(made), in);
  } else {
    const ArrayArg target = AsArray(out, "out");
    dst = CheckOut(target, in.array.dtype(), device_shape);
    result = py::reinterpret_borrow<py::object>(out);
  }
  const void* src = in.array.data();
  Status status;
  {
    py::gil_scoped_release release;
    status = Execute(*plan, src, dst);
  }
  Check(status);
  return result;
}

}  // namespace

void BindApply(py::module_& m) {
  m.def("apply", &Apply, kApplyDoc, py::arg("array"), py::arg("reshape"), py::arg("transpose"),
        py::kw_only(), py::arg("out") = py::none(), py::arg("threads") = py::none());
}

}  // namespace iotx::python
