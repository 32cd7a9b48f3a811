// Running a While loop's batch rows on separate threads. A recurrent layer's loop at batch
// 32 on two threads split each step's product over both threads and ran the gates between on
// one: a hand-over and a wait at every step, and 1.5x ONNX Runtime's time (docs/perf/models.md,
// session 30). A loop whose every step computes each row of its batched variables from that
// row alone can instead run as one loop per block of rows, each on its own thread from there
// to its end, as ONNX Runtime's LSTM kernel does: no step waits for another thread.
//
// Which loops: each loop variable is free (the same in every block: counters, the number of
// steps, weights passed along), rows (axis 0 is the batch: a recurrent state) or a list of
// rows (a TensorList whose items' axis 0 is the batch: the sequence read and the outputs
// written, one item per step). The body computes each variable's next value as the same kind
// from the others (each op's row rule, ops/batch_rows.h, and the list reads and writes at a
// free index), the condition reads free variables only (every block runs as many steps),
// and nothing random or with side effects runs (it would run once per block). Each block
// computes its rows with the whole loop's ops on fewer rows: the whole loop's bits where
// every op computes a row the same way at any number of rows (not at AVX2, where a product
// of few rows runs another kernel than a whole batch's).
#pragma once
#include <vector>

#include "graph/graph.h"

namespace kiln::exec {

enum class LoopVar : char { kFree, kRows, kListRows };

struct LoopRows {
  bool separable = false;
  std::vector<LoopVar> vars;  // per loop variable
  // Per loop variable: the body passes it along as it came (a recurrent layer's sequence),
  // so its final value is the one the blocks started from and is not stitched (an LSTM's
  // 100 items of [32, 512] were 6.5 MB copied on one thread).
  std::vector<bool> unchanged;
};

// The analysis of a While of `cond` and `body` (one feed per loop variable each; the body
// one result per variable).
LoopRows analyze_loop_rows(const graph::Graph& cond, const graph::Graph& body);

// The batch of loop variables `vars` (one per variable): axis 0 of every rows variable,
// which every list's set items share; 0 when they do not agree or a list fixes axis 0 in its
// element shape (the loop then runs whole).
int64_t loop_batch(const LoopRows& rows, const std::vector<Tensor>& vars);

// The variables of rows [first, first + count): free ones shared, rows viewed, lists of views.
std::vector<Tensor> vars_for_rows(const LoopRows& rows, const std::vector<Tensor>& vars, int64_t first, int64_t count);
// The blocks' final variables (in row order) as the whole loop's: free ones the first
// block's (every block computed the same), unchanged ones `start`'s (what the blocks started
// from), rows and lists stitched.
std::vector<Tensor> stitch_vars(const LoopRows& rows, const std::vector<std::vector<Tensor>>& blocks,
                                const std::vector<Tensor>& start);

// A block has at least this many rows. A step's product reads its whole weight matrix for
// any number of rows: an LSTM(128) at batch 2 took 0.49 ms whole on two threads and 0.53 as
// two loops of one row (each 0.38); at batch 4 the two were even, at batch 8 blocks of four
// rows 13% faster (docs/perf/models.md, session 31).
inline constexpr int64_t kRowsMinBlock = 4;

// Whether loops may run by rows (KILN_LOOP_ROWS=0 turns it off, for comparisons).
bool loop_rows_enabled();
// How many loops ran by rows since the process started (tests).
int64_t loops_run_by_rows();
void count_loop_run_by_rows();

}  // namespace kiln::exec
