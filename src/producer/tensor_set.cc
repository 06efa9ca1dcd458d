#include "producer/tensor_set.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/text.h"
#include "files/read_text_file.h"
#include "io/npy.h"
#include "io/pickle.h"
#include "iotx/spec.h"

namespace iotx::producer {
namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";
constexpr std::byte kPickleProto{0x80};      // PROTO, the first opcode of protocols 2-5
constexpr size_t kSafetensorsJsonStart = 8;  // after the little-endian u64 header length
constexpr std::string_view kIndexSuffix = ".index.json";

// Adds `file`'s tensors to `set` as a new source file.
void AddFile(TensorSet& set, SourceFile file, std::vector<io::Tensor> tensors) {
  const size_t index = set.files.size();
  for (io::Tensor& tensor : tensors) {
    file.tensors.push_back(set.tensors.size());
    set.tensors.push_back(std::move(tensor));
    set.source.push_back(index);
  }
  set.files.push_back(std::move(file));
}

// A read that faulted on a truncated file parsed zeros: say what really happened.
Status CheckParsed(const std::shared_ptr<const files::MappedFile>& file) {
  return file->CheckIntact();
}

Status AddPickle(TensorSet& set, const std::shared_ptr<const files::MappedFile>& file,
                 const std::filesystem::path& path) {
  auto tensors = io::ParsePickle(file->bytes(), file, path.string());
  IOTX_RETURN_IF_ERROR(CheckParsed(file));
  if (!tensors) return Fail(std::move(tensors).error());
  AddFile(set, {path, file, false, std::nullopt, {}}, std::move(*tensors));
  return Ok();
}

Status AddSafetensors(TensorSet& set, const std::shared_ptr<const files::MappedFile>& file,
                      const std::filesystem::path& path) {
  auto parsed = io::ParseSafetensors(file->bytes(), file, path.string());
  IOTX_RETURN_IF_ERROR(CheckParsed(file));
  if (!parsed) return Fail(std::move(parsed).error());
  set.from_safetensors = true;
  AddFile(set, {path, file, true, std::move(parsed->metadata), {}}, std::move(parsed->tensors));
  return Ok();
}

Error IndexError(ErrorCode code, std::string message, const std::filesystem::path& index) {
  return Error(code, std::move(message)).InFile(index.string());
}

// A shard's name as the index gives it must be a file beside the index, nothing else: it also
// names the output file.
Status CheckShardName(const std::string& shard, const std::string& tensor,
                      const std::filesystem::path& index) {
  if (Status fit = CheckInputName(shard); !fit) {
    return Fail(IndexError(ErrorCode::kUnsafeName,
                           "weight_map names shard \"" + shard +
                               "\", which is not a plain file name beside the index",
                           index)
                    .AtKey(tensor));
  }
  return Ok();
}

struct ParsedIndex {
  std::map<std::string, std::vector<std::string>> shards;  // shard -> tensors, sorted by name
  std::unordered_map<std::string, std::string> weight_map;  // tensor -> shard
};

Expected<ParsedIndex> ParseIndex(const std::string& text, const std::filesystem::path& path) {
  // nlohmann keeps the last of repeated keys; a tensor listed twice in weight_map is a tensor
  // placed in two shards, so repeats are caught while parsing.
  std::string top_key, repeated;
  std::unordered_set<std::string> seen;
  const nlohmann::json::parser_callback_t watch = [&](int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && parsed.is_string()) {
      if (depth == 1) top_key = parsed.get<std::string>();
      if (depth == 2 && top_key == "weight_map" && !seen.insert(parsed.get<std::string>()).second &&
          repeated.empty()) {
        repeated = parsed.get<std::string>();
      }
    }
    return true;
  };
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text, watch);
  } catch (const nlohmann::json::parse_error& e) {
    return Fail(IndexError(ErrorCode::kJsonSyntax,
                           "malformed JSON at byte " + std::to_string(e.byte), path));
  }
  if (!repeated.empty()) {
    return Fail(IndexError(ErrorCode::kShardedCheckpoint,
                           "weight_map lists the tensor more than once, so it would be in two "
                           "shards",
                           path)
                    .AtKey(repeated));
  }
  if (!document.is_object()) {
    return Fail(IndexError(ErrorCode::kJsonTopLevel,
                           std::string("the index is ") + document.type_name() +
                               ", expected an object with \"metadata\" and \"weight_map\"",
                           path));
  }
  const auto map = document.find("weight_map");
  if (map == document.end()) {
    return Fail(
        IndexError(ErrorCode::kJsonMissingKey, "weight_map not found in json", path).AtKey("weight_map"));
  }
  if (!map->is_object()) {
    return Fail(IndexError(ErrorCode::kJsonType,
                           std::string("type must be object, but is ") + map->type_name(), path)
                    .AtKey("weight_map"));
  }
  if (const auto metadata = document.find("metadata");
      metadata != document.end() && !metadata->is_object() && !metadata->is_null()) {
    return Fail(IndexError(ErrorCode::kJsonType,
                           std::string("type must be object, but is ") + metadata->type_name(),
                           path)
                    .AtKey("metadata"));
  }
  ParsedIndex parsed;
  for (const auto& [tensor, shard] : map->items()) {
    if (!shard.is_string()) {
      return Fail(IndexError(ErrorCode::kJsonType,
                             std::string("type must be string, but is ") + shard.type_name(), path)
                      .AtKey(tensor));
    }
    const std::string name = shard.get<std::string>();
    IOTX_RETURN_IF_ERROR(CheckShardName(name, tensor, path));
    parsed.shards[name].push_back(tensor);
    parsed.weight_map.emplace(tensor, name);
  }
  if (parsed.shards.empty()) {
    return Fail(IndexError(ErrorCode::kShardedCheckpoint,
                           "weight_map is empty: the index names no shard", path)
                    .AtKey("weight_map"));
  }
  return parsed;
}

// Checks that the shard holds exactly the tensors the index places in it.
Status CheckShardContents(const TensorSet& set, const SourceFile& shard, const std::string& name,
                          const ParsedIndex& index, const std::filesystem::path& index_path,
                          std::unordered_map<std::string_view, std::string_view>& found_in) {
  std::unordered_set<std::string_view> present;
  for (size_t t : shard.tensors) {
    const std::string& tensor = set.tensors[t].name;
    present.insert(tensor);
    const auto placed = index.weight_map.find(tensor);
    if (placed == index.weight_map.end()) {
      return Fail(Error(ErrorCode::kShardedCheckpoint,
                        "the shard holds a tensor the index's weight_map does not list; every "
                        "tensor must be listed with its shard")
                      .InFile(shard.path.string())
                      .AtKey(tensor));
    }
    if (placed->second != name) {
      return Fail(Error(ErrorCode::kShardedCheckpoint,
                        "the shard holds the tensor, but the index places it in \"" +
                            placed->second + "\"")
                      .InFile(shard.path.string())
                      .AtKey(tensor));
    }
    if (auto [it, inserted] = found_in.emplace(tensor, name); !inserted) {
      return Fail(Error(ErrorCode::kShardedCheckpoint,
                        "the tensor is in two shards, \"" + std::string(it->second) +
                            "\" and \"" + name + "\"")
                      .InFile(index_path.string())
                      .AtKey(tensor));
    }
  }
  for (const std::string& tensor : index.shards.at(name)) {
    if (!present.contains(tensor)) {
      return Fail(Error(ErrorCode::kShardedCheckpoint,
                        "the index places the tensor in \"" + name + "\", which does not hold it")
                      .InFile(shard.path.string())
                      .AtKey(tensor));
    }
  }
  return Ok();
}

}  // namespace

bool IsShardIndexName(const std::filesystem::path& path) {
  return path.filename().string().ends_with(kIndexSuffix);
}

Expected<TensorSet> LoadShardIndex(const std::filesystem::path& index_path) {
  TensorSet set;
  IOTX_ASSIGN_OR_RETURN(std::string text, files::ReadTextFile(index_path.string()));
  IOTX_ASSIGN_OR_RETURN(ParsedIndex index, ParseIndex(text, index_path));
  const std::string name = index_path.filename().string();
  set.stem = name.substr(0, name.size() - kIndexSuffix.size());
  set.index = ShardIndex{index_path, std::move(text)};
  set.from_safetensors = true;
  const std::filesystem::path dir = index_path.parent_path();
  std::unordered_map<std::string_view, std::string_view> found_in;
  for (const auto& [shard, tensors] : index.shards) {
    const std::filesystem::path path = dir / shard;
    auto file = files::MappedFile::Open(path);
    if (!file) {
      Error error = std::move(file).error();
      error.message = "shard named in " + name + " (for \"" + tensors.front() + "\"" +
                      (tensors.size() > 1 ? " and " + std::to_string(tensors.size() - 1) +
                                                " other tensors"
                                          : std::string()) +
                      "): " + error.message;
      return Fail(std::move(error));
    }
    IOTX_RETURN_IF_ERROR(AddSafetensors(set, *file, path));
  }
  // Only now: the views in found_in point into the names of the tensors in `set`.
  size_t file = 0;
  for (const auto& [shard, tensors] : index.shards) {
    IOTX_RETURN_IF_ERROR(
        CheckShardContents(set, set.files[file++], shard, index, index_path, found_in));
  }
  return set;
}

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
    auto tensor = io::ParseNpy(file->bytes(), file, input.file.string());
    IOTX_RETURN_IF_ERROR(CheckParsed(file));
    if (!tensor) return Fail(std::move(tensor).error().AtKey(input.name));
    tensor->name = input.name;
    std::vector<io::Tensor> tensors;
    tensors.push_back(std::move(*tensor));
    AddFile(set, {input.file, file, false, std::nullopt, {}}, std::move(tensors));
  }
  return set;
}

Expected<TensorSet> LoadPickleFile(const std::filesystem::path& path) {
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file,
                        files::MappedFile::Open(path));
  TensorSet set;
  set.stem = path.stem().string();
  IOTX_RETURN_IF_ERROR(AddPickle(set, file, path));
  return set;
}

Expected<TensorSet> LoadTensorFile(const std::filesystem::path& path) {
  if (IsShardIndexName(path)) return LoadShardIndex(path);
  IOTX_ASSIGN_OR_RETURN(std::shared_ptr<const files::MappedFile> file,
                        files::MappedFile::Open(path));
  const std::span<const std::byte> bytes = file->bytes();
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()),
                              std::min(bytes.size(), kNpyMagic.size()));
  TensorSet set;
  set.stem = path.stem().string();
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
  const bool safetensors_shape =
      bytes.size() > kSafetensorsJsonStart && bytes[kSafetensorsJsonStart] == std::byte{'{'};
  if (!bytes.empty() && bytes[0] == kPickleProto) {
    IOTX_RETURN_IF_ERROR(AddPickle(set, file, path));
  } else if (safetensors_shape || path.extension() == ".safetensors") {
    IOTX_RETURN_IF_ERROR(AddSafetensors(set, file, path));
  } else {
    IOTX_RETURN_IF_ERROR(AddPickle(set, file, path));
  }
  return set;
}

}  // namespace iotx::producer
