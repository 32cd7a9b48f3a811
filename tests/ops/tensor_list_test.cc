// TensorList ops (variant tensors): values, TensorFlow's errors, and the lifetime of the
// list objects when a list is carried through a traced While loop (the Keras RNN pattern).
// Under ASan this is the test that catches a leaked or doubly released list.
#include "ops/tensor_list.h"

#include "core/object_value.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
using kiln::ops::Attrs;
namespace op = kiln::ops::op;

Tensor reserve(const Tensor& element_shape, int32_t n, DType d = DType::Float32) {
  const Tensor count = constant(n);
  return trace::dispatch1(op::TensorListReserve(), {&element_shape, &count},
                          ops::with_defaults(op::TensorListReserve(), Attrs{d}));
}
Tensor set_item(const Tensor& list, const Tensor& index, const Tensor& item) {
  return trace::dispatch1(op::TensorListSetItem(), {&list, &index, &item},
                          ops::with_defaults(op::TensorListSetItem(), Attrs{}));
}
Tensor get_item(const Tensor& list, const Tensor& index, const Tensor& element_shape, DType d = DType::Float32) {
  return trace::dispatch1(op::TensorListGetItem(), {&list, &index, &element_shape}, Attrs{d});
}
Tensor stack(const Tensor& list, const Tensor& element_shape, int64_t n = -1) {
  return trace::dispatch1(op::TensorListStack(), {&list, &element_shape}, Attrs{DType::Float32, n});
}
Tensor from_tensor(const Tensor& t, const Tensor& element_shape) {
  return trace::dispatch1(op::TensorListFromTensor(), {&t, &element_shape});
}
const Tensor kAnyShape = constant(-1);
}  // namespace

TEST(TensorList, ReserveSetGetStackEagerly) {
  Tensor l = reserve(constant<int32_t>({2}), 3);
  EXPECT_EQ(l.dtype(), DType::Variant);
  EXPECT_EQ(l.shape(), TensorShape());
  l = set_item(l, constant(1), constant<float>({1, 2}));
  Tensor before = l;  // lists are values: a later SetItem leaves this one alone
  l = set_item(l, constant(2), constant<float>({3, 4}));
  expect_tensor<float>(get_item(l, constant(2), kAnyShape), {3, 4}, {2});
  expect_tensor<float>(get_item(l, constant(0), kAnyShape), {0, 0}, {2});  // never set: zeros
  expect_tensor<float>(stack(l, kAnyShape, 3), {0, 0, 1, 2, 3, 4}, {3, 2});
  expect_tensor<float>(stack(before, kAnyShape), {0, 0, 1, 2, 0, 0}, {3, 2});
  EXPECT_THROW(l.to_vector<float>(), Error);
}

TEST(TensorList, FromTensorSlicesAndErrors) {
  const Tensor x = constant<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor l = from_tensor(x, kAnyShape);
  expect_tensor<float>(get_item(l, constant(1), kAnyShape), {3, 4}, {2});
  expect_tensor<float>(stack(l, constant<int32_t>({2})), {1, 2, 3, 4, 5, 6}, {3, 2});
  expect_error<InvalidArgumentError>([&] { get_item(l, constant(3), kAnyShape); },
                                     "Trying to access element 3 in a list with 3 elements.");
  expect_error<InvalidArgumentError>([&] { get_item(l, constant(-1), kAnyShape); },
                                     "Trying to access element -1 in a list with 3 elements.");
  expect_error<InvalidArgumentError>([&] { get_item(l, constant(0), kAnyShape, DType::Int32); },
                                     "Invalid data types; op elements int32 but list elements float");
  expect_error<InvalidArgumentError>(
      [&] {
        set_item(l, constant(5), constant<float>({1, 2}));
      },
      "Trying to modify element 5 in a list with 3 elements.");
  expect_error<InvalidArgumentError>([&] { from_tensor(constant(1.0f), kAnyShape); },
                                     "Tensor must be at least a vector, but saw shape: []");
  expect_error<InvalidArgumentError>([&] { reserve(kAnyShape, -1); },
                                     "The num_elements to reserve must be a non negative number, but got -1");
  expect_error<InvalidArgumentError>([&] { stack(reserve(kAnyShape, 0), kAnyShape); },
                                     "Tried to stack elements of an empty list with non-fully-defined element_shape");
  expect_error<ResourceExhaustedError>([&] { reserve(kAnyShape, 2147483647); }, "TensorList of 2147483647 elements");
  // A variant that holds no list (what a fuzzer or a hostile caller may pass).
  const Tensor empty_variant = detail::wrap(detail::make_concrete(DType::Variant, Dims{}));
  expect_error<InvalidArgumentError>([&] { get_item(empty_variant, constant(0), kAnyShape); },
                                     "Input handle is not a list. Saw: 'an empty variant'");
  // A list is no value to compute with.
  expect_error<InvalidArgumentError>([&] { l + l; }, "");
}

// The RNN pattern: a list reserved outside a loop, written at each step inside it, stacked
// after. Traced (a plan runs the loop) and eager must agree, call after call.
TEST(TensorList, CarriedThroughATracedWhileLoop) {
  auto body = [](const Tensor& x, const Tensor& n) {
    const Tensor steps = from_tensor(x, kAnyShape);
    Tensor out = reserve(constant<int32_t>({-1}), 0);
    auto [i, acc, list] = while_loop([&](Tensor i, Tensor, Tensor) { return i < n; },
                                     [&](Tensor i, Tensor acc, Tensor list) {
                                       const Tensor step = get_item(steps, i, constant<int32_t>({2}));
                                       const Tensor next = acc * 0.5f + step;
                                       const Tensor grown = trace::dispatch1(op::TensorListPushBack(), {&list, &next});
                                       return std::make_tuple(i + 1, next, grown);
                                     },
                                     std::make_tuple(constant(0), zeros({2}), out));
    return stack(list, constant<int32_t>({2}));
  };
  auto f = function(body);
  const Tensor x = constant<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor eager = body(x, constant(3));
  expect_tensor<float>(eager, {1, 2, 3.5f, 5, 6.75f, 8.5f}, {3, 2});
  for (int call = 0; call < 3; ++call) EXPECT_EQ(f(x, constant(3)).to_vector<float>(), eager.to_vector<float>());
  EXPECT_EQ(f(x, constant(1)).shape(), TensorShape({1, 2}));
}

// The recurrent input projection: each step multiplies the sequence's element by a matrix
// the loop does not change. The optimizer computes all the products before the loop
// (hoist_loop_products) and the loop reads them from a list whose items view the product's
// rows (TensorListFromTensor shares its input): results equal the eager loop's, call after
// call, and under ASan no view outlives or overruns its buffer.
TEST(TensorList, AnInvariantProductInALoopIsHoistedAndAgrees) {
  constexpr int64_t kSteps = 5, kBatch = 2, kFeatures = 12, kUnits = 9;
  std::vector<float> xs(kSteps * kBatch * kFeatures), ws(kFeatures * kUnits);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  const Tensor w = constant<float>(ws, {kFeatures, kUnits});
  auto body = [&](const Tensor& x) {
    const Tensor steps = from_tensor(x, constant<int32_t>({kBatch, kFeatures}));
    Tensor out = reserve(constant<int32_t>({kBatch, kUnits}), static_cast<int32_t>(kSteps));
    auto [i, list] = while_loop([&](Tensor i, Tensor) { return i < constant(static_cast<int32_t>(kSteps)); },
                                [&](Tensor i, Tensor list) {
                                  const Tensor item = get_item(steps, i, constant<int32_t>({kBatch, kFeatures}));
                                  return std::make_tuple(i + 1, set_item(list, i, tanh(matmul(item, w))));
                                },
                                std::make_tuple(constant(0), out));
    return stack(list, constant<int32_t>({kBatch, kUnits}));
  };
  const Tensor x = constant<float>(xs, {kSteps, kBatch, kFeatures});
  const std::vector<float> eager = body(x).to_vector<float>();
  auto f = function(body);
  auto cf = f.get_concrete_function(TensorSpec{{kSteps, kBatch, kFeatures}, DType::Float32});
  bool hoisted = false;
  for (const std::string& line : cf.optimization_report()) hoisted |= line.rfind("hoist_loop_products", 0) == 0;
  EXPECT_TRUE(hoisted);
  for (int call = 0; call < 3; ++call) {
    const std::vector<float> traced = f(x).to_vector<float>();
    ASSERT_EQ(traced.size(), eager.size());
    for (size_t k = 0; k < eager.size(); ++k) EXPECT_NEAR(traced[k], eager[k], 1e-5f) << k;
  }
}

// A loop's list updates change the list in place once the loop holds the only reference
// (the first iteration's input is still the caller's too: copied), and an update never
// shows through another tensor that holds the list: a list read after the update, a list two
// updates share, a list a caller passed in.
TEST(TensorList, UpdatesInPlaceOnlyWhereNothingElseSeesTheList) {
  auto grow = [](const Tensor& n) {
    Tensor out = reserve(constant<int32_t>({-1}), 0);
    auto [i, list] =
        while_loop([&](Tensor i, Tensor) { return i < n; },
                   [&](Tensor i, Tensor list) {
                     const Tensor item = cast(i, DType::Float32) * ones({2});
                     return std::make_tuple(i + 1, trace::dispatch1(op::TensorListPushBack(), {&list, &item}));
                   },
                   std::make_tuple(constant(0), out));
    return stack(list, constant<int32_t>({2}));
  };
  auto f = function(grow);
  const int64_t before = ops::list_updates_in_place();
  const Tensor got = f(constant(40));
  EXPECT_GE(ops::list_updates_in_place() - before, 39);
  std::vector<float> want;
  for (int k = 0; k < 40; ++k) want.insert(want.end(), {float(k), float(k)});
  EXPECT_EQ(got.to_vector<float>(), want);
  EXPECT_EQ(grow(constant(40)).to_vector<float>(), want);  // eagerly: copies, the same values

  // Two updates of one list: the first copies (the list is read again), the second may write
  // in place; neither result shows the other's item.
  auto twice = function([](const Tensor& x) {
    const Tensor l = reserve(constant<int32_t>({2}), 2);
    const Tensor a = set_item(l, constant(0), x);
    const Tensor b = set_item(l, constant(1), x * 2.0f);
    return std::make_tuple(stack(a, constant<int32_t>({2})), stack(b, constant<int32_t>({2})));
  });
  auto [a, b] = twice(constant<float>({1, 2}));
  expect_tensor<float>(a, {1, 2, 0, 0}, {2, 2});
  expect_tensor<float>(b, {0, 0, 2, 4}, {2, 2});

  // A list the caller passes in is never changed under it.
  auto set_first = function([](const Tensor& l, const Tensor& x) { return set_item(l, constant(0), x); });
  const Tensor given = set_item(reserve(constant<int32_t>({2}), 1), constant(0), constant<float>({7, 8}));
  const Tensor changed = set_first(given, constant<float>({1, 1}));
  expect_tensor<float>(stack(given, constant<int32_t>({2})), {7, 8}, {1, 2});
  expect_tensor<float>(stack(changed, constant<int32_t>({2})), {1, 1}, {1, 2});
}
