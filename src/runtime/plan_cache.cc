#include "runtime/plan_cache.h"

#include <cstring>

namespace iotx::runtime {
namespace {

// Everything MakePlan's result depends on, as raw bytes.
std::string MakeKey(std::span<const int64_t> shape, std::span<const int64_t> perm,
                    size_t element_size, const PlanOptions& options) {
  std::string key;
  auto append = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  const uint64_t header[] = {element_size, static_cast<uint64_t>(options.max_threads),
                             static_cast<uint64_t>(options.stores),
                             static_cast<uint64_t>(options.device),
                             static_cast<uint64_t>(options.start_workers), shape.size(),
                             perm.size()};
  append(header, sizeof(header));
  append(shape.data(), shape.size_bytes());
  append(perm.data(), perm.size_bytes());
  return key;
}

}  // namespace

Expected<PlanPtr> PlanCache::GetOrCreate(std::span<const int64_t> shape,
                                         std::span<const int64_t> perm, size_t element_size,
                                         const PlanOptions& options) {
  std::string key = MakeKey(shape, perm, element_size, options);
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return it->second->second;
    }
    ++misses_;
  }
  // Plan outside the lock: planning is pure, and two threads racing on one key just build
  // equal plans, of which the first stored wins.
  IOTX_ASSIGN_OR_RETURN(PlanPtr plan, MakePlan(shape, perm, element_size, options));
  std::lock_guard lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->second;
  lru_.emplace_front(std::move(key), plan);
  index_.emplace(lru_.front().first, lru_.begin());
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return plan;
}

size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}
size_t PlanCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}
size_t PlanCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

PlanCache& PlanCache::Global() {
  // 1024 plans of a few hundred bytes each: every input of several large models.
  static PlanCache cache(1024);
  return cache;
}

}  // namespace iotx::runtime
