#include "producer/tensor_set.h"

#include <string_view>
#include <unordered_set>
#include <utility>

#include "files/mapped_file.h"
#include "io/npy.h"
#include "io/pickle.h"
#include "producer/tensor_output.h"

namespace iotx::producer {
namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";
constexpr std::byte kPickleProto{0x80};  // PROTO, the first opcode of protocols 2-5
constexpr size_t kSafetensorsJsonStart = 8;  // after the little-endian u64 header length

Tensor FromArray(std::string name, const io::Array& array, bool in_mapping,
                 const std::filesystem::path& source) {
  return {std::move(name),    array.shape, array.descr, "",
          array.itemsize * 8, array.data,  in_mapping,  source};
}

Expected<TensorSet> FromPickle(const std::shared_ptr<const files::MappedFile>& file,
                               const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::vector<io::NamedArray> arrays,
                        io::ParsePickle(file->bytes(), file, path.string()));
  TensorSet set;
  set.stem = path.stem().string();
  for (io::NamedArray& named : arrays) {
    set.tensors.push_back(
        FromArray(std::move(named.name), named.array, InMapping(named.array.data, *file), path));
    set.owners.push_back(named.array.owner);
  }
  set.owners.push_back(file);
  return set;
}

Expected<TensorSet> FromSafetensors(const std::shared_ptr<const files::MappedFile>& file,
                                    const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(io::SafetensorsFile parsed,
                        io::ParseSafetensors(file->bytes(), file, path.string()));
  TensorSet set;
  set.stem = path.stem().string();
  set.from_safetensors = true;
  set.metadata = std::move(parsed.metadata);
  for (io::SafetensorsTensor& t : parsed.tensors) {
    Tensor tensor;
    tensor.name = std::move(t.name);
    tensor.shape = std::move(t.shape);
    // The reader accepted the dtype, so it has a bit width.
    tensor.element_bits = io::SafetensorsDTypeBits(t.dtype).value_or(0);
    if (auto dtype = io::DTypeFromSafetensors(t.dtype)) {
      tensor.descr = std::string(io::DescrForDType(*dtype));
    }
    tensor.dtype = std::move(t.dtype);
    tensor.data = t.data;
    tensor.in_file_mapping = true;
    tensor.source = path;
    set.tensors.push_back(std::move(tensor));
  }
  set.owners.push_back(std::move(parsed.owner));
  set.owners.push_back(file);
  return set;
}

}  // namespace

Expected<TensorSet> LoadNpyInputs(std::span<const NpyInput> inputs) {
  TensorSet set;
  set.stem = "inputs";
  std::unordered_set<std::string_view> seen;
  for (const NpyInput& input : inputs) {
    if (!seen.insert(input.name).second) {
      return Fail(Error(ErrorCode::kInvalidArgument,
                        "input \"" + input.name + "\" is given twice; give each once")
                      .InFile(input.file.string())
                      .AtKey(input.name));
    }
    auto mapped = files::MappedFile::Open(input.file);
    if (!mapped) return Fail(std::move(mapped).error().AtKey(input.name));
    const std::shared_ptr<const files::MappedFile>& file = *mapped;
    auto array = io::ParseNpy(file->bytes(), file, input.file.string());
    if (!array) return Fail(std::move(array).error().AtKey(input.name));
    set.tensors.push_back(FromArray(input.name, *array, InMapping(array->data, *file), input.file));
    set.owners.push_back(array->owner);
    set.owners.push_back(file);
  }
  return set;
}

Expected<TensorSet> LoadTensorFile(const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file, files::MappedFile::Open(path));
  const std::span<const std::byte> bytes = file->bytes();
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()),
                              std::min(bytes.size(), kNpyMagic.size()));
  if (head == kNpyMagic) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "this is a .npy file, which holds one unnamed tensor: give it as "
                      "--input NAME=" +
                          path.string())
                    .InFile(path.string()));
  }
  // A safetensors header is JSON that starts with '{' right after its 8-byte length. Anything
  // else that is not named .safetensors goes to the pickle reader, which names what it finds
  // (a forbidden global such as os.system, a protocol 0/1 pickle) instead of a safetensors
  // header length made of pickle opcodes.
  const bool safetensors_shape = bytes.size() > kSafetensorsJsonStart &&
                                 bytes[kSafetensorsJsonStart] == std::byte{'{'};
  if (!bytes.empty() && bytes[0] == kPickleProto) return FromPickle(file, path);
  if (safetensors_shape || path.extension() == ".safetensors") return FromSafetensors(file, path);
  return FromPickle(file, path);
}

}  // namespace iotx::producer
