// A thread-safe LRU cache of kernel plans, shared by every transformer in the process, so
// models with the same input layouts (or a model loaded twice) plan each layout once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "iotx/plan.h"
#include "iotx/status.h"

namespace iotx::runtime {

class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity) {}

  // The cached plan for this problem, or a new one (which is then cached). Errors from
  // MakePlan are returned and not cached.
  Expected<PlanPtr> GetOrCreate(std::span<const int64_t> shape, std::span<const int64_t> perm,
                                size_t element_size, const PlanOptions& options);

  size_t size() const;
  size_t hits() const;
  size_t misses() const;

  // The process-wide cache used by InputTransformer.
  static PlanCache& Global();

 private:
  using Entry = std::pair<std::string, PlanPtr>;

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace iotx::runtime
