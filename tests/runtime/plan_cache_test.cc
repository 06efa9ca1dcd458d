#include "runtime/plan_cache.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace iotx::runtime {
namespace {

TEST(PlanCacheTest, ReusesPlansForEqualProblems) {
  PlanCache cache(4);
  const int64_t shape[] = {64, 32};
  const int64_t perm[] = {1, 0};
  auto a = cache.GetOrCreate(shape, perm, 4, {});
  auto b = cache.GetOrCreate(shape, perm, 4, {});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  // Any difference in the problem or the options is another plan.
  auto c = cache.GetOrCreate(shape, perm, 2, {});
  PlanOptions single;
  single.max_threads = 1;
  auto d = cache.GetOrCreate(shape, perm, 4, single);
  ASSERT_TRUE(c && d);
  EXPECT_NE(c->get(), a->get());
  EXPECT_NE(d->get(), a->get());
  EXPECT_EQ(cache.size(), 3u);
}

TEST(PlanCacheTest, EvictsTheLeastRecentlyUsed) {
  PlanCache cache(2);
  const int64_t perm[] = {1, 0};
  const int64_t s1[] = {2, 3}, s2[] = {3, 4}, s3[] = {4, 5};
  auto p1 = cache.GetOrCreate(s1, perm, 4, {});
  (void)cache.GetOrCreate(s2, perm, 4, {});
  (void)cache.GetOrCreate(s1, perm, 4, {});  // s1 is now the most recent
  (void)cache.GetOrCreate(s3, perm, 4, {});  // evicts s2
  EXPECT_EQ(cache.size(), 2u);
  const size_t misses = cache.misses();
  (void)cache.GetOrCreate(s1, perm, 4, {});
  EXPECT_EQ(cache.misses(), misses);
  (void)cache.GetOrCreate(s2, perm, 4, {});
  EXPECT_EQ(cache.misses(), misses + 1);
}

TEST(PlanCacheTest, ErrorsAreReturnedAndNotCached) {
  PlanCache cache(4);
  const int64_t shape[] = {2, 3};
  const int64_t bad[] = {0, 0};
  EXPECT_FALSE(cache.GetOrCreate(shape, bad, 4, {}));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(PlanCacheTest, ConcurrentLookupsAgree) {
  PlanCache cache(8);
  const int64_t shape[] = {16, 8, 4};
  const int64_t perm[] = {2, 0, 1};
  std::vector<const Plan*> seen(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 100; ++j) {
        auto p = cache.GetOrCreate(shape, perm, 4, {});
        ASSERT_TRUE(p);
        seen[i] = p->get();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Plan* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace iotx::runtime
