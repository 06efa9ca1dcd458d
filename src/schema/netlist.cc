// Reading hlo_netlist.json (SPEC section 3) in one walk that keeps only the names: no JSON
// document is built.
#include <map>
#include <new>
#include <optional>
#include <utility>

#include "core/text.h"
#include "files/read_text_file.h"
#include "schema/json_document.h"
#include "schema/netlist_check.h"

namespace iotx {
namespace schema {
namespace {

// Real netlists have tens of partitions (one per subgraph of a model); each costs about 200
// bytes while it is read, so this bounds a file of empty partitions ("{},{},...") to ~13 MiB.
constexpr size_t kMaxPartitions = size_t{1} << 16;

constexpr const char* kTopLevelShape =
    R"(the top level must be a JSON object {"PartMap": [...], "IntermediateIOs": [...]}, but is )";

// The errors found in one part of the document, kept apart so that the report lists them in
// the order of SPEC section 3's walk (PartMap's partitions in array or key order, in each
// PartIOs then Inputs then IntermediateIOs, then the root IntermediateIOs) whatever the order
// of the keys in the file. A key given twice keeps its last value, as a JSON object does, so
// a part's errors are dropped when it is replaced.
struct Section {
  std::vector<Error> errors;
  size_t unlisted = 0;
};

struct PartitionEntry {
  Partition partition;
  bool is_object = true;  // false: not a partition object; its error is in `shape`
  Section shape;          // the partition or its PartIOs is not an object
  Section inputs;
  Section intermediates;
};

class NetlistVisitor final : public JsonVisitor {
 public:
  explicit NetlistVisitor(const std::string& file) : file_(file) {}

  void Scalar(JsonScalar& value) override { Value(value.type, &value); }
  bool BeginObject() override { return Value(JsonType::kObject, nullptr); }
  bool BeginArray() override { return Value(JsonType::kArray, nullptr); }

  void Key(std::string& key) override {
    if (where_ == Where::kPartObject) {
      part_key_ = std::move(key);
    } else {
      key_ = std::move(key);
    }
  }

  void EndObject() override {
    switch (where_) {
      case Where::kPartIos:
        where_ = Where::kPartition;
        return;
      case Where::kPartition:
        where_ = part_map_kind_ == PartMapKind::kArray ? Where::kPartArray : Where::kPartObject;
        return;
      case Where::kPartObject:
        where_ = Where::kRoot;
        return;
      case Where::kRoot:
        where_ = Where::kDone;
        return;
      default:
        return;
    }
  }

  void EndArray() override {
    if (where_ == Where::kNames) {
      where_ = names_return_;
    } else if (where_ == Where::kPartArray) {
      where_ = Where::kRoot;
    }
  }

  NetlistCheck Finish() {
    NetlistCheck out;
    std::vector<Section*> order;
    if (!root_is_object_) {
      out.errors.push_back(
          Error(ErrorCode::kJsonTopLevel, kTopLevelShape + std::string(JsonTypeName(root_type_)))
              .InFile(file_));
      return out;
    }
    order.push_back(&part_map_);
    auto add_partition = [&](PartitionEntry& entry) {
      order.insert(order.end(), {&entry.shape, &entry.inputs, &entry.intermediates});
      if (entry.is_object) out.netlist.partitions.push_back(std::move(entry.partition));
    };
    if (!too_many_partitions_) {
      for (PartitionEntry& entry : array_parts_) add_partition(entry);
      for (auto& [id, entry] : object_parts_) add_partition(entry);
    }
    order.push_back(&root_ios_);
    out.netlist.intermediate_ios = std::move(root_names_);
    for (Section* section : order) {
      for (Error& error : section->errors) out.errors.push_back(std::move(error));
      out.errors_not_listed += section->unlisted;
    }
    return out;
  }

 private:
  enum class Where {
    kStart,       // before the top-level value
    kRoot,        // in the top-level object
    kPartArray,   // in PartMap given as an array
    kPartObject,  // in PartMap given as an object
    kPartition,   // in a partition object
    kPartIos,     // in its PartIOs object
    kNames,       // in a list of names
    kDone,
  };
  enum class PartMapKind { kAbsent, kArray, kObject, kInvalid };

  // A value (a scalar, or a container's start) wherever the walk is. Returns whether to walk
  // into a container.
  bool Value(JsonType type, JsonScalar* scalar) {
    switch (where_) {
      case Where::kStart:
        root_type_ = type;
        root_is_object_ = type == JsonType::kObject;
        where_ = root_is_object_ ? Where::kRoot : Where::kDone;
        return root_is_object_;
      case Where::kRoot:
        return RootMember(type);
      case Where::kPartArray:
      case Where::kPartObject:
        return PartitionValue(type);
      case Where::kPartition:
        return PartitionMember(type);
      case Where::kPartIos:
        return PartIosMember(type);
      case Where::kNames:
        NameItem(type, scalar);
        return false;
      case Where::kDone:
        return false;
    }
    return false;
  }

  bool RootMember(JsonType type) {
    if (key_ == "PartMap") {
      ResetPartMap();
      too_many_partitions_ = false;
      if (type == JsonType::kArray || type == JsonType::kObject) {
        part_map_kind_ = type == JsonType::kArray ? PartMapKind::kArray : PartMapKind::kObject;
        where_ = type == JsonType::kArray ? Where::kPartArray : Where::kPartObject;
        return true;
      }
      part_map_kind_ = PartMapKind::kInvalid;
      Add(part_map_, ErrorCode::kJsonType,
          "type must be array or object, but is " + std::string(JsonTypeName(type)), "PartMap");
      return false;
    }
    if (key_ == "IntermediateIOs") {
      Reset(root_ios_);
      root_names_.clear();
      return BeginNames(type, root_ios_, root_names_, "IntermediateIOs");
    }
    return false;  // other keys are ignored
  }

  bool PartitionValue(JsonType type) {
    PartitionEntry* entry = NewPartition();
    if (entry == nullptr) return false;
    if (type != JsonType::kObject) {
      entry->is_object = false;
      Add(entry->shape, ErrorCode::kJsonType,
          "type must be object, but is " + std::string(JsonTypeName(type)) +
              R"(; a partition is like {"PartIOs": {"Inputs": [...], "IntermediateIOs": [...]}})",
          PartitionPath());
      return false;
    }
    where_ = Where::kPartition;
    return true;
  }

  bool PartitionMember(JsonType type) {
    if (key_ != "PartIOs") return false;
    // A partition without PartIOs, or PartIOs without a list, has empty lists: the original
    // consumer reads them with operator[], which yields null, which iterates as empty.
    PartitionEntry& entry = *current_;
    Reset(entry.shape);
    Reset(entry.inputs);
    Reset(entry.intermediates);
    entry.partition.inputs.clear();
    entry.partition.intermediate_ios.clear();
    if (type != JsonType::kObject) {
      Add(entry.shape, ErrorCode::kJsonType,
          "type must be object, but is " + std::string(JsonTypeName(type)),
          PartitionPath() + ".PartIOs");
      return false;
    }
    where_ = Where::kPartIos;
    return true;
  }

  bool PartIosMember(JsonType type) {
    PartitionEntry& entry = *current_;
    if (key_ == "Inputs") {
      Reset(entry.inputs);
      entry.partition.inputs.clear();
      return BeginNames(type, entry.inputs, entry.partition.inputs,
                        PartitionPath() + ".PartIOs.Inputs");
    }
    if (key_ == "IntermediateIOs") {
      Reset(entry.intermediates);
      entry.partition.intermediate_ios.clear();
      return BeginNames(type, entry.intermediates, entry.partition.intermediate_ios,
                        PartitionPath() + ".PartIOs.IntermediateIOs");
    }
    return false;
  }

  bool BeginNames(JsonType type, Section& section, std::vector<std::string>& names,
                  std::string path) {
    if (type != JsonType::kArray) {
      Add(section, ErrorCode::kJsonType,
          "type must be array, but is " + std::string(JsonTypeName(type)), path);
      return false;
    }
    names_section_ = &section;
    names_ = &names;
    names_path_ = std::move(path);
    names_index_ = 0;
    names_return_ = where_;
    where_ = Where::kNames;
    return true;
  }

  void NameItem(JsonType type, JsonScalar* scalar) {
    const size_t index = names_index_++;
    if (type == JsonType::kString) {
      names_->push_back(std::move(*scalar->string));
      return;
    }
    Add(*names_section_, ErrorCode::kJsonType,
        "type must be string, but is " + std::string(JsonTypeName(type)),
        names_path_ + "[" + std::to_string(index) + "]");
  }

  // The entry for the partition whose value starts now: the next of the array, or the one of
  // the current key (replacing an earlier one of the same key). nullptr past kMaxPartitions.
  PartitionEntry* NewPartition() {
    if (too_many_partitions_) return nullptr;
    if (array_parts_.size() + object_parts_.size() >= kMaxPartitions &&
        !(part_map_kind_ == PartMapKind::kObject && object_parts_.contains(part_key_))) {
      too_many_partitions_ = true;
      ResetPartMap();
      Add(part_map_, ErrorCode::kJsonTooLarge,
          "PartMap has more than " + std::to_string(kMaxPartitions) +
              " partitions; a netlist has one per subgraph",
          "PartMap");
      return nullptr;
    }
    if (part_map_kind_ == PartMapKind::kArray) {
      current_index_ = array_parts_.size();
      current_ = &array_parts_.emplace_back();
      current_->partition.id = std::to_string(current_index_);
    } else {
      PartitionEntry& entry = object_parts_[part_key_];
      Drop(entry);
      entry = PartitionEntry{};
      entry.partition.id = part_key_;
      current_ = &entry;
    }
    return current_;
  }

  std::string PartitionPath() const {
    if (part_map_kind_ == PartMapKind::kArray) {
      return "PartMap[" + std::to_string(current_index_) + "]";
    }
    return "PartMap[\"" + part_key_ + "\"]";
  }

  void ResetPartMap() {
    Reset(part_map_);
    for (PartitionEntry& entry : array_parts_) Drop(entry);
    for (auto& [id, entry] : object_parts_) Drop(entry);
    array_parts_.clear();
    object_parts_.clear();
    part_map_kind_ = PartMapKind::kAbsent;
  }

  // At most kMaxListedErrors errors are kept in all; the rest are counted where they arose.
  void Add(Section& section, ErrorCode code, std::string message, const std::string& path) {
    if (listed_ < kMaxListedErrors) {
      ++listed_;
      section.errors.push_back(Error(code, std::move(message)).InFile(file_).AtKey(path));
    } else {
      ++section.unlisted;
    }
  }
  // Forgets a section's errors (its value was replaced by a later one of the same key).
  void Reset(Section& section) {
    listed_ -= section.errors.size();
    section = Section{};
  }
  void Drop(PartitionEntry& entry) {
    Reset(entry.shape);
    Reset(entry.inputs);
    Reset(entry.intermediates);
  }

  const std::string& file_;
  Where where_ = Where::kStart;
  JsonType root_type_ = JsonType::kNull;
  bool root_is_object_ = false;
  std::string key_;       // the current key of the object being walked
  std::string part_key_;  // the current partition's key when PartMap is an object

  PartMapKind part_map_kind_ = PartMapKind::kAbsent;
  Section part_map_;
  std::vector<PartitionEntry> array_parts_;
  std::map<std::string, PartitionEntry> object_parts_;  // key order, as SPEC section 3 reads it
  bool too_many_partitions_ = false;
  PartitionEntry* current_ = nullptr;
  size_t current_index_ = 0;

  Section root_ios_;
  std::vector<std::string> root_names_;

  // The list of names being walked.
  Section* names_section_ = nullptr;
  std::vector<std::string>* names_ = nullptr;
  std::string names_path_;
  size_t names_index_ = 0;
  Where names_return_ = Where::kRoot;

  size_t listed_ = 0;
};

}  // namespace

NetlistCheck CheckNetlist(std::string_view json_text, const std::string& file) {
  try {
    NetlistVisitor visitor(file);
    if (std::optional<Error> syntax = WalkJson(json_text, file, visitor)) {
      NetlistCheck out;
      out.errors.push_back(std::move(*syntax));
      return out;
    }
    return visitor.Finish();
  } catch (const std::bad_alloc&) {
    NetlistCheck out;
    out.errors.push_back(Error(ErrorCode::kOutOfMemory, "out of memory reading " +
                                                            FormatBytes(json_text.size()) +
                                                            " of netlist JSON")
                             .InFile(file));
    return out;
  }
}

}  // namespace schema

Expected<Netlist> ParseNetlist(std::string_view json_text, const std::string& file_name) {
  schema::NetlistCheck check = schema::CheckNetlist(json_text, file_name);
  if (!check.errors.empty()) return Fail(std::move(check.errors.front()));
  return std::move(check.netlist);
}

std::vector<Error> ValidateNetlist(std::string_view json_text, const std::string& file_name) {
  return schema::CheckNetlist(json_text, file_name).errors;
}

Expected<Netlist> ReadNetlist(const std::string& path) {
  IOTX_ASSIGN_OR_RETURN(const std::string text, files::ReadTextFile(path));
  return ParseNetlist(text, path);
}

std::set<std::string, std::less<>> ForbiddenSet(const Netlist& netlist) {
  return {netlist.intermediate_ios.begin(), netlist.intermediate_ios.end()};
}

}  // namespace iotx
