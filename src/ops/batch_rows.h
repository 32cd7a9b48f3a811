// How ops treat a batch: exec/batch_split runs a graph whose every step computes each row of
// axis 0 from that row alone image by image, and exec/loop_rows a loop whose every step does
// as one loop per block of rows; both ask each node's row (OpDef::rows) what its outputs are,
// given what its inputs are. The rules live beside the ops; these are their shared words.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/op_def.h"

namespace kiln::ops {

// What a value is to the batch.
enum class RowKind : char {
  kFree,       // computed without the batch (weights, constants, a normalization's
               // parameters): the same in every row's call
  kRows,       // axis 0 is the batch: row i computed from the inputs' rows i
  kBatchSize,  // a scalar: the batch size (tf.shape(x)[0])
  kRowsShape,  // a shape whose entry 0 is the batch size and whose others are the same in every
               // row's call (what Keras's Reshape layer packs from tf.shape(x))
  kOther,      // anything else (a sum over the batch, the batch size in arithmetic): no split
};

// One node as a rule sees it. A rule is called only when some input is kRows, kBatchSize or
// kRowsShape and none is kOther; exec/batch_split refuses kRows of rank 0 itself.
struct RowsContext {
  const OpDef& op;
  const InputInfo* inputs;  // dtypes, dims and Const values
  const RowKind* kinds;     // what each input is to the batch
  int num_inputs;
  const Attrs& attrs;
  int out_rank;  // output 0's, -1 unknown

  bool is(int i, RowKind k) const { return i < num_inputs && kinds[i] == k; }
  bool rows(int i) const { return is(i, RowKind::kRows); }
  bool free(int i) const { return is(i, RowKind::kFree); }
  // Some input is the batch size or a shape led by it (not rows).
  bool sized() const;
  int rank(int i) const { return inputs[i].unknown_rank ? -1 : static_cast<int>(inputs[i].dims->size()); }
  // Input i's integer values when it is a Const (of int32 or int64); false otherwise.
  bool ints(int i, std::vector<int64_t>& out) const;
};

// An axis among `axes` of a value of rank `rank` is the batch's (0, or -rank).
bool touches_batch(const std::vector<int64_t>& axes, int rank);

// A free operand beside batched ones of rank `rank` in a broadcasting op: broadcasting must not
// stretch it along the batch (a lower rank, or a leading 1).
bool broadcasts_per_row(const InputInfo& free_input, int rank);

// The rule of an op without one: kElementwise and kForwardsInput ops keep rows of batched
// inputs of the output's rank beside free ones that broadcast per row; anything else is kOther.
RowKind rows_by_traits(const RowsContext& c);

}  // namespace kiln::ops
