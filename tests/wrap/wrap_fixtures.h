// Test helpers for the wrapper: text-format fixtures, protoc as an independent encoder and
// decoder, and a reader for `protoc --decode_raw` output (field numbers, no schema).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iotx/spec.h"
#include "hlo/hlo.pb.h"

namespace iotx::test {

// tests/testdata/wrap/<name>
std::string WrapTestdata(const std::string& name);

// Parses tests/testdata/wrap/<name> (protobuf text format) into a module; throws on failure.
xla::HloModuleProto LoadTextModule(const std::string& name);
// The same for a module text file anywhere, e.g. examples/module.textproto.
xla::HloModuleProto LoadTextModuleFile(const std::string& path);

// A SpecMap from {name, reshape, transpose} triples, in order.
struct SpecTriple {
  std::string name;
  std::vector<int64_t> reshape;
  std::vector<int64_t> transpose;
};
SpecMap MakeSpecs(const std::vector<SpecTriple>& specs);

// `protoc --encode=<type>` / `--decode=<type>` against tests/testdata/wrap/<proto>; throw on
// failure.
std::string ProtocEncode(const std::string& proto, const std::string& type,
                         const std::string& text);
std::string ProtocDecode(const std::string& proto, const std::string& type,
                         const std::string& bytes);

// One field of `protoc --decode_raw` output: a number and either a scalar (a string with its
// escapes undone, or an integer's digits) or, when protoc could read the bytes as a message,
// the nested fields.
struct RawField {
  int number = 0;
  std::string value;
  bool is_message = false;
  std::vector<RawField> fields;

  // The nested fields with `field_number`, in order.
  std::vector<const RawField*> All(int field_number) const;
  // The only nested field with `field_number`; throws unless there is exactly one.
  const RawField& One(int field_number) const;
  int64_t Int() const { return std::stoll(value); }
};

// Runs `protoc --decode_raw` on `bytes`; the returned field (number 0) holds the top level.
RawField DecodeRaw(const std::string& bytes);

// The block that starts with the line `indent + head` in protoc's text output, through its
// closing brace (empty if absent).
std::string TextBlock(const std::string& text, const std::string& head, size_t indent = 0);

}  // namespace iotx::test
