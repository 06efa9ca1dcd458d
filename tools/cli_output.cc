#include "cli_output.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "core/text.h"

namespace iotx::cli {
namespace {

// A JSON string literal; names may hold arbitrary bytes, so invalid UTF-8 is replaced rather
// than thrown over. The output is built as text, not as a JSON document: freeing a document
// allocates, and out of memory there would end the process (std::terminate).
std::string JsonString(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One diagnostic as nlohmann's dump(2) of an ordered object printed it.
void AppendObject(std::string& out, const std::vector<std::pair<std::string, std::string>>& fields) {
  out += "  {\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    out += "    \"" + fields[i].first + "\": " + fields[i].second;
    out += i + 1 < fields.size() ? ",\n" : "\n";
  }
  out += "  }";
}

std::vector<std::pair<std::string, std::string>> Fields(const Error& e, const char* severity) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"severity", JsonString(severity)},
      {"code", JsonString(std::string(CodeName(e.code)))},
      {"message", JsonString(e.message)}};
  if (!e.file.empty()) fields.emplace_back("file", JsonString(e.file));
  if (e.element >= 0) fields.emplace_back("element", std::to_string(e.element));
  if (!e.key.empty()) fields.emplace_back("key", JsonString(e.key));
  return fields;
}

}  // namespace

void PrintError(const Error& error) { std::cerr << "iotx: error: " << error.ToString() << '\n'; }

void PrintWarning(const Warning& warning) {
  std::cerr << "iotx: warning: " << warning.ToString() << '\n';
}

std::string DiagnosticsToJson(const std::vector<Error>& errors,
                              const std::vector<Warning>& warnings,
                              const std::vector<NotListedCount>& not_listed) {
  std::string out = "[";
  bool first = true;
  auto next = [&out, &first] {
    out += first ? "\n" : ",\n";
    first = false;
  };
  for (const Error& e : errors) {
    next();
    AppendObject(out, Fields(e, "error"));
  }
  for (const NotListedCount& n : not_listed) {
    next();
    AppendObject(out, {{"severity", JsonString("note")},
                       {"message", JsonString(std::to_string(n.count) +
                                              " more problems not listed")},
                       {"file", JsonString(n.file)},
                       {"not_listed", std::to_string(n.count)}});
  }
  for (const Warning& w : warnings) {
    next();
    AppendObject(out, Fields(w, "warning"));
  }
  out += first ? "]" : "\n]";
  return out;
}

}  // namespace iotx::cli
