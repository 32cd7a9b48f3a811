// The ops a fused elementwise kernel can run, by index (the fusion pass encodes them).
#pragma once
#include <vector>

#include "ops/op_def.h"

namespace kiln::ops {

// Limits of one fused kernel (its intermediates live on the stack).
inline constexpr int kMaxFusedTemps = 12;
inline constexpr int kMaxFusedRegisters = 32;
// Row-vector inputs spread per chunk on the stack; more are broadcast into a copy first.
inline constexpr int kMaxFusedRowInputs = 4;
// Inputs read through a window of their columns (the windows attr), gathered per chunk.
inline constexpr int kMaxFusedWindowInputs = 4;

const std::vector<const OpDef*>& fusable_ops();
int fusable_index(const OpDef* op);  // -1 if not fusable

}  // namespace kiln::ops
