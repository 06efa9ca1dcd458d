// InputTransformer internals shared by transformer.cc and the C API.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "iotx/dims.h"
#include "iotx/plan.h"
#include "iotx/runtime.h"
#include "iotx/spec.h"

namespace iotx {

// What an InputTransformer knows about one input, fixed at construction.
struct InputTransformer::Input {
  std::string name;
  bool fed = true;
  std::optional<TransposeSpec> spec;
  Dims input_shape;
  Dims output_shape;
  size_t element_size = 0;
  size_t bytes = 0;
  PlanPtr plan;  // null when bytes == 0: there is nothing to move
};

// ApplyAll over parallel C arrays (n = num_inputs() entries each), so the C API needs no
// temporary vectors of buffers: nothing is allocated on the hot path.
Status ApplyAllArrays(const InputTransformer& transformer, const void* const* srcs,
                      const size_t* src_sizes, void* const* dsts, const size_t* dst_sizes);

}  // namespace iotx
