// What a built transformer holds, and the operations on it: shared by InputTransformer (the
// C++ class is a handle to this state) and the C API (iotx_transformer holds the same
// state), so neither reaches into the other and no internal shows in a public header.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/dims.h"
#include "iotx/plan.h"
#include "iotx/runtime.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx::runtime {

// What the runtime knows about one input, fixed at construction.
struct Input {
  std::string name;
  bool fed = true;
  std::optional<TransposeSpec> spec;
  // False when the device layout is the input's: no spec, a spec that only moves size-1 dims,
  // or no bytes. Such an input may be applied in place for free.
  bool changes_layout = false;
  Dims input_shape;
  Dims output_shape;
  size_t element_size = 0;
  size_t bytes = 0;
  PlanPtr plan;  // null when bytes == 0: there is nothing to move
};

struct TransformerState {
  std::vector<Input> inputs;
  std::vector<std::string> ignored_specs;  // io_transposes names that matched no parameter
};
using StatePtr = std::shared_ptr<const TransformerState>;

// Longest message a runtime error carries: longer ones keep their head and their tail (what
// was expected) around an elision mark. Echoed input is cut long before (names, attribute
// text); this bounds whatever else a message quotes (a spec of a million dims).
inline constexpr size_t kMaxMessageBytes = 1024;
// `text` cut to kMaxMessageBytes (on UTF-8 boundaries), and an error with its message cut.
std::string BoundedText(std::string text);
Error Bounded(Error error);

Expected<StatePtr> BuildFromAttributes(const NeffAttributes& attributes,
                                       std::span<const ParameterDesc> parameters,
                                       const BuildOptions& options);
Expected<StatePtr> BuildFromSpecs(const SpecMap& specs, std::span<const ParameterDesc> parameters,
                                  const BuildOptions& options);

// Input `index`, or kIndexOutOfRange naming the count (a null state has no inputs).
Expected<const Input*> Find(const TransformerState* state, size_t index);

// Input i's buffers of one batch, from spans (C++) or parallel arrays (C), so that neither
// side copies them into temporaries: nothing is allocated on the hot path.
struct BufferList {
  const ConstBuffer* src_buffers = nullptr;  // C++: spans of buffers
  const MutableBuffer* dst_buffers = nullptr;
  const void* const* srcs = nullptr;  // C: parallel arrays
  const size_t* src_sizes = nullptr;
  void* const* dsts = nullptr;
  const size_t* dst_sizes = nullptr;

  ConstBuffer Src(size_t i) const {
    return src_buffers != nullptr ? src_buffers[i] : ConstBuffer{srcs[i], src_sizes[i]};
  }
  MutableBuffer Dst(size_t i) const {
    return dst_buffers != nullptr ? dst_buffers[i] : MutableBuffer{dsts[i], dst_sizes[i]};
  }
};

// The operations of InputTransformer (runtime.h documents them), on a non-null state.
Status Apply(const TransformerState& state, size_t index, ConstBuffer src, MutableBuffer dst,
             const ExecuteOptions& options);
Status ApplyRange(const TransformerState& state, size_t index, ConstBuffer src, size_t offset,
                  MutableBuffer dst, const ExecuteOptions& options);
// `buffers` holds state.inputs.size() entries.
Status ApplyAll(const TransformerState& state, const BufferList& buffers,
                const ExecuteOptions& options);
std::string Describe(const TransformerState& state);

}  // namespace iotx::runtime
