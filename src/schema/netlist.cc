// Reading hlo_netlist.json (SPEC section 3).
#include <utility>

#include "schema/json_document.h"
#include "schema/netlist_check.h"
#include "files/read_text_file.h"

namespace iotx {
namespace schema {
namespace {

using Json = nlohmann::json;

class NetlistWalker {
 public:
  NetlistWalker(const std::string& file, NetlistCheck& out) : file_(file), out_(out) {}

  void Walk(const Json& document) {
    if (!document.is_object()) {
      AddError(
          ErrorCode::kJsonTopLevel,
          R"(the top level must be a JSON object {"PartMap": [...], "IntermediateIOs": [...]}, but is )" +
              JsonTypeName(document),
          "");
      return;
    }
    if (const auto it = document.find("PartMap"); it != document.end()) PartMap(*it);
    if (const auto it = document.find("IntermediateIOs"); it != document.end()) {
      Names(*it, "IntermediateIOs", out_.netlist.intermediate_ios);
    }
  }

 private:
  void PartMap(const Json& part_map) {
    if (part_map.is_array()) {
      size_t index = 0;
      for (const Json& partition : part_map) {
        const std::string id = std::to_string(index++);
        AddPartition(partition, id, "PartMap[" + id + "]");
      }
    } else if (part_map.is_object()) {
      // nlohmann::json keeps object members in a std::map: this is key order.
      for (const auto& [id, partition] : part_map.items()) {
        AddPartition(partition, id, "PartMap[\"" + id + "\"]");
      }
    } else {
      AddError(ErrorCode::kJsonType,
               "type must be array or object, but is " + JsonTypeName(part_map), "PartMap");
    }
  }

  void AddPartition(const Json& partition, const std::string& id, const std::string& path) {
    if (!partition.is_object()) {
      AddError(
          ErrorCode::kJsonType,
          "type must be object, but is " + JsonTypeName(partition) +
              R"(; a partition is like {"PartIOs": {"Inputs": [...], "IntermediateIOs": [...]}})",
          path);
      return;
    }
    Partition out;
    out.id = id;
    // A partition without PartIOs, or PartIOs without a list, has empty lists: the original
    // consumer reads them with operator[], which yields null, which iterates as empty.
    if (const auto ios = partition.find("PartIOs"); ios != partition.end()) {
      const std::string ios_path = path + ".PartIOs";
      if (!ios->is_object()) {
        AddError(ErrorCode::kJsonType, "type must be object, but is " + JsonTypeName(*ios),
                 ios_path);
      } else {
        if (const auto it = ios->find("Inputs"); it != ios->end()) {
          Names(*it, ios_path + ".Inputs", out.inputs);
        }
        if (const auto it = ios->find("IntermediateIOs"); it != ios->end()) {
          Names(*it, ios_path + ".IntermediateIOs", out.intermediate_ios);
        }
      }
    }
    out_.netlist.partitions.push_back(std::move(out));
  }

  void Names(const Json& list, const std::string& path, std::vector<std::string>& names) {
    if (!list.is_array()) {
      AddError(ErrorCode::kJsonType, "type must be array, but is " + JsonTypeName(list), path);
      return;
    }
    size_t index = 0;
    for (const Json& item : list) {
      const std::string item_path = path + "[" + std::to_string(index++) + "]";
      Expected<std::string> name = JsonToString(item);
      if (!name) {
        out_.errors.push_back(std::move(name).error().InFile(file_).AtKey(item_path));
        continue;
      }
      names.push_back(std::move(*name));
    }
  }

  void AddError(ErrorCode code, std::string message, const std::string& path) {
    out_.errors.push_back(Error(code, std::move(message)).InFile(file_).AtKey(path));
  }

  const std::string& file_;
  NetlistCheck& out_;
};

}  // namespace

NetlistCheck CheckNetlist(std::string_view json_text, const std::string& file) {
  NetlistCheck out;
  Expected<Json> document = ParseJsonDocument(json_text, file);
  if (!document) {
    out.errors.push_back(std::move(document).error());
    return out;
  }
  NetlistWalker(file, out).Walk(*document);
  return out;
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
