// What the random ops share: the output shape from a `shape` input, and the streams of the
// seeded stateful ops (which tf.random.set_seed restarts).
#pragma once
#include "ops/op_def.h"

namespace kiln::ops {

// Output `out` of dtype `dtype` whose dims are the value of input `shape_input`: a vector of
// int32/int64, each >= 0, with a product that fits int64 (TensorFlow's messages).
void infer_random_output(InferContext& c, int shape_input, DType dtype);

// Forgets where every seeded stateful random op's stream stands, so each starts again from
// its seeds (tf.random.set_seed clears TensorFlow's kernel cache to the same effect).
void reset_random_streams();

}  // namespace kiln::ops
