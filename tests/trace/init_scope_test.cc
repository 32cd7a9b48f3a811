// kiln::InitScope (tf.init_scope): ops inside run eagerly even while a function is traced.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(InitScope, OpsInsideRunEagerlyOnceAtTraceTime) {
  Variable v(constant(0), "v");
  int traces = 0;
  auto f = function([&](Tensor x) {
    ++traces;
    {
      InitScope lifted;
      v.assign_add(1);                       // now, not in the graph
      EXPECT_FALSE(v.read().is_symbolic());  // a value, not a graph tensor
    }
    return x + v.read();
  });
  EXPECT_EQ(f(constant(10)).item<int32_t>(), 11);
  EXPECT_EQ(f(constant(10)).item<int32_t>(), 11);
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(v.read().item<int32_t>(), 1);
}
