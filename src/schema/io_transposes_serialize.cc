// Writing specs back out exactly as the producer's json.dump does (SPEC section 1).
#include "iotx/io_transposes.h"
#include "iotx/spec.h"
#include "schema/python_json.h"

namespace iotx {
namespace {

void AppendSpecFields(std::string& out, const TransposeSpec& spec) {
  out += "\"reshape\": ";
  out += ToString(spec.reshape);  // Python's list repr is its json.dumps too
  out += ", \"transpose\": ";
  out += ToString(spec.transpose);
}

}  // namespace

std::string ToJson(const TransposeSpec& spec) {
  std::string out = "{";
  AppendSpecFields(out, spec);
  out += '}';
  return out;
}

std::string SerializeIoTransposes(const SpecMap& specs) {
  std::string out = "[";
  bool first = true;
  for (const NamedSpec& entry : specs) {
    if (!first) out += ", ";
    first = false;
    out += "{\"input_name\": ";
    schema::AppendPythonJsonString(out, entry.input_name);
    out += ", ";
    AppendSpecFields(out, entry.spec);
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace iotx
