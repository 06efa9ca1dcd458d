#include <utility>

#include "iotx/spec.h"
#include "core/check.h"

namespace iotx {

bool SpecMap::TryEmplace(std::string name, TransposeSpec spec) {
  if (index_.contains(name)) return false;
  index_.emplace(name, entries_.size());
  entries_.push_back(NamedSpec{std::move(name), std::move(spec)});
  IOTX_DCHECK(index_.size() == entries_.size());
  return true;
}

const TransposeSpec* SpecMap::Find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &entries_[it->second].spec;
}

bool SpecMap::Replace(std::string_view name, TransposeSpec spec) {
  const auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  entries_[it->second].spec = std::move(spec);
  return true;
}

}  // namespace iotx
