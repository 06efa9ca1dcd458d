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

// What input k must look like on the device, computed by the naive reference.
std::vector<std::byte> ReferenceOutput(const RandomInput& input, const std::vector<std::byte>& src) {
  if (!input.spec) return src;
  return ReferenceTranspose(src.data(), input.spec->reshape, input.spec->transpose,
                            input.parameter.element_size);
}

Dims ExpectedOutputShape(const RandomInput& input) {
  if (!input.spec) return input.parameter.shape;
  Dims out;
  for (int64_t axis : input.spec->transpose) out.push_back(input.spec->reshape[axis]);
  return out;
}

size_t Bytes(const ParameterDesc& p) {
  size_t n = p.element_size;
  for (int64_t d : p.shape) n *= static_cast<size_t>(d);
  return n;
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

std::vector<ParameterDesc> Parameters(const std::vector<RandomInput>& model) {
  std::vector<ParameterDesc> params;
  for (const RandomInput& input : model) params.push_back(input.parameter);
  return params;
}

SpecMap Specs(const std::vector<RandomInput>& model) {
  SpecMap specs;
  for (const RandomInput& input : model) {
    if (input.spec) specs.TryEmplace(input.parameter.name, *input.spec);
  }
  return specs;
}

void CheckTransformer(const InputTransformer& t, const std::vector<RandomInput>& model,
                      uint64_t seed) {
  ASSERT_EQ(t.num_inputs(), model.size());
  for (size_t k = 0; k < model.size(); ++k) {
    SCOPED_TRACE("input " + std::to_string(k));
    const size_t bytes = Bytes(model[k].parameter);
    EXPECT_EQ(t.name(k), model[k].parameter.name);
    EXPECT_EQ(t.input_bytes(k), bytes);
    EXPECT_EQ(t.output_bytes(k), bytes);
    EXPECT_EQ(t.is_fed(k), bytes != 0);
    EXPECT_EQ(t.has_transpose(k), model[k].spec.has_value());
    const Dims out_shape = ExpectedOutputShape(model[k]);
    EXPECT_EQ(Dims(t.output_shape(k)), out_shape);

    // Unaligned buffers: one byte past an aligned start on both sides.
    std::vector<std::byte> src = RandomBytes(bytes + 1, seed + k);
    std::vector<std::byte> dst(bytes + 2, std::byte{0xAB});
    ASSERT_TRUE(t.Apply(k, {src.data() + 1, bytes}, {dst.data() + 1, bytes}));
    std::vector<std::byte> in(src.begin() + 1, src.end());
    std::vector<std::byte> want = ReferenceOutput(model[k], in);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), dst.begin() + 1));  // want may be empty
    EXPECT_EQ(dst.front(), std::byte{0xAB});  // nothing written outside the output
    EXPECT_EQ(dst.back(), std::byte{0xAB});
  }
}

TEST(InputTransformerTest, RandomModelsFromSpecsMatchTheReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    auto model = RandomModel(rng, 1 + static_cast<int>(rng() % 6));
    std::vector<Warning> warnings;
    auto t = InputTransformer::FromSpecs(Specs(model), Parameters(model), {}, &warnings);
    ASSERT_TRUE(t) << t.error().ToString();
    EXPECT_TRUE(warnings.empty());
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
  // The large model crosses the size where inputs are spread across threads.
  std::vector<RandomInput> model(3);
  model[0].parameter = {"a", {512, 768}, 4};
  model[0].spec = TransposeSpec{{512, 768}, {1, 0}};
  model[1].parameter = {"b", {64, 32, 48}, 2};
  model[1].spec = TransposeSpec{{64, 32, 4, 12}, {2, 0, 3, 1}};
  model[2].parameter = {"c", {1000}, 8};
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
      srcs.push_back(RandomBytes(t->input_bytes(k), 99 + k));
      dsts.emplace_back(t->output_bytes(k));
    }
    for (size_t k = 0; k < model.size(); ++k) {
      in.push_back({srcs[k].data(), srcs[k].size()});
      out.push_back({dsts[k].data(), dsts[k].size()});
    }
    ASSERT_TRUE(t->ApplyAll(in, out));
    for (size_t k = 0; k < model.size(); ++k) {
      EXPECT_EQ(dsts[k], ReferenceOutput(model[k], srcs[k])) << "input " << k << " large=" << large;
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
    t_ = std::make_unique<InputTransformer>(std::move(*t));
  }
  std::vector<ParameterDesc> params_;
  SpecMap specs_;
  std::unique_ptr<InputTransformer> t_;
};

TEST_F(InputTransformerErrorsTest, WrongSizesNullsAndIndices) {
  std::vector<std::byte> a(96), b(96);
  auto r = t_->Apply(0, {a.data(), 95}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kBufferSize);
  EXPECT_NE(r.error().message.find("\"x\""), std::string::npos);
  EXPECT_NE(r.error().message.find("96"), std::string::npos);

  r = t_->Apply(3, {a.data(), 96}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kIndexOutOfRange);

  r = t_->Apply(0, {nullptr, 96}, {b.data(), 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);

  // A zero-sized input takes null, empty buffers.
  EXPECT_TRUE(t_->Apply(2, {nullptr, 0}, {nullptr, 0}));
  EXPECT_FALSE(t_->is_fed(2));
}

TEST_F(InputTransformerErrorsTest, OverlapIsRefusedExceptInPlaceCopies) {
  std::vector<std::byte> buf = RandomBytes(200, 5);
  auto r = t_->Apply(0, {buf.data(), 96}, {buf.data() + 8, 96});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("overlap"), std::string::npos);
  r = t_->Apply(0, {buf.data(), 96}, {buf.data(), 96});  // a transpose cannot run in place
  EXPECT_FALSE(r);

  const std::vector<std::byte> before = buf;
  EXPECT_TRUE(t_->Apply(1, {buf.data(), 20}, {buf.data(), 20}));  // no spec: in place is free
  EXPECT_EQ(buf, before);
}

TEST_F(InputTransformerErrorsTest, ApplyAllChecksEverythingBeforeWriting) {
  std::vector<std::byte> x(96), y(20), dx(96, std::byte{7}), dy(20, std::byte{7});
  std::vector<ConstBuffer> in = {{x.data(), 96}, {y.data(), 20}, {nullptr, 0}};
  std::vector<MutableBuffer> out = {{dx.data(), 96}, {dy.data(), 19}, {nullptr, 0}};
  auto r = t_->ApplyAll(in, out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kBufferSize);
  EXPECT_EQ(dx, std::vector<std::byte>(96, std::byte{7}));  // input 0 was not written
  EXPECT_FALSE(t_->ApplyAll(std::span(in).first(2), out));
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
  std::vector<ParameterDesc> negative = {{"x", {-2}, 4}};
  EXPECT_FALSE(InputTransformer::FromSpecs(none, negative));
}

TEST(InputTransformerBuildTest, UnknownSpecNamesAreIgnoredWithAWarning) {
  SpecMap specs;
  specs.TryEmplace("ghost", TransposeSpec{{2, 2}, {1, 0}});
  std::vector<ParameterDesc> params = {{"x", {2, 2}, 4}};
  std::vector<Warning> warnings;
  auto t = InputTransformer::FromSpecs(specs, params, {}, &warnings);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_transpose(0));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].message.find("ghost"), std::string::npos);
}

TEST(InputTransformerBuildTest, AttributesMustAgreeWithTheParameters) {
  std::vector<ParameterDesc> params = {{"", {4, 6}, 4}, {"", {0}, 4}};
  // A fed-flag of 0 on a non-empty parameter is a contradiction.
  auto t = InputTransformer::FromAttributes({"0,0", ";", "a,b"}, params);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kInvalidArgument);
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
  EXPECT_EQ(t->name(1), "b");
  EXPECT_EQ(Dims(t->output_shape(0)), (Dims{6, 4}));
}

}  // namespace
}  // namespace iotx::test
