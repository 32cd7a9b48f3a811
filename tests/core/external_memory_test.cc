// adopt_external: tensors over memory kiln does not own (what numpy arrays and DLPack
// tensors become in Python). kiln must read it without copying, never write to it, and give
// it back exactly once.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/function.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

struct Owner {
  std::vector<float> values;
  int releases = 0;
};
void release_owner(void* context) noexcept { ++static_cast<Owner*>(context)->releases; }

TEST(ExternalMemory, ReadsWithoutCopyAndReleasesOnce) {
  Owner owner{.values = std::vector<float>(100, 1.5f)};
  {
    Tensor t = adopt_external(DType::Float32, {10, 10}, owner.values.data(), release_owner, &owner);
    EXPECT_EQ(t.data(), owner.values.data());
    EXPECT_EQ(t.shape(), TensorShape({10, 10}));
    Tensor copy = t;
    EXPECT_FLOAT_EQ(reduce_sum(t).item<float>(), 150.0f);
    EXPECT_EQ(owner.releases, 0);
  }
  EXPECT_EQ(owner.releases, 1);
}

TEST(ExternalMemory, SmallValuesAreCopiedAndReleasedAtOnce) {
  Owner owner{.values = {1, 2, 3}};
  Tensor t = adopt_external(DType::Float32, {3}, owner.values.data(), release_owner, &owner);
  EXPECT_EQ(owner.releases, 1);
  EXPECT_NE(t.data(), owner.values.data());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(ExternalMemory, BadInputsThrowAndStillRelease) {
  Owner owner{.values = std::vector<float>(100)};
  EXPECT_THROW(adopt_external(DType::Float32, {10, -1}, owner.values.data(), release_owner, &owner),
               InvalidArgumentError);
  EXPECT_EQ(owner.releases, 1);
  const char* misaligned = reinterpret_cast<const char*>(owner.values.data()) + 1;
  EXPECT_THROW(adopt_external(DType::Float32, {20}, misaligned, release_owner, &owner), InvalidArgumentError);
  EXPECT_EQ(owner.releases, 2);
}

// A function whose input dies at an elementwise step may write its result over that input's
// buffer (buffer forwarding). Foreign memory must never be the target. (Today a fed argument
// is also held by the caller, so this guards the rule should feeds ever be forwarded.)
TEST(ExternalMemory, NeverWrittenByBufferForwarding) {
  Owner owner{.values = std::vector<float>(1000, 2.0f)};
  auto f = function([](Tensor x) { return exp(x * 3.0f) + 1.0f; });
  Tensor y = f(adopt_external(DType::Float32, {1000}, owner.values.data(), release_owner, &owner));
  for (float v : owner.values) ASSERT_EQ(v, 2.0f);
  EXPECT_EQ(owner.releases, 1);
  EXPECT_NE(y.data(), owner.values.data());
}

// A variable updated in place must copy a value it does not own first.
TEST(ExternalMemory, NeverWrittenByVariableUpdates) {
  Owner owner{.values = std::vector<float>(1000, 2.0f)};
  {
    Variable v(adopt_external(DType::Float32, {1000}, owner.values.data(), release_owner, &owner));
    v.assign_add(ones({1000}));
    EXPECT_FLOAT_EQ(v.read().to_vector<float>()[0], 3.0f);
  }
  for (float v : owner.values) ASSERT_EQ(v, 2.0f);
  EXPECT_EQ(owner.releases, 1);
}

}  // namespace
}  // namespace kiln
