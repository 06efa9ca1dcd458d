// Simplify: the worked example and the literal edges of SPEC section 2. Expected values are
// derived by hand from the rule's text; the property tests cover the rest.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "iotx/spec.h"
#include "support/reference_transpose.h"

namespace iotx {
// Named, not anonymous: the test binary is compiled as one unity translation unit, where
// the other test files' helpers of the same names would collide.
namespace simplify_test {

TransposeSpec Spec(Dims reshape, Dims transpose) {
  return {std::move(reshape), std::move(transpose)};
}

TransposeSpec SimplifyOk(const TransposeSpec& spec, std::initializer_list<int64_t> orig) {
  const std::vector<int64_t> shape(orig);
  Expected<TransposeSpec> out = Simplify(spec, shape);
  EXPECT_TRUE(out) << out.error().ToString();
  return out ? *out : TransposeSpec{};
}

// The same bytes come out of both specs for one input of `orig`'s element count.
bool SameLayout(const TransposeSpec& a, const TransposeSpec& b) {
  const int64_t count = *CheckedProduct(a.reshape);
  const auto src = test::RandomBytes(static_cast<size_t>(count) * 2, 7);
  return test::ReferenceTranspose(src.data(), a.reshape, a.transpose, 2) ==
         test::ReferenceTranspose(src.data(), b.reshape, b.transpose, 2);
}

TEST(SimplifyTest, WorkedExampleFromTheSource) {
  const TransposeSpec out =
      SimplifyOk(Spec({3, 16, 128, 2, 2, 64}, {0, 4, 5, 3, 1, 2}), {6144, 256});
  EXPECT_EQ(out, Spec({3, 2048, 2, 128}, {0, 3, 2, 1}));
  EXPECT_EQ(ToJson(out), R"({"reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]})");
}

TEST(SimplifyTest, IdentityAcrossAnOriginalBoundaryStaysAsIs) {
  EXPECT_EQ(SimplifyOk(Spec({4, 6}, {0, 1}), {4, 6}), Spec({4, 6}, {0, 1}));
}

// The guard is what keeps these unmerged: each merge would be layout-preserving (checked with
// the reference transpose), so only the original-boundary rule forbids it. Dropping the guard
// makes these tests fail.
TEST(SimplifyTest, OriginalBoundaryGuardBlocksLayoutPreservingMerges) {
  // Axes 1,2 are neighbours in the transpose, but 2*3 = 6 is orig's interior boundary.
  const TransposeSpec refined = Spec({2, 3, 4}, {1, 2, 0});
  const TransposeSpec merged = Spec({2, 12}, {1, 0});
  ASSERT_TRUE(SameLayout(refined, merged));
  EXPECT_EQ(SimplifyOk(refined, {6, 4}), refined);
  // Without an interior boundary at 6 the same spec does merge.
  EXPECT_EQ(SimplifyOk(refined, {24}), merged);
  EXPECT_EQ(SimplifyOk(refined, {2, 12}), merged);

  // Reshape equal to orig: every boundary is an original one, nothing merges.
  const TransposeSpec plain = Spec({2, 3, 4}, {2, 0, 1});
  ASSERT_TRUE(SameLayout(plain, Spec({6, 4}, {1, 0})));
  EXPECT_EQ(SimplifyOk(plain, {2, 3, 4}), plain);

  // A boundary is blocked if it equals ANY interior original boundary, not just its own.
  EXPECT_EQ(SimplifyOk(Spec({4, 4, 4}, {1, 2, 0}), {16, 2, 2}), Spec({4, 4, 4}, {1, 2, 0}));
  EXPECT_EQ(SimplifyOk(Spec({4, 4, 4}, {1, 2, 0}), {32, 2}), Spec({4, 16}, {1, 0}));
}

TEST(SimplifyTest, RunsMergeAndTheTransposeIsRenumbered) {
  // 1,2,3 are consecutive in the transpose; orig has no interior boundary.
  EXPECT_EQ(SimplifyOk(Spec({5, 2, 3, 7}, {1, 2, 3, 0}), {210}), Spec({5, 42}, {1, 0}));
  // Full identity collapses to one dim when orig is 1-D.
  EXPECT_EQ(SimplifyOk(Spec({2, 3, 4}, {0, 1, 2}), {24}), Spec({24}, {0}));
  // Two separate runs.
  EXPECT_EQ(SimplifyOk(Spec({2, 3, 5, 7}, {2, 3, 0, 1}), {210}), Spec({6, 35}, {1, 0}));
}

TEST(SimplifyTest, SimplifyingASimplifiedSpecChangesNothing) {
  const std::vector<int64_t> orig = {6144, 256};
  const TransposeSpec once = *Simplify(Spec({3, 16, 128, 2, 2, 64}, {0, 4, 5, 3, 1, 2}), orig);
  EXPECT_EQ(*Simplify(once, orig), once);
}

TEST(SimplifyTest, ZeroSizedDimsFollowTheLiteralRule) {
  // orig [0, 4]: the interior boundary is 0 and every running product of R is 0 -> no merge.
  EXPECT_EQ(SimplifyOk(Spec({0, 2, 2}, {0, 1, 2}), {0, 4}), Spec({0, 2, 2}, {0, 1, 2}));
  // orig [4, 0]: boundary 4. R's running products 2, 4, 0: only the first boundary merges.
  EXPECT_EQ(SimplifyOk(Spec({2, 2, 0}, {0, 1, 2}), {4, 0}), Spec({4, 0}, {0, 1}));
  // orig [0] has no interior boundary: everything consecutive merges.
  EXPECT_EQ(SimplifyOk(Spec({0, 3}, {0, 1}), {0}), Spec({0}, {0}));
  // orig [3, 0, 2]: boundaries 3 and 0. R running products 3, 0: both blocked.
  EXPECT_EQ(SimplifyOk(Spec({3, 0, 2}, {0, 1, 2}), {3, 0, 2}), Spec({3, 0, 2}, {0, 1, 2}));
}

TEST(SimplifyTest, ScalarsAndRankOne) {
  EXPECT_EQ(SimplifyOk(Spec({}, {}), {}), Spec({}, {}));
  EXPECT_EQ(SimplifyOk(Spec({1}, {0}), {}), Spec({1}, {0}));
  EXPECT_EQ(SimplifyOk(Spec({7}, {0}), {7}), Spec({7}, {0}));
}

TEST(SimplifyTest, HighRankSpecsSimplifyToo) {
  // Rank 8 (past the 6 inline slots), pairs (0,1) (2,3) (4,5) (6,7) adjacent in the transpose.
  EXPECT_EQ(SimplifyOk(Spec({2, 2, 3, 3, 5, 5, 7, 7}, {6, 7, 4, 5, 2, 3, 0, 1}), {44100}),
            Spec({4, 9, 25, 49}, {3, 2, 1, 0}));
}

TEST(SimplifyTest, ProductMismatchIsAReshapeSizeMismatchNamingBoth) {
  const std::vector<int64_t> orig = {6144, 256};
  const auto out = Simplify(Spec({3, 16, 128, 2, 2, 63}, {0, 4, 5, 3, 1, 2}), orig);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ErrorCode::kReshapeSizeMismatch);
  EXPECT_NE(out.error().message.find("illegal static io reshape from [6144, 256] to "
                                     "[3, 16, 128, 2, 2, 63]"),
            std::string::npos)
      << out.error().message;
}

TEST(SimplifyTest, InvalidSpecsAndShapesAreErrors) {
  const std::vector<int64_t> orig = {6};
  EXPECT_EQ(Simplify(Spec({2, 3}, {0, 0}), orig).error().code, ErrorCode::kNotPermutation);
  EXPECT_EQ(Simplify(Spec({-2, -3}, {0, 1}), orig).error().code, ErrorCode::kNegativeDim);
  const std::vector<int64_t> negative = {-6};
  EXPECT_EQ(Simplify(Spec({6}, {0}), negative).error().code, ErrorCode::kNegativeDim);
  const std::vector<int64_t> huge = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(Simplify(Spec({6}, {0}), huge).error().code, ErrorCode::kDimOverflow);
}

}  // namespace simplify_test
}  // namespace iotx
