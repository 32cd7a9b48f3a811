// String tensors: every element is a refcounted object that the tensor owns. These tests move
// strings through aliases, element movers (Gather, Concat, Transpose, ...), failing movers,
// traced functions with loops, variables and checkpoints; under ASan they are the tests
// that catch a leaked or doubly released string.
#include <filesystem>

#include "kiln/checkpoint.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
using kiln::ops::Attrs;
namespace op = kiln::ops::op;

const std::vector<std::string> kWords = {"", "a", "longer than any small-string buffer, so on the heap",
                                         std::string("\xff\x00z", 3)};

Tensor words() { return constant<std::string>(kWords, {2, 2}); }
Tensor run(const ops::OpDef& def, std::vector<Tensor> in, Attrs attrs = {}) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  return trace::dispatch1(def, ptrs.data(), static_cast<int>(ptrs.size()), ops::with_defaults(def, std::move(attrs)));
}
}  // namespace

TEST(Strings, ConstantsKeepEveryByte) {
  const Tensor t = words();
  EXPECT_EQ(t.dtype(), DType::String);
  EXPECT_EQ(t.to_vector<std::string>(), kWords);
  EXPECT_EQ(kWords[3].size(), 3u);
  EXPECT_EQ(constant("x").item<std::string>(), "x");
  EXPECT_THROW(t.to_vector<float>(), InvalidArgumentError);
  EXPECT_THROW(constant<std::string>({"a"}, {2}), InvalidArgumentError);
}

TEST(Strings, MoversShareElementsAndOutliveTheirInputs) {
  Tensor moved;
  {
    const Tensor t = words();
    const Tensor flat = reshape(t, {4});
    const Tensor idx = constant<int32_t>({3, 2, 2, 0});
    const Tensor axis = constant(0);
    const Tensor gathered = run(op::GatherV2(), {flat, idx, axis}, Attrs{int64_t{0}});
    const Tensor perm = constant<int32_t>({1, 0});
    const Tensor transposed = run(op::Transpose(), {t, perm});
    const Tensor joined = run(op::ConcatV2(), {gathered, reshape(transposed, {4}), axis}, Attrs{int64_t{2}});
    moved = joined;
  }
  EXPECT_EQ(moved.to_vector<std::string>(), (std::vector<std::string>{kWords[3], kWords[2], kWords[2], kWords[0],
                                                                      kWords[0], kWords[2], kWords[1], kWords[3]}));
}

TEST(Strings, AFailingMoverReleasesNothingItDidNotTake) {
  const Tensor flat = reshape(words(), {4});
  const Tensor bad = constant<int32_t>({1, 9});
  const Tensor axis = constant(0);
  EXPECT_THROW(run(op::GatherV2(), {flat, bad, axis}, Attrs{int64_t{0}}), InvalidArgumentError);
  EXPECT_EQ(flat.to_vector<std::string>(), kWords);  // still whole: no element was released
}

TEST(Strings, OpsThatCannotMakeStringsRefuse) {
  const Tensor t = words();
  EXPECT_THROW(cast(t, DType::Int32), UnimplementedError);
  EXPECT_THROW(cast(constant(1.5f), DType::String), UnimplementedError);
  EXPECT_THROW(abs(t), InvalidArgumentError);
  EXPECT_THROW(run(op::Shape(), {t}, Attrs{DType::String}), InvalidArgumentError);
}

TEST(Strings, JoinAndCompareInATracedLoop) {
  auto body = [](const Tensor& x) {
    const Tensor n = run(op::Size(), {x}, Attrs{DType::Int32});
    auto out = while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                          [&](const Tensor& i, const Tensor& acc) {
                            const Tensor item = run(op::GatherV2(), {x, i, constant(0)}, Attrs{int64_t{0}});
                            const Tensor sep = constant("|");
                            return std::make_tuple(i + 1, run(op::StringJoin(), {acc, sep, item}, Attrs{int64_t{3}}));
                          },
                          std::make_tuple(constant(0), constant("")));
    return std::get<1>(out);
  };
  auto f = function(body);
  const Tensor x = reshape(words(), {4});
  const std::string want = "||a|" + kWords[2] + "|" + kWords[3];
  EXPECT_EQ(body(x).item<std::string>(), want);
  for (int call = 0; call < 3; ++call) EXPECT_EQ(f(x).item<std::string>(), want);
  const Tensor same = run(op::Equal(), {f(x), constant(want)});
  EXPECT_TRUE(same.item<bool>());
}

TEST(Strings, CheckpointsRoundTripStrings) {
  const std::string prefix = (std::filesystem::temp_directory_path() / "kiln_string_ckpt").string();
  write_checkpoint(prefix, {{"w", words()}, {"s", constant("scalar")}});
  CheckpointReader reader(prefix);
  EXPECT_EQ(reader.get_tensor("w").to_vector<std::string>(), kWords);
  EXPECT_EQ(reader.get_tensor("w").shape(), TensorShape({2, 2}));
  EXPECT_EQ(reader.get_strings("s"), std::vector<std::string>{"scalar"});
}
