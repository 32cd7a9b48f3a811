// Kernels for float16 and bfloat16 made from an op's float32 kernel: the 16-bit inputs are
// widened to float32, the float32 kernel runs, and the 16-bit outputs are rounded back once.
// TensorFlow's CPU kernels compute these types the same way, one float operation at a time
// (Eigen's half arithmetic); contractions here accumulate in float32 throughout. Every row
// whose kernel table has a float32 kernel gets these (kernels_for), unless it lists the
// 16-bit types itself (data movement, Cast). A row that makes its own outputs (kOwnOutputs)
// gets its float32 outputs rounded to its inputs' 16-bit type.
#pragma once
#include "ops/op_def.h"

namespace kiln::ops {

void run_widened(KernelContext& c);

}  // namespace kiln::ops
