// Apply and ApplyAll make no heap allocation once the transformer is built (single-threaded
// plans; oneTBB's own task pool is outside what this counts). Counted by replacing the global
// operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "iotx/iotx.h"
#include "iotx/runtime.h"
#include "support/reference_transpose.h"

// Every operator new here is std::malloc and every operator delete std::free, which GCC cannot
// see across the replacement and reports as a mismatch.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool counting = false;
thread_local size_t allocations = 0;
}  // namespace

void* operator new(size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
// The nothrow forms too (std::stable_sort's buffer uses them), so that every block this binary
// frees with std::free came from std::malloc.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (counting) ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace iotx::test {
namespace {

TEST(AllocationTest, ApplyAllocatesNothing) {
  SpecMap specs;
  specs.TryEmplace("a", TransposeSpec{{64, 3, 40}, {2, 0, 1}});
  specs.TryEmplace("b", TransposeSpec{{128, 96}, {1, 0}});
  std::vector<ParameterDesc> params = {{"a", {64, 120}, 2}, {"b", {128, 96}, 4}, {"c", {77}, 1}};
  PlanOptions single_thread;
  single_thread.max_threads = 1;
  auto t = InputTransformer::FromSpecs(specs, params, single_thread);
  ASSERT_TRUE(t) << t.error().ToString();

  std::vector<std::vector<std::byte>> src, dst;
  std::vector<ConstBuffer> in;
  std::vector<MutableBuffer> out;
  for (size_t k = 0; k < params.size(); ++k) {
    src.push_back(RandomBytes(t->input_bytes(k), k));
    dst.emplace_back(t->output_bytes(k));
  }
  for (size_t k = 0; k < params.size(); ++k) {
    in.push_back({src[k].data(), src[k].size()});
    out.push_back({dst[k].data(), dst[k].size()});
  }

  allocations = 0;
  counting = true;
  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < params.size(); ++k) ok = ok && t->Apply(k, in[k], out[k]).has_value();
    ok = ok && t->ApplyAll(in, out).has_value();
  }
  counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0u);

  // The check itself works: an allocation while counting is seen. (A direct call, because a
  // new-expression whose result is unused may be optimized away.)
  counting = true;
  void* p = ::operator new(16);
  counting = false;
  ::operator delete(p);
  EXPECT_EQ(allocations, 1u);
}

}  // namespace
}  // namespace iotx::test
