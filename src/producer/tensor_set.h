// The tensors `iotx apply` transforms, from .npy files, a pickle of {name: array} or a
// safetensors checkpoint, in one form: views into read-only file mappings where possible.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "iotx/dims.h"
#include "iotx/status.h"

namespace iotx::producer {

struct Tensor {
  std::string name;
  Dims shape;
  std::string descr;        // numpy type string ("<f4", "<V2"); empty for a type numpy lacks ("F4")
  std::string dtype;        // safetensors dtype name ("F32", "BF16"); empty unless read from one
  size_t element_bits = 0;  // 8 * bytes, or 4 / 6 for safetensors' packed types
  std::span<const std::byte> data;  // C order, little-endian
  bool in_file_mapping = false;     // `data` is a view into a file mapping, not a heap copy
  std::filesystem::path source;     // the file it came from, for diagnostics
};

struct TensorSet {
  std::vector<Tensor> tensors;                      // in the source's order
  std::optional<io::SafetensorsMetadata> metadata;  // a safetensors input's __metadata__
  bool from_safetensors = false;
  // The input's file name without its extension ("model" for model.safetensors, "inp-000"
  // for inp-000.p); "inputs" for a list of .npy files. Names a safetensors output.
  std::string stem;
  std::vector<std::shared_ptr<const void>> owners;  // keep every tensor's data valid
};

struct NpyInput {
  std::string name;
  std::filesystem::path file;
};

// Reads each .npy (zero-copy unless Fortran-ordered or big-endian). Errors: kInvalidArgument
// for a name given twice; those of io::ReadNpy (kIoOpen for a missing file, kNpy*), naming
// the file and the input.
Expected<TensorSet> LoadNpyInputs(std::span<const NpyInput> inputs);

// Reads a pickle of {name: numpy array} or a safetensors file, told apart by
// io::DetectTensorFileFormat (the safetensors structure, then the pickle magic, then a
// .safetensors name, else read as a pickle). A .npy file here is
// kInvalidArgument (it needs a name: --input NAME=FILE); otherwise the errors of the readers,
// naming the file.
Expected<TensorSet> LoadTensorFile(const std::filesystem::path& file);

}  // namespace iotx::producer
