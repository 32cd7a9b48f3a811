// kiln: eager tensors and traced, optimized graphs in C++. Include this header only.
#pragma once
#include "kiln/dtype.h"
#include "kiln/errors.h"
#include "kiln/function.h"
#include "kiln/gradient.h"
#include "kiln/train.h"
#include "kiln/ops.h"
#include "kiln/print.h"
#include "kiln/control_flow.h"
#include "kiln/variable.h"
#include "kiln/saved_model.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"
