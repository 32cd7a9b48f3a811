// Running a call of a convolutional model image by image. A served model's signature has an
// unknown batch; at batch 32 each layer's output is tens of megabytes, so every layer reads
// its input back from memory, where one image's whole activations stay in the caches: on
// the Xeon of docs/perf/models.md, MobileNetV2 ran 32 single images in 192 ms and one batch
// of 32 in 252-300. A plan whose graph computes each row of the batch from that row alone
// (every step that sees the batch is one whose output row b reads only input row b, as a
// convolution, a pooling, elementwise arithmetic with unbatched operands, a concatenation
// along another axis, a reduction over other axes) may therefore run a call as one call
// per row: each image gets the values a call with that image alone gives (with oneDNN's
// convolutions, whose pixels sum the same way at any batch, the whole batch's bits).
#pragma once
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "ops/batch_rows.h"

namespace kiln::exec {

struct BatchSplit {
  // Every result is batched, every batched feed has rank >= 1 and an unknown leading dim,
  // and nothing else depends on the batch size; nothing random or with side effects runs.
  bool separable = false;
  std::vector<char> batched_feed;  // per feed: its axis 0 is the batch
};

// The analysis of `g` (feeds g.inputs, results g.outputs). Only graphs with a convolution or a
// pooling split, and only when one image's largest intermediate (of known dims) has at least
// kMinRowBytes: their activations are what outgrow the caches, and small images cost more in
// calls than they save (a 3x3 convolution of 8x8 images at batch 4,096: 5.6-9.6 ms whole,
// 12.6-16 ms image by image; an MNIST-sized network broke even).
inline constexpr int64_t kMinRowBytes = int64_t{256} << 10;
BatchSplit analyze_batch_split(const graph::Graph& g);

// What node `n`'s outputs are to the batch, given what its inputs are (`kinds`, one per data
// input): its op row's rule (ops/batch_rows.h), asked only when some input has to do with the
// batch; kFree when none has, kOther for a node of several outputs without a rule of its own
// that sees the batch.
ops::RowKind row_kind_of(const graph::Node& n, const std::vector<ops::RowKind>& kinds);

// Whether calls may split (KILN_BATCH_SPLIT=0 turns it off, for comparisons).
bool batch_split_enabled();

}  // namespace kiln::exec
