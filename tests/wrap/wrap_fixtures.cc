#include "wrap/wrap_fixtures.h"

#include <google/protobuf/text_format.h>

#include <sstream>
#include <stdexcept>

#include "support/process.h"

namespace iotx::test {
namespace {

// Undoes protoc's C escaping: \n \r \t \" \' \\ and octal \NNN.
std::string Unescape(const std::string& quoted) {
  std::string out;
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    char c = quoted[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = quoted[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case '"':
      case '\'':
      case '\\':
        out += e;
        break;
      default: {
        int value = 0;
        int digits = 0;
        while (digits < 3 && i < quoted.size() - 1 && quoted[i] >= '0' && quoted[i] <= '7') {
          value = value * 8 + (quoted[i] - '0');
          ++i;
          ++digits;
        }
        if (digits == 0) throw std::runtime_error("unknown escape in " + quoted);
        --i;
        out += static_cast<char>(value);
      }
    }
  }
  return out;
}

void ParseFields(std::istringstream& in, RawField& parent) {
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string body = line.substr(start);
    if (body == "}") return;
    RawField field;
    size_t end_number = body.find_first_of(": {");
    field.number = std::stoi(body.substr(0, end_number));
    if (body.back() == '{') {
      field.is_message = true;
      ParseFields(in, field);
    } else {
      std::string value = body.substr(body.find(": ") + 2);
      field.value = value.front() == '"' ? Unescape(value) : value;
    }
    parent.fields.push_back(std::move(field));
  }
}

std::string Protoc(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv = {IOTX_PROTOC, "-I" + WrapTestdata("")};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = RunProcess(argv, input);
  if (r.exit_code != 0) throw std::runtime_error("protoc failed: " + r.err);
  return r.out;
}

}  // namespace

std::string WrapTestdata(const std::string& name) {
  return std::string(IOTX_TESTDATA_DIR) + "/wrap/" + name;
}

xla::HloModuleProto LoadTextModuleFile(const std::string& path) {
  xla::HloModuleProto module;
  if (!google::protobuf::TextFormat::ParseFromString(ReadFile(path), &module)) {
    throw std::runtime_error("module text does not parse: " + path);
  }
  return module;
}

xla::HloModuleProto LoadTextModule(const std::string& name) {
  return LoadTextModuleFile(WrapTestdata(name));
}

SpecMap MakeSpecs(const std::vector<SpecTriple>& specs) {
  SpecMap map;
  for (const SpecTriple& s : specs) {
    map.TryEmplace(s.name, TransposeSpec{Dims(std::span<const int64_t>(s.reshape)),
                                         Dims(std::span<const int64_t>(s.transpose))});
  }
  return map;
}

std::string ProtocEncode(const std::string& proto, const std::string& type,
                         const std::string& text) {
  return Protoc({"--encode=" + type, proto}, text);
}

std::string ProtocDecode(const std::string& proto, const std::string& type,
                         const std::string& bytes) {
  return Protoc({"--decode=" + type, proto}, bytes);
}

std::vector<const RawField*> RawField::All(int field_number) const {
  std::vector<const RawField*> out;
  for (const RawField& f : fields) {
    if (f.number == field_number) out.push_back(&f);
  }
  return out;
}

const RawField& RawField::One(int field_number) const {
  auto all = All(field_number);
  if (all.size() != 1) {
    throw std::runtime_error("field " + std::to_string(field_number) + " appears " +
                             std::to_string(all.size()) + " times");
  }
  return *all.front();
}

RawField DecodeRaw(const std::string& bytes) {
  ProcessResult r = RunProcess({IOTX_PROTOC, "--decode_raw"}, bytes);
  if (r.exit_code != 0) throw std::runtime_error("protoc --decode_raw failed: " + r.err);
  RawField top;
  top.is_message = true;
  std::istringstream in(r.out);
  ParseFields(in, top);
  return top;
}

std::string TextBlock(const std::string& text, const std::string& head, size_t indent) {
  const std::string pad(indent, ' ');
  const std::string start = pad + head;
  std::istringstream in(text);
  std::string line;
  std::string block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == start) inside = true;
    if (inside) {
      block += line + "\n";
      if (line == pad + "}") return block;
    }
  }
  return block;
}

}  // namespace iotx::test
