// The tensors the producer commands transform, from .npy files, a pickle of {name: array}, a
// safetensors file or a sharded safetensors checkpoint, in one form: io::Tensor views into
// guarded read-only file mappings, grouped by the file they came from.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "files/mapped_file.h"
#include "io/safetensors.h"
#include "io/tensor.h"
#include "iotx/status.h"

namespace iotx::producer {

// One input file and what it holds.
struct SourceFile {
  std::filesystem::path path;
  std::shared_ptr<const files::MappedFile> mapping;
  bool safetensors = false;
  std::optional<io::SafetensorsMetadata> metadata;  // a safetensors file's __metadata__
  std::vector<size_t> tensors;                      // indices into TensorSet::tensors, in order
};

// A sharded safetensors checkpoint: model.safetensors.index.json beside its shards.
struct ShardIndex {
  std::filesystem::path path;  // the index file
  std::string text;            // its bytes, written unchanged into the output dir
};

struct TensorSet {
  std::vector<io::Tensor> tensors;  // every file's, in file order, files in order
  std::vector<size_t> source;       // per tensor: its file in `files`
  std::vector<SourceFile> files;    // sharded: in the order of their names
  bool from_safetensors = false;
  // The input's file name without its extension ("model" for model.safetensors, "inp-000"
  // for inp-000.p); "inputs" for a list of .npy files. Names a single safetensors output.
  std::string stem;
  std::optional<ShardIndex> index;  // set for a sharded checkpoint

  // kIoRead naming the file when a source file changed while it was read (MappedFile).
  Status CheckIntact(size_t file) const { return files[file].mapping->CheckIntact(); }
};

struct NpyInput {
  std::string name;
  std::filesystem::path file;
};

// Reads each .npy (zero-copy; a Fortran-ordered or big-endian one is described, not
// converted). Errors: kInvalidArgument for a name given twice; those of io::ParseNpy (kIoOpen
// for a missing file, kNpy*), naming the file and the input.
Expected<TensorSet> LoadNpyInputs(std::span<const NpyInput> inputs);

// Reads a pickle of {name: numpy array}, a safetensors file or a sharded checkpoint's
// model.safetensors.index.json (a name ending in ".index.json"), the others told apart by
// content (a pickle of protocol 2+ starts with the PROTO opcode 0x80, a safetensors header
// with '{' at byte 8), else by a .safetensors name, else read as a pickle. A .npy file here is
// kInvalidArgument (it needs a name: --input NAME=FILE); otherwise the errors of the readers
// and of LoadShardIndex, naming the file.
Expected<TensorSet> LoadTensorFile(const std::filesystem::path& file);

// Reads a pickle of {name: numpy array} (the compiler's inp-000.p). Errors: those of
// files::MappedFile::Open and io::ParsePickle, kIoRead when the file changed while read.
Expected<TensorSet> LoadPickleFile(const std::filesystem::path& file);

// Reads a sharded checkpoint: the index ({"metadata": {...}, "weight_map": {tensor: file}})
// and every shard it names (each a plain file name in the index's directory). Errors, each
// naming the index or the shard and the tensor: kJsonSyntax / kJsonTopLevel / kJsonType /
// kJsonMissingKey for a malformed index, kUnsafeName for a shard name that is a path,
// kIoOpen for a missing shard, the safetensors reader's errors, and kShardedCheckpoint when
// index and shards disagree (a tensor the index places in a shard that lacks it, a tensor
// found in two shards or in a shard the index does not place it in).
Expected<TensorSet> LoadShardIndex(const std::filesystem::path& index);

// True for a path named like a sharded checkpoint's index ("*.index.json").
bool IsShardIndexName(const std::filesystem::path& path);

}  // namespace iotx::producer
