// Walking a JSON side-file without building a document: nlohmann's SAX parser feeds a
// visitor that keeps only what its schema needs. A DOM of nlohmann::json costs about 37 bytes
// per byte of a file of `{}` objects (100 MB: 3.9 GB), and freeing one allocates, so running
// out of memory while freeing it ended in std::terminate; a walk costs what the visitor keeps.
//
// The walk adds the checks nlohmann leaves to the caller: bounded nesting, line and column on
// syntax errors, a NUL byte (nlohmann stops at one as if the text ended there, so "[]\0junk"
// would parse) and explicit JSON types (nlohmann's get<int64_t> would silently accept booleans
// and floats, which SPEC section 1 rejects). Internal to src/schema: nothing here may appear
// in a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/status.h"

namespace iotx::schema {

// io_transposes.json nests 3 deep and hlo_netlist.json 5; 64 leaves room for sibling keys a
// producer may add while keeping every walk over the document shallow.
inline constexpr int kMaxJsonDepth = 64;

// How many errors a check lists for one file; the rest are counted. A file of a million bad
// elements gets a readable report, and its errors cost kilobytes instead of gigabytes.
inline constexpr size_t kMaxListedErrors = 1000;

// The JSON types as SPEC messages name them. Integers are "number"; a number with a fraction
// or exponent (or an integer beyond uint64, which nlohmann reads as a double) is "float".
enum class JsonType { kNull, kBoolean, kNumber, kFloat, kString, kArray, kObject };
std::string_view JsonTypeName(JsonType type);
// "an array", "a number", ...
std::string JsonTypeWithArticle(JsonType type);

// A value that is not a container, as the walk hands it over.
struct JsonScalar {
  JsonType type = JsonType::kNull;
  std::string* string = nullptr;  // kString: the value, which the visitor may move from
  // kNumber: the value as int64, or the error saying why it is none (beyond int64);
  // kFloat: the error (kJsonType "type must be number, but is float (2.0)", or kJsonTooLarge
  // for an integral value beyond int64).
  Expected<int64_t> integer = 0;
};

// `value` as an int64: its integer, else the kJsonType / kJsonTooLarge error (message only;
// the caller adds where).
Expected<int64_t> ScalarToInt64(const JsonScalar& value);

// What a schema's walk does with the values, in document order. BeginObject / BeginArray
// return whether to walk the container's contents: false skips them (their events never
// reach the visitor) and no End call follows.
class JsonVisitor {
 public:
  virtual ~JsonVisitor() = default;
  virtual void Scalar(JsonScalar& value) = 0;
  virtual bool BeginObject() = 0;
  // The key of the next member (the visitor may move from it).
  virtual void Key(std::string& key) = 0;
  virtual void EndObject() = 0;
  virtual bool BeginArray() = 0;
  virtual void EndArray() = 0;
};

// Parses `text`, feeding `visitor`. Returns the syntax error if there is one (kJsonSyntax with
// line and column, "unexpected NUL byte" for a NUL outside a string, kJsonTooDeep past
// kMaxJsonDepth), naming `file`; whatever the visitor collected is meaningless then. Throws
// only what the visitor throws (std::bad_alloc).
std::optional<Error> WalkJson(std::string_view text, const std::string& file,
                              JsonVisitor& visitor);

// Errors of one check, at most kMaxListedErrors listed in the order added; the rest counted.
class ErrorList {
 public:
  void Add(Error error) {
    if (errors_.size() < kMaxListedErrors) {
      errors_.push_back(std::move(error));
    } else {
      ++unlisted_;
    }
  }
  bool empty() const { return errors_.empty(); }
  size_t unlisted() const { return unlisted_; }
  std::vector<Error>& errors() { return errors_; }

 private:
  std::vector<Error> errors_;
  size_t unlisted_ = 0;
};

}  // namespace iotx::schema
