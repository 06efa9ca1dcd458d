// Applying required transposes as inputs are fed (SPEC section 7; docs/runtime.md).
//
// A runtime builds one InputTransformer per compiled model, then per inference turns user
// buffers into device-layout buffers: whole (Apply, ApplyAll) or in byte ranges of the output
// (ApplyRange, for feeding a device in DMA-sized pieces). All planning happens at
// construction; Apply and ApplyAll do no planning and no heap allocation on success. A
// transformer is immutable: any number of threads may query and apply on one transformer at
// the same time, and copies share the same state. Nothing here throws.
//
// Public: the types in this header. What a transformer holds (runtime::TransformerState) is
// internal to src/runtime and shared with the C API (iotx/iotx.h), which has the same calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "iotx/dims.h"
#include "iotx/export.h"
#include "iotx/plan.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx {

namespace runtime {
struct TransformerState;  // internal (src/runtime/transformer_internal.h)
}  // namespace runtime

// One entry parameter as the user feeds it: row-major `shape` of `element_size`-byte elements.
struct IOTX_API ParameterDesc {
  std::string name;  // frontend name; matched against input_name in FromSpecs
  Dims shape;        // dims >= 0, rank <= 64
  size_t element_size = 0;  // bytes, >= 1
};

// The frontend attributes the wrapper wrote on the AwsNeuronNeff custom-call.
struct IOTX_API NeffAttributes {
  std::string valid_inputs;        // "1,1,0": 1 for a fed parameter, 0 for a zero-sized one
  std::string required_transpose;  // "3,2048,2,128|0,3,2,1;;"
  std::string neff_input_names;    // "input0,input1,input2"; empty = not given
};

// A caller's buffer: `size` bytes at `data` (any alignment; null only when size is 0).
struct IOTX_API ConstBuffer {
  const void* data = nullptr;
  size_t size = 0;  // bytes
};
struct IOTX_API MutableBuffer {
  void* data = nullptr;
  size_t size = 0;  // bytes
};

// How a transformer is built.
struct IOTX_API BuildOptions {
  // Threads, stores and device generation of every input's plan. A runtime that feeds on its
  // own threads (ExecuteOptions::parallel_for or max_threads = 1) sets plan.start_workers =
  // false, so that building starts no oneTBB thread either.
  PlanOptions plan;
  // FromSpecs: an io_transposes entry whose input_name matches no parameter is an error
  // (kUnknownInput: its input would reach the device in the wrong layout) unless this is set;
  // then the entry is ignored and listed by ignored_specs().
  bool ignore_unmatched_specs = false;
};

class IOTX_API InputTransformer {
 public:
  // From the custom-call's attributes plus each parameter's shape and element size, in
  // parameter-number order. ParameterDesc::name may be empty: the names then come from
  // neff_input_names (which wins when both are given and differ: it is what the NEFF expects).
  [[nodiscard]] static Expected<InputTransformer> FromAttributes(
      const NeffAttributes& attributes, std::span<const ParameterDesc> parameters,
      const BuildOptions& options = {});

  // From an io_transposes map plus uniquely named parameters (in parameter-number order).
  // Zero-sized parameters are not fed, as the wrapper's valid_inputs marks them.
  [[nodiscard]] static Expected<InputTransformer> FromSpecs(
      const SpecMap& specs, std::span<const ParameterDesc> parameters,
      const BuildOptions& options = {});

  // An empty transformer (no inputs), as a moved-from one is.
  InputTransformer() = default;

  // Entry parameters (0 for an empty transformer).
  [[nodiscard]] size_t num_inputs() const noexcept;

  // Per-input queries, checked: kIndexOutOfRange for index >= num_inputs(). Views stay valid
  // as long as this transformer or a copy of it lives.
  [[nodiscard]] Expected<std::string_view> name(size_t index) const;
  // False for a zero-sized parameter (valid_inputs flag 0): nothing is sent to the device.
  [[nodiscard]] Expected<bool> is_fed(size_t index) const;
  // True when the parameter has a spec; false means its bytes are copied unchanged.
  [[nodiscard]] Expected<bool> has_transpose(size_t index) const;
  // False when the device layout equals the input's (no spec, or a spec that only moves
  // size-1 dims such as "4,6|0,1" or "1,24|1,0"): applying it in place (src == dst) is free.
  [[nodiscard]] Expected<bool> changes_layout(size_t index) const;
  [[nodiscard]] Expected<std::span<const int64_t>> input_shape(size_t index) const;
  // The device-side shape: the reshape dims permuted, or the input shape without a spec.
  [[nodiscard]] Expected<std::span<const int64_t>> output_shape(size_t index) const;
  [[nodiscard]] Expected<size_t> element_size(size_t index) const;  // bytes
  [[nodiscard]] Expected<size_t> input_bytes(size_t index) const;
  // Equals input_bytes: a transpose moves bytes, it never adds or drops any.
  [[nodiscard]] Expected<size_t> output_bytes(size_t index) const;
  // Bytes an ApplyRange should span to cost about its share of Apply (ExecuteRange's
  // RangeGranule): thinner ranges read the source sparsely.
  [[nodiscard]] Expected<size_t> range_granule(size_t index) const;

  // io_transposes names FromSpecs ignored under BuildOptions::ignore_unmatched_specs.
  [[nodiscard]] std::span<const std::string> ignored_specs() const noexcept;

  // Writes the device layout of input `index` from `src` into `dst`. Sizes must equal
  // input_bytes / output_bytes. Buffers must not overlap, except that an input whose layout
  // does not change may be applied in place (src.data == dst.data), which costs nothing.
  // `options` chooses the threads of this call (the calling thread only, a cap, or the
  // caller's parallel-for, see ExecuteOptions).
  [[nodiscard]] Status Apply(size_t index, ConstBuffer src, MutableBuffer dst,
                             const ExecuteOptions& options = {}) const;

  // Writes output bytes [offset, offset + dst.size) of input `index` into dst, reading the
  // whole input `src` (input_bytes). Ranges that cover the output give exactly Apply's bytes
  // and may run on different threads at once. dst must not overlap src, except that an input
  // whose layout does not change may name its own bytes (dst.data == src.data + offset), free.
  [[nodiscard]] Status ApplyRange(size_t index, ConstBuffer src, size_t offset,
                                  MutableBuffer dst, const ExecuteOptions& options = {}) const;

  // All inputs of one inference. `srcs` and `dsts` have num_inputs() entries each. Every
  // argument is checked before anything is written, including that no destination shares a
  // byte with any other buffer of the batch (inputs may run in parallel).
  [[nodiscard]] Status ApplyAll(std::span<const ConstBuffer> srcs,
                                std::span<const MutableBuffer> dsts,
                                const ExecuteOptions& options = {}) const;

  // What was built, as `iotx plan` prints it: per input its name, shapes, spec and the
  // kernel's plan; then the ignored io_transposes names.
  [[nodiscard]] std::string Describe() const;

 private:
  explicit InputTransformer(std::shared_ptr<const runtime::TransformerState> state);
  std::shared_ptr<const runtime::TransformerState> state_;
};

}  // namespace iotx
