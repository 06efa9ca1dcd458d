// Reading io_transposes.json (SPEC section 1).
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "schema/io_transposes_check.h"
#include "schema/json_document.h"
#include "files/read_text_file.h"

namespace iotx {
namespace schema {
namespace {

using Json = nlohmann::json;

constexpr const char* kElementShape =
    R"({"input_name": "p0", "reshape": [...], "transpose": [...]})";

std::string WithArticle(const std::string& type_name) {
  const bool vowel =
      !type_name.empty() && std::string_view("aeiou").find(type_name[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + type_name;
}

// True for {"p0": {"reshape": ..., "transpose": ...}, ...}: the map written as an object keyed
// by input name instead of an array of elements.
bool LooksKeyedByInputName(const Json& document) {
  if (!document.is_object() || document.empty()) return false;
  for (const auto& [key, value] : document.items()) {
    if (!value.is_object() || !(value.contains("reshape") || value.contains("transpose"))) {
      return false;
    }
  }
  return true;
}

Error TopLevelError(const Json& document, const std::string& file) {
  std::string message = std::string("the top level must be a JSON array of elements like ") +
                        kElementShape + ", but is " + WithArticle(JsonTypeName(document));
  if (LooksKeyedByInputName(document)) {
    const std::string name = document.begin().key().substr(0, 64);
    message += ". It looks keyed by input name ({\"" + name +
               "\": {\"reshape\": ...}}), which is the most common mistake: write "
               "[{\"input_name\": \"" +
               name + "\", \"reshape\": [...], \"transpose\": [...]}, ...] instead";
  } else if (document.is_object() && document.contains("input_name")) {
    message += ". It looks like a single element: wrap it in [ ]";
  } else if (document.is_object() && document.empty()) {
    message += ". A file without transposes is the empty array []";
  }
  return Error(ErrorCode::kJsonTopLevel, std::move(message)).InFile(file);
}

class ElementChecker {
 public:
  ElementChecker(const std::string& file, const ParseOptions& options, IoTransposesCheck& out)
      : file_(file), options_(options), out_(out) {}

  void Check(const Json& element, int64_t index) {
    index_ = index;
    if (!element.is_object()) {
      AddError(Error(ErrorCode::kJsonType, "type must be object, but is " + JsonTypeName(element) +
                                               "; each element is like " + kElementShape));
      return;
    }
    std::optional<std::string> name = Name(element);
    std::optional<Dims> reshape = DimsAt(element, "reshape");
    std::optional<Dims> transpose = DimsAt(element, "transpose");
    if (!reshape || !transpose) {
      NoteName(name, /*valid=*/false);
      return;
    }
    TransposeSpec spec{std::move(*reshape), std::move(*transpose)};
    if (Status valid = ValidateSpec(spec); !valid) {
      Error error = std::move(valid).error();
      const char* key = error.code == ErrorCode::kNotPermutation ? "transpose" : "reshape";
      AddError(std::move(error).AtKey(key));
      NoteName(name, /*valid=*/false);
      return;
    }
    if (NoteName(name, /*valid=*/true)) {
      out_.specs.TryEmplace(std::move(*name), std::move(spec));
    }
  }

 private:
  std::optional<std::string> Name(const Json& element) {
    const auto it = element.find("input_name");
    if (it == element.end()) {
      AddError(
          Error(ErrorCode::kJsonMissingKey, "input_name not found in json").AtKey("input_name"));
      return std::nullopt;
    }
    Expected<std::string> name = JsonToString(*it);
    if (!name) {
      AddError(std::move(name).error().AtKey("input_name"));
      return std::nullopt;
    }
    if (Status safe = CheckInputName(*name); !safe) {
      AddError(std::move(safe).error().AtKey("input_name"));
      return std::nullopt;
    }
    return std::move(*name);
  }

  std::optional<Dims> DimsAt(const Json& element, const std::string& key) {
    const auto it = element.find(key);
    if (it == element.end()) {
      AddError(Error(ErrorCode::kJsonMissingKey, key + " not found in json").AtKey(key));
      return std::nullopt;
    }
    Expected<Dims> dims = JsonToDims(*it);
    if (!dims) {
      AddError(std::move(dims).error().AtKey(key));
      return std::nullopt;
    }
    return std::move(*dims);
  }

  // Records the first element of each name. Returns true when the element is the first of a
  // name and valid, so it is stored; a repeat is reported (the first one is kept).
  bool NoteName(const std::optional<std::string>& name, bool valid) {
    if (!name) return false;
    const auto [it, first] = first_element_.try_emplace(*name, index_);
    if (first) return valid;
    Error repeat(ErrorCode::kDuplicateInputName,
                 "input_name \"" + name->substr(0, 200) + "\" repeats element " +
                     std::to_string(it->second) +
                     (options_.duplicate_name_is_error ? "; each input may appear once"
                                                       : "; the first element is kept"));
    repeat.InFile(file_).AtElement(index_).AtKey("input_name");
    (options_.duplicate_name_is_error ? out_.errors : out_.warnings).push_back(std::move(repeat));
    return false;
  }

  void AddError(Error error) {
    out_.errors.push_back(std::move(error).InFile(file_).AtElement(index_));
  }

  const std::string& file_;
  const ParseOptions& options_;
  IoTransposesCheck& out_;
  int64_t index_ = 0;
  std::unordered_map<std::string, int64_t> first_element_;
};

}  // namespace

IoTransposesCheck CheckIoTransposes(std::string_view json_text, const std::string& file,
                                    const ParseOptions& options, bool first_error_only) {
  IoTransposesCheck out;
  Expected<Json> document = ParseJsonDocument(json_text, file);
  if (!document) {
    out.errors.push_back(std::move(document).error());
    return out;
  }
  if (!document->is_array()) {
    out.errors.push_back(TopLevelError(*document, file));
    return out;
  }
  ElementChecker checker(file, options, out);
  int64_t index = 0;
  for (const Json& element : *document) {
    checker.Check(element, index++);
    if (first_error_only && !out.errors.empty()) break;
  }
  return out;
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
