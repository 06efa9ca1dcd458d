// Apply and ApplyAll make no heap allocation once the transformer is built (single-threaded
// plans; oneTBB's own task pool is outside what this counts). Counted by replacing the global
// operator new in this test binary, which can also make every allocation fail: the C API then
// still reports errors (the static out-of-memory error), never a NULL that reads as success.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "iotx/iotx.h"
#include "iotx/runtime.h"
#include "random_model.h"
#include "support/reference_transpose.h"

// Every operator new here is std::malloc and every operator delete std::free, which GCC cannot
// see across the replacement and reports as a mismatch.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
thread_local bool counting = false;
thread_local size_t allocations = 0;
thread_local bool failing = false;  // every operator new on this thread fails
}  // namespace

void* operator new(size_t size) {
  if (counting) ++allocations;
  if (failing) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) { return operator new(size); }
// The nothrow forms too (std::stable_sort's buffer uses them), so that every block this binary
// frees with std::free came from std::malloc.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (counting) ++allocations;
  if (failing) return nullptr;
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
  BuildOptions single_thread;
  single_thread.plan.max_threads = 1;
  auto t = InputTransformer::FromSpecs(specs, params, single_thread);
  ASSERT_TRUE(t) << t.error().ToString();

  std::vector<std::vector<std::byte>> src, dst;
  std::vector<ConstBuffer> in;
  std::vector<MutableBuffer> out;
  for (size_t k = 0; k < params.size(); ++k) {
    src.push_back(RandomBytes(*t->input_bytes(k), k));
    dst.emplace_back(*t->output_bytes(k));
  }
  for (size_t k = 0; k < params.size(); ++k) {
    in.push_back({src[k].data(), src[k].size()});
    out.push_back({dst[k].data(), dst[k].size()});
  }

  // The C API's batch over parallel arrays, and per-call options.
  std::vector<const void*> srcs;
  std::vector<void*> dsts;
  std::vector<size_t> sizes;
  for (size_t k = 0; k < params.size(); ++k) {
    srcs.push_back(src[k].data());
    dsts.push_back(dst[k].data());
    sizes.push_back(src[k].size());
  }
  iotx_transformer* c = nullptr;
  const std::string json = R"([{"input_name": "a", "reshape": [64, 3, 40], "transpose": [2, 0, 1]}])";
  int64_t dims_a[2] = {64, 120}, dims_b[2] = {128, 96}, dims_c[1] = {77};
  iotx_parameter c_params[3] = {{"a", dims_a, 2, 2}, {"b", dims_b, 2, 4}, {"c", dims_c, 1, 1}};
  ASSERT_EQ(iotx_transformer_from_json(json.data(), json.size(), c_params, 3, &c), nullptr);
  ExecuteOptions calling_thread;
  calling_thread.max_threads = 1;
  iotx_apply_options c_options = IOTX_APPLY_OPTIONS_INIT;
  c_options.max_threads = 1;

  allocations = 0;
  counting = true;
  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < params.size(); ++k) {
      ok = ok && t->Apply(k, in[k], out[k]).has_value();
      ok = ok && t->Apply(k, in[k], out[k], calling_thread).has_value();
    }
    ok = ok && t->ApplyAll(in, out).has_value();
    ok = ok && t->ApplyAll(in, out, calling_thread).has_value();
    ok = ok && iotx_transformer_apply(c, 0, srcs[0], sizes[0], dsts[0], sizes[0]) == nullptr;
    ok = ok && iotx_transformer_apply_ex(c, 1, srcs[1], sizes[1], dsts[1], sizes[1],
                                         &c_options) == nullptr;
    ok = ok && iotx_transformer_apply_all(c, srcs.data(), sizes.data(), dsts.data(),
                                          sizes.data(), 3) == nullptr;
  }
  counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0u);
  iotx_transformer_free(c);

  // The check itself works: an allocation while counting is seen. (A direct call, because a
  // new-expression whose result is unused may be optimized away.)
  counting = true;
  void* p = ::operator new(16);
  counting = false;
  ::operator delete(p);
  EXPECT_EQ(allocations, 1u);
}

TEST(AllocationTest, ABatchOfManyInputsAllocatesOnlyOnItsThreadsFirstCall) {
  // Past 64 inputs the overlap check sorts in a per-thread array, grown once.
  std::vector<ParameterDesc> params;
  for (int i = 0; i < 100; ++i) params.push_back({Numbered("p", i), {16}, 4});
  auto t = InputTransformer::FromSpecs({}, params);
  ASSERT_TRUE(t);
  std::vector<std::vector<std::byte>> src(100, std::vector<std::byte>(64)), dst = src;
  std::vector<ConstBuffer> in;
  std::vector<MutableBuffer> out;
  for (size_t k = 0; k < 100; ++k) {
    in.push_back({src[k].data(), 64});
    out.push_back({dst[k].data(), 64});
  }
  ASSERT_TRUE(t->ApplyAll(in, out));
  allocations = 0;
  counting = true;
  const bool ok = t->ApplyAll(in, out).has_value() && t->ApplyAll(in, out).has_value();
  counting = false;
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0u);
}

TEST(AllocationTest, WithoutMemoryTheCApiStillReportsErrors) {
  int64_t dims[2] = {4, 6};
  iotx_parameter p = {"w", dims, 2, 4};
  iotx_transformer* t = nullptr;
  const std::string json = R"([{"input_name": "w", "reshape": [6, 4], "transpose": [1, 0]}])";
  ASSERT_EQ(iotx_transformer_from_json(json.data(), json.size(), &p, 1, &t), nullptr);
  std::vector<std::byte> src(96), dst(96);

  failing = true;
  // An apply with a bad index must fail although its error cannot be allocated.
  iotx_error* e = iotx_transformer_apply(t, 7, src.data(), 96, dst.data(), 96);
  // Building fails too: out of memory, and *out stays NULL.
  iotx_transformer* t2 = reinterpret_cast<iotx_transformer*>(0x1);
  iotx_error* e2 = iotx_transformer_from_json(json.data(), json.size(), &p, 1, &t2);
  size_t length = 0;
  iotx_error* e3 = iotx_transformer_describe(t, nullptr, 0, &length);
  // A good apply needs no memory and still succeeds.
  iotx_error* ok = iotx_transformer_apply(t, 0, src.data(), 96, dst.data(), 96);
  failing = false;

  ASSERT_NE(e, nullptr);
  EXPECT_EQ(iotx_error_enum(e), IOTX_E901);
  EXPECT_STREQ(iotx_error_code(e), "IOTX_E901");
  EXPECT_NE(std::string(iotx_error_message(e)).find("out of memory"), std::string::npos);
  ASSERT_NE(e2, nullptr);
  EXPECT_EQ(iotx_error_enum(e2), IOTX_E901);
  EXPECT_EQ(t2, nullptr);
  ASSERT_NE(e3, nullptr);
  EXPECT_EQ(iotx_error_enum(e3), IOTX_E901);
  EXPECT_EQ(ok, nullptr);
  iotx_error_free(e);  // the static error: freeing it is a no-op, as often as it is returned
  iotx_error_free(e2);
  iotx_error_free(e3);
  iotx_transformer_free(t);
}

}  // namespace
}  // namespace iotx::test
