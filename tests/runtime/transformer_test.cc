#include "iotx/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "random_model.h"
#include "support/reference_transpose.h"

namespace iotx::test {
namespace {

Dims ExpectedOutputShape(const RandomInput& input) {
  if (!input.spec) return input.parameter.shape;
  Dims out;
  for (int64_t axis : input.spec->transpose) out.push_back(input.spec->reshape[axis]);
  return out;
}

// The attribute strings for a model, formatted here from SPEC section 5 (not by iotx).
NeffAttributes AttributesFor(const std::vector<RandomInput>& model) {
  NeffAttributes a;
  for (size_t i = 0; i < model.size(); ++i) {
    const std::string sep = i == 0 ? "" : ",";
    a.valid_inputs += sep + (Bytes(model[i].parameter) == 0 ? "0" : "1");
    a.neff_input_names += sep + model[i].parameter.name;
    if (i != 0) a.required_transpose += ";";
    if (model[i].spec) {
      for (size_t d = 0; d < model[i].spec->reshape.size(); ++d) {
        if (d != 0) a.required_transpose += ',';
        a.required_transpose += std::to_string(model[i].spec->reshape[d]);
      }
      a.required_transpose += "|";
      for (size_t d = 0; d < model[i].spec->transpose.size(); ++d) {
        if (d != 0) a.required_transpose += ',';
        a.required_transpose += std::to_string(model[i].spec->transpose[d]);
      }
    }
  }
  return a;
}

void CheckTransformer(const InputTransformer& t, const std::vector<RandomInput>& model,
                      uint64_t seed) {
  ASSERT_EQ(t.num_inputs(), model.size());
  for (size_t k = 0; k < model.size(); ++k) {
    SCOPED_TRACE("input " + std::to_string(k));
    const size_t bytes = Bytes(model[k].parameter);
    EXPECT_EQ(t.name(k), std::string_view(model[k].parameter.name));
    EXPECT_EQ(t.input_bytes(k), bytes);
    EXPECT_EQ(t.output_bytes(k), bytes);
    EXPECT_EQ(t.element_size(k), model[k].parameter.element_size);
    EXPECT_EQ(t.is_fed(k), bytes != 0);
    EXPECT_EQ(t.has_transpose(k), model[k].spec.has_value());
    EXPECT_EQ(Dims(*t.input_shape(k)), model[k].parameter.shape);
    EXPECT_EQ(Dims(*t.output_shape(k)), ExpectedOutputShape(model[k]));

    // Unaligned buffers: one byte past an aligned start on both sides.
    std::vector<std::byte> src = RandomBytes(bytes + 1, seed + k);
    std::vector<std::byte> dst(bytes + 2, std::byte{0xAB});
    ASSERT_TRUE(t.Apply(k, {src.data() + 1, bytes}, {dst.data() + 1, bytes}));
    std::vector<std::byte> in(src.begin() + 1, src.end());
    std::vector<std::byte> want = ReferenceOutput(model[k], in);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), dst.begin() + 1));  // want may be empty
    EXPECT_EQ(dst.front(), std::byte{0xAB});  // nothing written outside the output
    EXPECT_EQ(dst.back(), std::byte{0xAB});
    // Where the layout does not change, the output is the input.
    if (!*t.changes_layout(k)) {
      EXPECT_EQ(want, in);
    }
  }
}

TEST(InputTransformerTest, RandomModelsFromSpecsMatchTheReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    auto model = RandomModel(rng, 1 + static_cast<int>(rng() % 6));
    auto t = InputTransformer::FromSpecs(Specs(model), Parameters(model));
    ASSERT_TRUE(t) << t.error().ToString();
    EXPECT_TRUE(t->ignored_specs().empty());
    CheckTransformer(*t, model, static_cast<uint64_t>(trial) * 100);
  }
}

TEST(InputTransformerTest, RandomModelsFromAttributesMatchTheReference) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    auto model = RandomModel(rng, 1 + static_cast<int>(rng() % 6));
    std::vector<ParameterDesc> params = Parameters(model);
    for (ParameterDesc& p : params) p.name.clear();  // names come from neff_input_names
    auto t = InputTransformer::FromAttributes(AttributesFor(model), params);
    ASSERT_TRUE(t) << t.error().ToString() << "\nrequired_transpose="
                   << AttributesFor(model).required_transpose;
    CheckTransformer(*t, model, static_cast<uint64_t>(trial) * 100 + 50);
  }
}

TEST(InputTransformerTest, ApplyAllMatchesTheReferenceSmallAndLarge) {
  // The large model crosses the sizes where inputs run one after another over every thread
  // and where small ones run side by side.
  std::vector<RandomInput> model(4);
  model[0].parameter = {"a", {512, 768}, 4};
  model[0].spec = TransposeSpec{{512, 768}, {1, 0}};
  model[1].parameter = {"b", {64, 32, 48}, 2};
  model[1].spec = TransposeSpec{{64, 32, 4, 12}, {2, 0, 3, 1}};
  model[2].parameter = {"c", {1000}, 8};
  model[3].parameter = {"d", {300, 300}, 8};
  model[3].spec = TransposeSpec{{300, 300}, {1, 0}};
  for (int large = 0; large < 2; ++large) {
    const Dims first_shape = large ? Dims{512, 768} : Dims{8, 6};
    model[0].parameter.shape = first_shape;
    model[0].spec->reshape = first_shape;
    auto t = InputTransformer::FromSpecs(Specs(model), Parameters(model));
    ASSERT_TRUE(t) << t.error().ToString();
    std::vector<std::vector<std::byte>> srcs, dsts;
    std::vector<ConstBuffer> in;
    std::vector<MutableBuffer> out;
    for (size_t k = 0; k < model.size(); ++k) {
      srcs.push_back(RandomBytes(*t->input_bytes(k), 99 + k));
      dsts.emplace_back(*t->output_bytes(k));
    }
    for (size_t k = 0; k < model.size(); ++k) {
      in.push_back({srcs[k].data(), srcs[k].size()});
      out.push_back({dsts[k].data(), dsts[k].size()});
    }
    for (int max_threads : {0, 1, 2}) {
      for (auto& d : dsts) std::fill(d.begin(), d.end(), std::byte{0});
      ExecuteOptions options;
      options.max_threads = max_threads;
      ASSERT_TRUE(t->ApplyAll(in, out, options));
      for (size_t k = 0; k < model.size(); ++k) {
        EXPECT_EQ(dsts[k], ReferenceOutput(model[k], srcs[k]))
            << "input " << k << " large=" << large << " max_threads=" << max_threads;
      }
    }
  }
}

class InputTransformerErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    params_ = {{"x", {4, 6}, 4}, {"y", {10}, 2}, {"empty", {0, 3}, 4}};
    specs_.TryEmplace("x", TransposeSpec{{4, 6}, {1, 0}});
    auto t = InputTransformer::FromSpecs(specs_, params_);
    ASSERT_TRUE(t) << t.error().ToString();
    t_ = std::move(*t);
  }
  std::vector<ParameterDesc> params_;
  SpecMap specs_;
  InputTransformer t_;
};

TEST_F(InputTransformerErrorsTest, WrongSizesNullsAndIndices) {
  std::vector<std::byte> a(96), b(96);
  auto r = t_.Apply(0, {a.data(), 95}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kBufferSize);
  EXPECT_NE(r.error().message.find("\"x\""), std::string::npos);
  EXPECT_NE(r.error().message.find("96"), std::string::npos);

  r = t_.Apply(3, {a.data(), 96}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIndexOutOfRange);

  r = t_.Apply(0, {nullptr, 96}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);

  ExecuteOptions negative;
  negative.max_threads = -1;
  r = t_.Apply(0, {a.data(), 96}, {b.data(), 96}, negative);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);

  // A zero-sized input takes null, empty buffers.
  EXPECT_TRUE(t_.Apply(2, {nullptr, 0}, {nullptr, 0}));
  EXPECT_EQ(t_.is_fed(2), false);
}

TEST_F(InputTransformerErrorsTest, AccessorsAreChecked) {
  for (size_t bad : {size_t{3}, size_t{1000}, SIZE_MAX}) {
    EXPECT_EQ(t_.name(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.is_fed(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.has_transpose(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.changes_layout(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.input_shape(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.output_shape(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.element_size(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.input_bytes(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.output_bytes(bad).error().code, ErrorCode::kIndexOutOfRange);
    EXPECT_EQ(t_.range_granule(bad).error().code, ErrorCode::kIndexOutOfRange);
  }
  EXPECT_NE(t_.name(3).error().message.find("3 inputs"), std::string::npos);
  // An empty (or moved-from) transformer has no inputs and refuses every index.
  InputTransformer moved = std::move(t_);
  EXPECT_EQ(moved.num_inputs(), 3u);
  InputTransformer empty;
  EXPECT_EQ(empty.num_inputs(), 0u);
  EXPECT_EQ(empty.name(0).error().code, ErrorCode::kIndexOutOfRange);
  std::vector<std::byte> a(4), b(4);
  EXPECT_EQ(empty.Apply(0, {a.data(), 4}, {b.data(), 4}).error().code,
            ErrorCode::kIndexOutOfRange);
  EXPECT_TRUE(empty.ApplyAll({}, {}));
  EXPECT_EQ(empty.Describe(), "");
  EXPECT_TRUE(empty.ignored_specs().empty());
}

TEST_F(InputTransformerErrorsTest, OverlapIsRefusedExceptInPlaceCopies) {
  std::vector<std::byte> buf = RandomBytes(200, 5);
  auto r = t_.Apply(0, {buf.data(), 96}, {buf.data() + 8, 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("overlap"), std::string::npos);
  r = t_.Apply(0, {buf.data(), 96}, {buf.data(), 96});  // a transpose cannot run in place
  EXPECT_FALSE(r);

  const std::vector<std::byte> before = buf;
  EXPECT_TRUE(t_.Apply(1, {buf.data(), 20}, {buf.data(), 20}));  // no spec: in place is free
  EXPECT_EQ(buf, before);
  r = t_.Apply(1, {buf.data(), 20}, {buf.data() + 2, 20});  // overlapping, not in place
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(InputTransformerErrorsTest, ApplyAllChecksEverythingBeforeWriting) {
  std::vector<std::byte> x(96), y(20), dx(96, std::byte{7}), dy(20, std::byte{7});
  std::vector<ConstBuffer> in = {{x.data(), 96}, {y.data(), 20}, {nullptr, 0}};
  std::vector<MutableBuffer> out = {{dx.data(), 96}, {dy.data(), 19}, {nullptr, 0}};
  auto r = t_.ApplyAll(in, out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(dx, std::vector<std::byte>(96, std::byte{7}));  // input 0 was not written
  EXPECT_FALSE(t_.ApplyAll(std::span(in).first(2), out));
}

// Brute force: does any destination share a byte with any other buffer of the batch?
bool AnyForbiddenOverlap(const std::vector<ConstBuffer>& in, const std::vector<MutableBuffer>& out,
                         const std::vector<bool>& changes_layout) {
  struct Buffer {
    uintptr_t begin, end;
    size_t input;
    bool written;
  };
  std::vector<Buffer> all;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].size == 0) continue;
    const auto s = reinterpret_cast<uintptr_t>(in[i].data);
    const auto d = reinterpret_cast<uintptr_t>(out[i].data);
    const bool in_place = s == d && !changes_layout[i];
    if (!in_place) all.push_back({s, s + in[i].size, i, false});
    all.push_back({d, d + out[i].size, i, true});
  }
  for (size_t a = 0; a < all.size(); ++a) {
    for (size_t b = a + 1; b < all.size(); ++b) {
      if (!all[a].written && !all[b].written) continue;
      if (all[a].begin < all[b].end && all[b].begin < all[a].end) return true;
    }
  }
  return false;
}

TEST(InputTransformerOverlapTest, ApplyAllRefusesOverlapAcrossInputs) {
  std::vector<ParameterDesc> params = {{"a", {4, 6}, 4}, {"b", {4, 6}, 4}, {"c", {96}, 1}};
  SpecMap specs;
  specs.TryEmplace("a", TransposeSpec{{4, 6}, {1, 0}});
  specs.TryEmplace("b", TransposeSpec{{4, 6}, {1, 0}});
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t) << t.error().ToString();
  std::vector<std::byte> arena(1024, std::byte{1});
  std::byte* p = arena.data();
  auto batch = [&](size_t s0, size_t d0, size_t s1, size_t d1, size_t s2, size_t d2) {
    std::vector<ConstBuffer> in = {{p + s0, 96}, {p + s1, 96}, {p + s2, 96}};
    std::vector<MutableBuffer> out = {{p + d0, 96}, {p + d1, 96}, {p + d2, 96}};
    return t->ApplyAll(in, out);
  };
  EXPECT_TRUE(batch(0, 100, 200, 300, 400, 500));
  EXPECT_TRUE(batch(0, 100, 0, 300, 0, 500));  // sources may share bytes: they are only read
  EXPECT_TRUE(batch(0, 100, 200, 300, 400, 400));  // in place for the copy
  auto r = batch(0, 100, 200, 100, 400, 500);  // dsts[0] == dsts[1]
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("destination of parameter 1"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(batch(0, 100, 200, 0, 400, 500));   // dsts[1] == srcs[0]
  EXPECT_FALSE(batch(0, 100, 200, 50, 400, 500));  // dsts[1] cuts into srcs[0]'s tail
  EXPECT_FALSE(batch(0, 100, 200, 300, 150, 150));  // in-place copy inside dsts[0]
  EXPECT_FALSE(batch(0, 100, 200, 300, 400, 50));   // dsts[2] overlaps srcs[0] and dsts[0]
  EXPECT_TRUE(batch(0, 96, 192, 288, 384, 480));    // touching is not overlapping
}

TEST(InputTransformerOverlapTest, RandomBatchesAgreeWithBruteForce) {
  // 100 inputs (past the check's stack space) and 3: buffers placed at random in one arena.
  std::mt19937 rng(3);
  for (size_t n : {size_t{3}, size_t{100}}) {
    std::vector<ParameterDesc> params;
    SpecMap specs;
    for (size_t i = 0; i < n; ++i) {
      params.push_back({Numbered("p", i), {2, 3}, 1});
      if (i % 3 != 0) specs.TryEmplace(Numbered("p", i), TransposeSpec{{2, 3}, {1, 0}});
    }
    auto t = InputTransformer::FromSpecs(specs, params);
    ASSERT_TRUE(t) << t.error().ToString();
    std::vector<bool> changes;
    for (size_t i = 0; i < n; ++i) changes.push_back(*t->changes_layout(i));
    std::vector<std::byte> arena(n * 40);
    int refused = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<ConstBuffer> in;
      std::vector<MutableBuffer> out;
      // Mostly disjoint slots, with a few random collisions.
      for (size_t i = 0; i < n; ++i) {
        size_t s = 12 * (2 * i), d = 12 * (2 * i + 1);
        if (rng() % (n * 2) == 0) s = rng() % (arena.size() - 6);
        if (rng() % (n * 2) == 0) d = rng() % (arena.size() - 6);
        if (rng() % (n * 4) == 0) d = s;
        in.push_back({arena.data() + s, 6});
        out.push_back({arena.data() + d, 6});
      }
      const bool forbidden = AnyForbiddenOverlap(in, out, changes);
      Status r = t->ApplyAll(in, out);
      ASSERT_EQ(r.has_value(), !forbidden) << "trial " << trial << " n " << n << ": "
                                           << (r ? std::string("accepted") : r.error().ToString());
      refused += forbidden;
    }
    EXPECT_GT(refused, 10);  // the random placements did test refusals
    EXPECT_LT(refused, 290);
  }
}

TEST(InputTransformerBuildTest, RejectsSpecsThatDoNotFitTheParameter) {
  SpecMap specs;
  specs.TryEmplace("x", TransposeSpec{{5, 5}, {1, 0}});
  std::vector<ParameterDesc> params = {{"x", {4, 6}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kReshapeSizeMismatch);
  EXPECT_EQ(t.error().key, "x");

  SpecMap bad_perm;
  bad_perm.TryEmplace("x", TransposeSpec{{4, 6}, {0, 0}});
  t = InputTransformer::FromSpecs(bad_perm, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kNotPermutation);
}

TEST(InputTransformerBuildTest, RejectsBadParameters) {
  SpecMap none;
  std::vector<ParameterDesc> dup = {{"x", {2}, 4}, {"x", {3}, 4}};
  EXPECT_FALSE(InputTransformer::FromSpecs(none, dup));
  std::vector<ParameterDesc> unnamed = {{"", {2}, 4}};
  EXPECT_FALSE(InputTransformer::FromSpecs(none, unnamed));
  std::vector<ParameterDesc> zero_elem = {{"x", {2}, 0}};
  EXPECT_FALSE(InputTransformer::FromSpecs(none, zero_elem));
  Dims deep(65, 1);
  std::vector<ParameterDesc> too_deep = {{"x", deep, 4}};
  EXPECT_EQ(InputTransformer::FromSpecs(none, too_deep).error().code, ErrorCode::kUnsupported);
  std::vector<ParameterDesc> overflow = {{"x", {int64_t{1} << 40, int64_t{1} << 30}, 4}};
  EXPECT_EQ(InputTransformer::FromSpecs(none, overflow).error().code, ErrorCode::kDimOverflow);
}

TEST(InputTransformerBuildTest, NegativeDimsAreE111NotOverflow) {
  std::vector<ParameterDesc> negative = {{"x", {-2}, 4}};
  auto t = InputTransformer::FromSpecs({}, negative);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kNegativeDim) << t.error().ToString();
  // Also when another dim is zero (the product alone would hide the sign).
  negative[0].shape = {0, -3};
  EXPECT_EQ(InputTransformer::FromSpecs({}, negative).error().code, ErrorCode::kNegativeDim);
  negative[0].name = "";
  EXPECT_EQ(InputTransformer::FromAttributes({"0", "", ""}, negative).error().code,
            ErrorCode::kNegativeDim);
}

TEST(InputTransformerBuildTest, UnmatchedSpecNamesAreAnErrorUnlessIgnored) {
  SpecMap specs;
  specs.TryEmplace("ghost", TransposeSpec{{2, 2}, {1, 0}});
  specs.TryEmplace("x", TransposeSpec{{2, 2}, {1, 0}});
  specs.TryEmplace("phantom", TransposeSpec{{4}, {0}});
  std::vector<ParameterDesc> params = {{"x", {2, 2}, 4}, {"y", {3}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kUnknownInput);
  EXPECT_NE(t.error().message.find("\"ghost\""), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("nor are \"phantom\""), std::string::npos)
      << t.error().message;
  EXPECT_NE(t.error().message.find("\"x\", \"y\""), std::string::npos) << t.error().message;
  EXPECT_EQ(t.error().key, "ghost");

  BuildOptions lenient;
  lenient.ignore_unmatched_specs = true;
  t = InputTransformer::FromSpecs(specs, params, lenient);
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(t->has_transpose(0), true);
  EXPECT_EQ(t->has_transpose(1), false);
  ASSERT_EQ(t->ignored_specs().size(), 2u);
  EXPECT_EQ(t->ignored_specs()[0], "ghost");
  EXPECT_EQ(t->ignored_specs()[1], "phantom");
  EXPECT_NE(t->Describe().find("ignored io_transposes entries (no such parameter): \"ghost\""),
            std::string::npos)
      << t->Describe();
}

TEST(InputTransformerBuildTest, ManyUnmatchedNamesAreListedBriefly) {
  SpecMap specs;
  for (size_t i = 0; i < 50; ++i) specs.TryEmplace(Numbered("n", i), {{1}, {0}});
  std::vector<ParameterDesc> params = {{"x", {1}, 4}};
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("\"n8\", ..."), std::string::npos) << t.error().message;
  EXPECT_EQ(t.error().message.find("\"n9\""), std::string::npos) << t.error().message;
}

TEST(InputTransformerBuildTest, AttributesMustAgreeWithTheParameters) {
  std::vector<ParameterDesc> params = {{"", {4, 6}, 4}, {"", {0}, 4}};
  // A fed-flag of 0 on a non-empty parameter is a contradiction.
  auto t = InputTransformer::FromAttributes({"0,0", ";", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
  // So is a fed-flag of 1 on a zero-sized parameter.
  t = InputTransformer::FromAttributes({"1,1", ";", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(t.error().message.find("no elements"), std::string::npos) << t.error().message;
  // Wrong number of entries.
  t = InputTransformer::FromAttributes({"1,0,1", ";", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().key, "valid_inputs");
  t = InputTransformer::FromAttributes({"1,0", "4,6|1,0", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().key, "required_transpose");
  // Malformed spec text.
  t = InputTransformer::FromAttributes({"1,0", "4,x|1,0;", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kAttributeSyntax);
  // And the good one.
  t = InputTransformer::FromAttributes({"1,0", "4,6|1,0;", "a,b"}, params);
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(t->name(1), std::string_view("b"));
  EXPECT_EQ(Dims(*t->output_shape(0)), (Dims{6, 4}));
}

TEST(InputTransformerBuildTest, IdentitySpecsRunInPlaceForFree) {
  std::vector<ParameterDesc> params = {{"", {4, 6}, 4}, {"", {24}, 4}, {"", {4, 6}, 4}};
  auto t = InputTransformer::FromAttributes({"1,1,1", "4,6|0,1;1,24|1,0;4,6|1,0", ""}, params);
  ASSERT_TRUE(t) << t.error().ToString();
  EXPECT_EQ(t->has_transpose(0), true);
  EXPECT_EQ(t->changes_layout(0), false);
  EXPECT_EQ(t->changes_layout(1), false);
  EXPECT_EQ(t->changes_layout(2), true);
  EXPECT_EQ(Dims(*t->output_shape(1)), (Dims{24, 1}));
  std::vector<std::byte> buf = RandomBytes(96, 8);
  const std::vector<std::byte> before = buf;
  EXPECT_TRUE(t->Apply(0, {buf.data(), 96}, {buf.data(), 96}));
  EXPECT_TRUE(t->Apply(1, {buf.data(), 96}, {buf.data(), 96}));
  EXPECT_EQ(buf, before);
  EXPECT_FALSE(t->Apply(2, {buf.data(), 96}, {buf.data(), 96}));
  EXPECT_NE(t->Describe().find("layout unchanged"), std::string::npos);
}

TEST(InputTransformerBuildTest, EchoedInputIsCapped) {
  // A 1 MiB required_transpose: the message quotes a bounded piece of it.
  std::string huge(1 << 20, '7');
  std::vector<ParameterDesc> params = {{"", {4}, 4}};
  auto t = InputTransformer::FromAttributes({"1", huge + "|0", ""}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kAttributeSyntax);
  EXPECT_LT(t.error().message.size(), 1100u) << t.error().message.substr(0, 2000);
  EXPECT_NE(t.error().message.find("bytes)"), std::string::npos) << t.error().message;
  // A syntactically valid spec of 300000 dims: the message keeps its head and its tail.
  std::string dims, perm;
  for (int i = 0; i < 300000; ++i) {
    dims += i ? ",1" : "1";
    if (i != 0) perm += ',';
    perm += std::to_string(i == 0 ? 1 : i == 1 ? 0 : i);
  }
  t = InputTransformer::FromAttributes({"1", dims + "|" + perm, ""}, params);
  ASSERT_FALSE(t);
  EXPECT_LE(t.error().message.size(), 1024u);
  // A long parameter name.
  std::vector<ParameterDesc> named = {{std::string(100000, 'n'), {4}, 0}};
  t = InputTransformer::FromSpecs({}, named);
  ASSERT_FALSE(t);
  EXPECT_LT(t.error().ToString().size(), 1024u);
}

TEST(InputTransformerDescribeTest, NamesEveryInputAndItsPlan) {
  std::vector<ParameterDesc> params = {{"p0", {6144, 256}, 2}, {"b", {7}, 8}, {"z", {0, 5}, 4}};
  SpecMap specs;
  specs.TryEmplace("p0", TransposeSpec{{3, 2048, 2, 128}, {0, 3, 2, 1}});
  auto t = InputTransformer::FromSpecs(specs, params);
  ASSERT_TRUE(t) << t.error().ToString();
  const std::string text = t->Describe();
  EXPECT_NE(text.find("input 0 \"p0\": [6144, 256] x 2 B -> reshape [3, 2048, 2, 128] transpose "
                      "[0, 3, 2, 1] -> [3, 128, 2, 2048]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    strategy:"), std::string::npos) << text;  // the plan, indented
  EXPECT_NE(text.find("input 1 \"b\": [7] x 8 B, no spec"), std::string::npos) << text;
  EXPECT_NE(text.find("input 2 \"z\": [0, 5] x 4 B, not fed"), std::string::npos) << text;
}

}  // namespace
}  // namespace iotx::test
