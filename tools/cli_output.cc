#include "cli_output.h"

#include <iostream>

#include <nlohmann/json.hpp>

namespace iotx::cli {
namespace {

nlohmann::ordered_json ToJson(const Error& e, const char* severity) {
  nlohmann::ordered_json j;
  j["severity"] = severity;
  j["code"] = std::string(CodeName(e.code));
  j["message"] = e.message;
  if (!e.file.empty()) j["file"] = e.file;
  if (e.element >= 0) j["element"] = e.element;
  if (!e.key.empty()) j["key"] = e.key;
  return j;
}

}  // namespace

void PrintError(const Error& error) { std::cerr << "iotx: error: " << error.ToString() << '\n'; }

void PrintWarning(const Warning& warning) {
  std::cerr << "iotx: warning: " << warning.ToString() << '\n';
}

std::string DiagnosticsToJson(const std::vector<Error>& errors,
                              const std::vector<Warning>& warnings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Error& e : errors) out.push_back(ToJson(e, "error"));
  for (const Warning& w : warnings) out.push_back(ToJson(w, "warning"));
  // Names may hold arbitrary bytes; replace invalid UTF-8 rather than throw.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace iotx::cli
