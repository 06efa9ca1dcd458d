// Applying required transposes as inputs are fed (SPEC section 7).
//
// A runtime builds one InputTransformer per compiled model, then per inference turns user
// buffers into device-layout buffers. All planning happens at construction; Apply and
// ApplyAll do no planning and no heap allocation on success, and may be called from many
// threads at once on one transformer (it is immutable). Copies share the same state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/dims.h"
#include "iotx/export.h"
#include "iotx/plan.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx {

// One entry parameter as the user feeds it: row-major `shape` of `element_size`-byte elements.
struct IOTX_API ParameterDesc {
  std::string name;  // frontend name; matched against input_name in FromSpecs
  Dims shape;
  size_t element_size = 0;
};

// The frontend attributes the wrapper wrote on the AwsNeuronNeff custom-call.
struct IOTX_API NeffAttributes {
  std::string valid_inputs;        // "1,1,0"
  std::string required_transpose;  // "3,2048,2,128|0,3,2,1;;"
  std::string neff_input_names;    // "input0,input1,input2"; empty = not given
};

struct IOTX_API ConstBuffer {
  const void* data = nullptr;
  size_t size = 0;  // bytes
};
struct IOTX_API MutableBuffer {
  void* data = nullptr;
  size_t size = 0;  // bytes
};

class IOTX_API InputTransformer {
 public:
  // From the custom-call's attributes plus each parameter's shape and element size, in
  // parameter-number order. ParameterDesc::name may be empty: the names then come from
  // neff_input_names (which wins when both are given and differ: it is what the NEFF expects).
  static Expected<InputTransformer> FromAttributes(const NeffAttributes& attributes,
                                                   std::span<const ParameterDesc> parameters,
                                                   const PlanOptions& options = {});

  // From an io_transposes map plus named parameters (in parameter-number order). A spec whose
  // name matches no parameter is ignored and reported in `warnings` (as the wrapper does).
  // Zero-sized parameters are not fed, as the wrapper's valid_inputs marks them.
  static Expected<InputTransformer> FromSpecs(const SpecMap& specs,
                                              std::span<const ParameterDesc> parameters,
                                              const PlanOptions& options = {},
                                              std::vector<Warning>* warnings = nullptr);

  size_t num_inputs() const noexcept;
  const std::string& name(size_t index) const;
  // False for a zero-sized parameter (valid_inputs flag 0): nothing is sent to the device.
  bool is_fed(size_t index) const;
  // True when the parameter has a spec (its layout changes); false means a plain copy.
  bool has_transpose(size_t index) const;
  std::span<const int64_t> input_shape(size_t index) const;
  // The device-side shape: the reshape dims permuted, or the input shape without a spec.
  std::span<const int64_t> output_shape(size_t index) const;
  size_t input_bytes(size_t index) const;
  // Equals input_bytes: a transpose moves bytes, it never adds or drops any.
  size_t output_bytes(size_t index) const;

  // Writes the device layout of input `index` from `src` into `dst`. Sizes must equal
  // input_bytes / output_bytes. Buffers must not overlap, except that an input without a spec
  // may be applied in place (src.data == dst.data), which costs nothing.
  Status Apply(size_t index, ConstBuffer src, MutableBuffer dst) const;

  // All inputs of one inference, parallel across and within tensors. `srcs` and `dsts` have
  // num_inputs() entries each. Every argument is checked before anything is written.
  Status ApplyAll(std::span<const ConstBuffer> srcs, std::span<const MutableBuffer> dsts) const;

  // One line per input: name, fed, shapes, and the plan's kernel.
  std::string Describe() const;

  struct Input;  // internal

 private:
  friend Status ApplyAllArrays(const InputTransformer&, const void* const*, const size_t*,
                               void* const*, const size_t*);
  explicit InputTransformer(std::shared_ptr<const std::vector<Input>> inputs);
  const Input& At(size_t index) const;
  std::shared_ptr<const std::vector<Input>> inputs_;
};

}  // namespace iotx
