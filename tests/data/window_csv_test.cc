// window (elements that are datasets) and decode_csv from C++, hostile records included.
#include <kiln/data.h>

#include <random>

#include "test_util.h"

using namespace kiln;
namespace kd = kiln::data;

namespace {

std::vector<std::vector<int64_t>> windows_of(const kd::Dataset& ds) {
  std::vector<std::vector<int64_t>> out;
  auto it = ds.make_iterator();
  std::vector<Tensor> e;
  while (it.next(&e)) {
    std::vector<int64_t> w;
    auto inner = kd::from_variant(e.at(0)).make_iterator();
    std::vector<Tensor> v;
    while (inner.next(&v)) w.push_back(v.at(0).item<int64_t>());
    out.push_back(w);
  }
  return out;
}

TEST(DataWindow, ShiftStrideAndRemainder) {
  using W = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(windows_of(kd::window(kd::range(0, 7, 1), 3, 2)), (W{{0, 1, 2}, {2, 3, 4}, {4, 5, 6}, {6}}));
  EXPECT_EQ(windows_of(kd::window(kd::range(0, 7, 1), 3, 2, 1, true)), (W{{0, 1, 2}, {2, 3, 4}, {4, 5, 6}}));
  EXPECT_EQ(windows_of(kd::window(kd::range(0, 10, 1), 2, 4)), (W{{0, 1}, {4, 5}, {8, 9}}));
  EXPECT_EQ(windows_of(kd::window(kd::range(0, 8, 1), 3, 1, 2, true)), (W{{0, 2, 4}, {1, 3, 5}, {2, 4, 6}, {3, 5, 7}}));
  EXPECT_EQ(kd::window(kd::range(0, 7, 1), 3, 2).cardinality(), 4);
  EXPECT_THROW(kd::window(kd::range(0, 3, 1), 0, 1), InvalidArgumentError);
  EXPECT_THROW(kd::from_variant(constant(1.0f)), InvalidArgumentError);
}

TEST(DataCsv, DecodesTypesQuotesAndDefaults) {
  auto cols = kd::decode_csv(
      constant<std::string>({"1,2.5,\"a,\"\"b\"\"\"", "NA,,x"}, {2}),
      {constant<int32_t>({-1}, {1}), constant<double>({9}, {1}), constant<std::string>({""}, {1})}, ",", true, "NA");
  EXPECT_EQ(cols[0].to_vector<int32_t>(), (std::vector<int32_t>{1, -1}));
  EXPECT_EQ(cols[1].to_vector<double>(), (std::vector<double>{2.5, 9}));
  EXPECT_EQ(cols[2].to_vector<std::string>(), (std::vector<std::string>{"a,\"b\"", "x"}));
  const std::vector<Tensor> ints = {constant<int64_t>({0}, {1}), constant<int64_t>({0}, {1})};
  EXPECT_THROW(kd::decode_csv(constant("1"), ints), InvalidArgumentError);      // too few fields
  EXPECT_THROW(kd::decode_csv(constant("1,x"), ints), InvalidArgumentError);    // not an int
  EXPECT_THROW(kd::decode_csv(constant("\"1,2"), ints), InvalidArgumentError);  // unterminated quote
  EXPECT_THROW(kd::decode_csv(constant(",2"), {zeros({0}, DType::Int64), ints[1]}), InvalidArgumentError);  // required
  std::mt19937 rng(3);
  const std::string alphabet = "0123456789,\".-e \n";
  int ok = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string r;
    for (int k = static_cast<int>(rng() % 12); k > 0; --k) r.push_back(alphabet[rng() % alphabet.size()]);
    try {
      kd::decode_csv(constant(r), {constant<int64_t>({0}, {1}), constant<double>({0}, {1})});
      ++ok;
    } catch (const InvalidArgumentError&) {
      ++refused;
    }
  }
  EXPECT_EQ(ok + refused, 3000);
}

}  // namespace
