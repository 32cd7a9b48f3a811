// kiln::host_function: a host callable called now (eager) or every time a traced function runs,
// its outputs' dtypes checked, its errors passed through.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(HostFunction, EagerlyItRunsNow) {
  int calls = 0;
  auto twice = [&](const std::vector<Tensor>& in) {
    ++calls;
    return std::vector<Tensor>{in[0] * 2};
  };
  const std::vector<Tensor> out = host_function(twice, {constant<float>({1, 2}, {2})}, {DType::Float32});
  expect_tensor<float>(out[0], {2, 4}, {2});
  EXPECT_EQ(calls, 1);
  expect_error<InvalidArgumentError>([&] { host_function(twice, {constant(1.0f)}, {DType::Int32}); },
                                     "output 0 is not a int32 tensor");
}

TEST(HostFunction, TracedItRunsOnEveryCall) {
  int calls = 0;
  auto f = function([&](Tensor x) {
    return host_function(
        [&](const std::vector<Tensor>& in) {
          ++calls;
          return std::vector<Tensor>{in[0] + 1.0f, constant(calls)};
        },
        {x * 3.0f}, {DType::Float32, DType::Int32});
  });
  for (int i = 1; i <= 3; ++i) {
    const std::vector<Tensor> out = f(constant(2.0f));
    EXPECT_FLOAT_EQ(out[0].item<float>(), 7.0f);
    EXPECT_EQ(out[1].item<int32_t>(), i);
  }
  EXPECT_EQ(calls, 3);  // none while tracing
}

TEST(HostFunction, WrongOutputsAndErrorsInsideReachTheCaller) {
  auto wrong = function([](Tensor x) {
    return host_function(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{in[0], in[0]};
        },
        {x}, {DType::Float32});
  });
  expect_error<InvalidArgumentError>([&] { wrong(constant(1.0f)); }, "returned 2 values, Tout lists 1");
  auto failing = function([](Tensor x) {
    return host_function(
        [](const std::vector<Tensor>&) -> std::vector<Tensor> { throw UnknownError("host side failed"); }, {x},
        {DType::Float32});
  });
  expect_error<UnknownError>([&] { failing(constant(1.0f)); }, "host side failed");
}
