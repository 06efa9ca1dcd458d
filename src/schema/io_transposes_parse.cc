// Reading io_transposes.json (SPEC section 1) in one walk that keeps only the specs: no JSON
// document is built, so memory is what the specs take (docs/robustness.md measures it).
#include <algorithm>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/text.h"
#include "files/read_text_file.h"
#include "schema/io_transposes_check.h"
#include "schema/json_document.h"

namespace iotx {
namespace schema {
namespace {

constexpr const char* kElementShape =
    R"({"input_name": "p0", "reshape": [...], "transpose": [...]})";

// One key of an element as the walk found it. A key given twice keeps its last value, as a
// JSON object (and the original consumer's nlohmann::json) does.
struct NameSlot {
  bool present = false;
  std::optional<Error> error;  // the value is not a string
  std::string value;
};
struct DimsSlot {
  bool present = false;
  std::optional<Error> error;  // not an array, or the first item that is no int64
  Dims values;
};

// What the top level is, when it is not the array it should be: enough to say what the file
// looks like (the messages of TopLevelError).
struct TopLevelShape {
  JsonType type = JsonType::kNull;
  // For an object: its members' final values, by key: does each look like a spec keyed by
  // its input name ({"reshape": ..., "transpose": ...})?
  std::map<std::string, bool> members_look_like_specs;
};

Error TopLevelError(const TopLevelShape& top, const std::string& file) {
  std::string message = std::string("the top level must be a JSON array of elements like ") +
                        kElementShape + ", but is " + JsonTypeWithArticle(top.type);
  const auto& members = top.members_look_like_specs;
  const bool keyed_by_name =
      !members.empty() &&
      std::all_of(members.begin(), members.end(), [](const auto& m) { return m.second; });
  if (top.type == JsonType::kObject && keyed_by_name) {
    const std::string name = EscapeControl(members.begin()->first.substr(0, 64));
    message += ". It looks keyed by input name ({\"" + name +
               "\": {\"reshape\": ...}}), which is the most common mistake: write "
               "[{\"input_name\": \"" +
               name + "\", \"reshape\": [...], \"transpose\": [...]}, ...] instead";
  } else if (top.type == JsonType::kObject && members.contains("input_name")) {
    message += ". It looks like a single element: wrap it in [ ]";
  } else if (top.type == JsonType::kObject && members.empty()) {
    message += ". A file without transposes is the empty array []";
  }
  return Error(ErrorCode::kJsonTopLevel, std::move(message)).InFile(file);
}

// The walk: the top-level array, its elements, their three keys and the dims in them. Each
// element is checked when it ends, with exactly the checks (and in the order) of SPEC
// section 1: the name, the reshape, the transpose, then ValidateSpec.
class IoTransposesVisitor final : public JsonVisitor {
 public:
  IoTransposesVisitor(const std::string& file, const ParseOptions& options, bool first_error_only)
      : file_(file), options_(options), first_error_only_(first_error_only) {}

  void Scalar(JsonScalar& value) override {
    switch (where_) {
      case Where::kStart:
        top_.type = value.type;
        where_ = Where::kDone;
        return;
      case Where::kElements:
        // An element that is no object.
        if (Checking()) {
          AddError(Error(ErrorCode::kJsonType,
                         "type must be object, but is " + std::string(JsonTypeName(value.type)) +
                             "; each element is like " + kElementShape));
        }
        ++index_;
        return;
      case Where::kElement:
        ElementValue(value.type, &value);
        return;
      case Where::kDims:
        DimsItem(value.type, &value);
        return;
      case Where::kTopObject:
        if (key_known_) top_.members_look_like_specs[key_] = false;
        return;
      case Where::kTopMember:
      case Where::kDone:
        return;
    }
  }

  bool BeginObject() override {
    switch (where_) {
      case Where::kStart:
        top_.type = JsonType::kObject;
        where_ = Where::kTopObject;
        return true;
      case Where::kElements:
        where_ = Where::kElement;
        element_ = Element{};
        return true;
      case Where::kElement:
        ElementValue(JsonType::kObject, nullptr);
        return false;
      case Where::kDims:
        DimsItem(JsonType::kObject, nullptr);
        return false;
      case Where::kTopObject:
        member_looks_like_spec_ = false;
        where_ = Where::kTopMember;
        return true;
      case Where::kTopMember:
      case Where::kDone:
        return false;
    }
    return false;
  }

  void Key(std::string& key) override {
    if (where_ == Where::kTopMember) {
      if (key == "reshape" || key == "transpose") member_looks_like_spec_ = true;
      return;
    }
    key_ = std::move(key);
    key_known_ = true;
  }

  void EndObject() override {
    switch (where_) {
      case Where::kElement:
        if (Checking()) CheckElement();
        ++index_;
        where_ = Where::kElements;
        return;
      case Where::kTopMember:
        top_.members_look_like_specs[key_] = member_looks_like_spec_;
        where_ = Where::kTopObject;
        return;
      case Where::kTopObject:
        where_ = Where::kDone;
        return;
      default:
        return;
    }
  }

  bool BeginArray() override {
    switch (where_) {
      case Where::kStart:
        where_ = Where::kElements;
        top_is_array_ = true;
        return true;
      case Where::kElements:
        if (Checking()) {
          AddError(Error(ErrorCode::kJsonType, std::string("type must be object, but is array; "
                                                           "each element is like ") +
                                                   kElementShape));
        }
        ++index_;
        return false;
      case Where::kElement:
        if (key_ == "reshape" || key_ == "transpose") {
          DimsSlot& slot = key_ == "reshape" ? element_.reshape : element_.transpose;
          slot = DimsSlot{};
          slot.present = true;
          dims_ = &slot;
          where_ = Where::kDims;
          return true;
        }
        ElementValue(JsonType::kArray, nullptr);
        return false;
      case Where::kDims:
        DimsItem(JsonType::kArray, nullptr);
        return false;
      case Where::kTopObject:
        top_.members_look_like_specs[key_] = false;
        return false;
      case Where::kTopMember:
      case Where::kDone:
        return false;
    }
    return false;
  }

  void EndArray() override {
    if (where_ == Where::kDims) {
      where_ = Where::kElement;
    } else if (where_ == Where::kElements) {
      where_ = Where::kDone;
    }
  }

  // The result, once the walk has ended without a syntax error.
  IoTransposesCheck Finish() {
    if (!top_is_array_) errors_.Add(TopLevelError(top_, file_));
    out_.errors = std::move(errors_.errors());
    out_.errors_not_listed = errors_.unlisted();
    out_.warnings_not_listed = warnings_not_listed_;
    return std::move(out_);
  }

 private:
  enum class Where {
    kStart,      // before the top-level value
    kElements,   // in the top-level array
    kElement,    // in an element object
    kDims,       // in its reshape or transpose array
    kTopObject,  // in a top-level object (an error; looked at for the message only)
    kTopMember,  // in an object member of that top-level object
    kDone,
  };

  struct Element {
    NameSlot name;
    DimsSlot reshape;
    DimsSlot transpose;
  };

  // Whether elements still need checking: with first_error_only, not after the first error.
  bool Checking() const { return !(first_error_only_ && !errors_.empty()); }

  // A value of the element's current key that is not a dims array being walked.
  void ElementValue(JsonType type, JsonScalar* value) {
    if (key_ == "input_name") {
      element_.name = NameSlot{};
      element_.name.present = true;
      if (type == JsonType::kString) {
        element_.name.value = std::move(*value->string);
      } else {
        element_.name.error = Error(ErrorCode::kJsonType, "type must be string, but is " +
                                                              std::string(JsonTypeName(type)));
      }
    } else if (key_ == "reshape" || key_ == "transpose") {
      DimsSlot& slot = key_ == "reshape" ? element_.reshape : element_.transpose;
      slot = DimsSlot{};
      slot.present = true;
      slot.error = Error(ErrorCode::kJsonType,
                         "type must be array, but is " + std::string(JsonTypeName(type)));
    }
  }

  // An item of the reshape or transpose array being walked: an int64 or the slot's error.
  void DimsItem(JsonType type, JsonScalar* value) {
    if (dims_->error) return;  // the first bad item is the one reported
    if (value == nullptr) {
      dims_->error = Error(ErrorCode::kJsonType,
                           "type must be number, but is " + std::string(JsonTypeName(type)));
      return;
    }
    Expected<int64_t> item = ScalarToInt64(*value);
    if (!item) {
      dims_->error = std::move(item).error();
      return;
    }
    dims_->values.push_back(*item);
  }

  void CheckElement() {
    bool name_safe = true;
    std::optional<std::string> name = CheckedName(name_safe);
    const bool reshape_ok = CheckedDims(element_.reshape, "reshape");
    const bool transpose_ok = CheckedDims(element_.transpose, "transpose");
    if (!reshape_ok || !transpose_ok) {
      NoteName(name, /*valid=*/false);
      return;
    }
    TransposeSpec spec{std::move(element_.reshape.values), std::move(element_.transpose.values)};
    if (Status valid = ValidateSpec(spec); !valid) {
      Error error = std::move(valid).error();
      const char* key = error.code == ErrorCode::kNotPermutation ? "transpose" : "reshape";
      AddError(std::move(error).AtKey(key));
      NoteName(name, /*valid=*/false);
      return;
    }
    if (NoteName(name, /*valid=*/name_safe))
      out_.specs.TryEmplace(std::move(*name), std::move(spec));
  }

  // The element's name, or nullopt when it is missing or not a string. A name unfit for a
  // file name is an error (safe = false) but still returned, so a repeat of it is reported too.
  std::optional<std::string> CheckedName(bool& safe) {
    NameSlot& slot = element_.name;
    if (!slot.present) {
      AddError(
          Error(ErrorCode::kJsonMissingKey, "input_name not found in json").AtKey("input_name"));
      return std::nullopt;
    }
    if (slot.error) {
      AddError(std::move(*slot.error).AtKey("input_name"));
      return std::nullopt;
    }
    if (Status fit = CheckInputName(slot.value); !fit) {
      AddError(std::move(fit).error().AtKey("input_name"));
      safe = false;
    }
    return std::move(slot.value);
  }

  bool CheckedDims(DimsSlot& slot, const std::string& key) {
    if (!slot.present) {
      AddError(Error(ErrorCode::kJsonMissingKey, key + " not found in json").AtKey(key));
      return false;
    }
    if (slot.error) {
      AddError(std::move(*slot.error).AtKey(key));
      return false;
    }
    return true;
  }

  // Records the first element of each name. Returns true when the element is the first of a
  // name and valid, so it is stored; a repeat is reported (the first one is kept).
  bool NoteName(const std::optional<std::string>& name, bool valid) {
    if (!name) return false;
    const auto [it, first] = first_element_.try_emplace(*name, index_);
    if (first) return valid;
    Error repeat(ErrorCode::kDuplicateInputName,
                 "input_name " + Excerpt(*name) + " repeats element " +
                     std::to_string(it->second) +
                     (options_.duplicate_name_is_error ? "; each input may appear once"
                                                       : "; the first element is kept"));
    repeat.InFile(file_).AtElement(index_).AtKey("input_name");
    if (options_.duplicate_name_is_error) {
      errors_.Add(std::move(repeat));
    } else if (out_.warnings.size() < kMaxListedErrors) {
      out_.warnings.push_back(std::move(repeat));
    } else {
      ++warnings_not_listed_;
    }
    return false;
  }

  void AddError(Error error) { errors_.Add(std::move(error).InFile(file_).AtElement(index_)); }

  const std::string& file_;
  const ParseOptions& options_;
  const bool first_error_only_;
  Where where_ = Where::kStart;
  bool top_is_array_ = false;
  TopLevelShape top_;
  bool member_looks_like_spec_ = false;
  std::string key_;  // the current key of the element (or of the top-level object)
  bool key_known_ = false;
  Element element_;
  DimsSlot* dims_ = nullptr;  // the slot the dims array being walked fills
  int64_t index_ = 0;         // of the current element
  std::unordered_map<std::string, int64_t> first_element_;
  ErrorList errors_;
  size_t warnings_not_listed_ = 0;
  IoTransposesCheck out_;
};

}  // namespace

IoTransposesCheck CheckIoTransposes(std::string_view json_text, const std::string& file,
                                    const ParseOptions& options, bool first_error_only) {
  try {
    IoTransposesVisitor visitor(file, options, first_error_only);
    if (std::optional<Error> syntax = WalkJson(json_text, file, visitor)) {
      IoTransposesCheck out;
      out.errors.push_back(std::move(*syntax));
      return out;
    }
    return visitor.Finish();
  } catch (const std::bad_alloc&) {
    // What the walk had built is freed by now; the report itself is small.
    IoTransposesCheck out;
    out.errors.push_back(Error(ErrorCode::kOutOfMemory,
                               "out of memory reading " + FormatBytes(json_text.size()) +
                                   " of io_transposes JSON")
                             .InFile(file));
    return out;
  }
}

}  // namespace schema

Expected<IoTransposes> ParseIoTransposes(std::string_view json_text, const std::string& file_name,
                                         const ParseOptions& options) {
  schema::IoTransposesCheck check =
      schema::CheckIoTransposes(json_text, file_name, options, /*first_error_only=*/true);
  if (!check.errors.empty()) return Fail(std::move(check.errors.front()));
  IoTransposes result;
  result.specs = std::move(check.specs);
  result.warnings = std::move(check.warnings);
  return result;
}

Expected<IoTransposes> ReadIoTransposes(const std::string& path, const ParseOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const std::string text, files::ReadTextFile(path));
  return ParseIoTransposes(text, path, options);
}

std::vector<Error> ValidateIoTransposes(std::string_view json_text, const std::string& file_name) {
  ParseOptions options;
  options.duplicate_name_is_error = true;
  return schema::CheckIoTransposes(json_text, file_name, options).errors;
}

}  // namespace iotx
