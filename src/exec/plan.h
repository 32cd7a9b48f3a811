// The execution plan: a graph compiled once into a flat list of kernel calls over numbered
// value slots. Running it does no string or map lookups.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/batch_split.h"
#include "exec/loop_rows.h"
#include "exec/memory_plan.h"
#include "graph/graph.h"

namespace kiln::exec {

struct ParallelRun;  // one inter-op parallel run's shared state (plan.cc)

struct Step {
  const ops::OpDef* op;
  ops::KernelFn kernel;  // null when the kernel depends on runtime dtypes (never today)
  const ops::Attrs* attrs;
  const graph::Node* node;         // for error messages
  int first_input, num_inputs;     // into Plan::input_slots
  int first_output, num_outputs;   // into Plan::output_slots
  int first_release, num_release;  // slots whose last use is this step, into Plan::release_slots
  bool static_shapes;              // output dtypes/dims known at compile time
  int first_static;                // into Plan::static_outputs
  int first_body, num_bodies;      // control flow: its compiled bodies, into Plan::bodies_
  int forward_slot;                // an input slot whose tensor may become output 0, or -1
  int loop_rows;                   // a While that may run by rows: its analysis in Plan::loop_rows_, or -1
  // Static shapes, a kernel that writes preallocated outputs, few inputs and outputs: runs
  // through Plan::run_lean, the executor's short path.
  bool lean;
};

struct StaticOutput {
  DType dtype;
  Dims dims;
  int64_t num_elements, bytes;  // checked when the plan is compiled
};

class Plan {
 public:
  // Compiles `g`: feeds are g.inputs (in order), results are g.outputs. Nodes that neither
  // an output nor a stateful op needs are pruned (non-strict execution).
  explicit Plan(const graph::Graph& g);

  // Runs with one tensor per feed; returns one tensor per result.
  std::vector<Tensor> run(const std::vector<Tensor>& feeds) const;
  // The same, writing into `results` (reused across loop iterations).
  void run_into(const std::vector<Tensor>& feeds, std::vector<Tensor>& results) const {
    run_into(feeds.data(), feeds.size(), results);
  }
  void run_into(const Tensor* feeds, size_t num_feeds, std::vector<Tensor>& results) const;
  // The same with the feeds by address: a caller's arguments, not copied into an array.
  void run_into(const Tensor* const* feeds, size_t num_feeds, std::vector<Tensor>& results) const;

  int num_steps() const { return static_cast<int>(steps_.size()); }
  int num_slots() const { return num_slots_; }
  size_t arena_bytes() const { return memory_.arena_bytes(); }
  // The While nodes, here and in the bodies this plan calls, that may run by rows when their
  // batch allows (loop_rows.h): their names, for the optimization report.
  std::vector<std::string> loops_by_rows() const;
  size_t frame_headers() const { return memory_.num_headers(); }  // tensor headers a frame builds
  bool runs_in_parallel() const { return parallel_; }             // the plan found branches worth running side by side
  bool splits_batches() const { return batch_split_.separable; }  // a call may run row by row (batch_split.h)
  // Whether a call started now runs them side by side: a parallel plan, more than one
  // intra-op thread, and an inter-op setting other than 1.
  bool will_run_in_parallel() const;
  // The same for a call with these feeds: a plan whose feeds have unknown dimensions decides
  // per size, from its first run at that size (serial, measuring each step's cost).
  bool will_run_in_parallel(const std::vector<Tensor>& feeds) const;
  // Per step of a parallel plan: does it run alone, with the intra-op threads (tests).
  const std::vector<char>& alone_steps() const { return alone_; }

 private:
  // Body plans by graph and by whether they are a While's cond (loop_cond_).
  using BodyCache = std::map<std::pair<const graph::Graph*, bool>, std::shared_ptr<const Plan>>;
  Plan(const graph::Graph& g, BodyCache& cache, bool loop_cond);
  void compile(const graph::Graph& g, BodyCache& cache);

  std::vector<Step> steps_;
  std::vector<int> input_slots_, output_slots_, release_slots_;
  std::vector<StaticOutput> static_outputs_;
  std::vector<int> feed_slots_;
  std::vector<DType> feed_dtypes_;
  std::vector<TensorShape> feed_shapes_;
  std::vector<std::pair<int, Tensor>> const_slots_;
  std::vector<int> result_slots_;
  std::vector<char> feed_read_;  // per feed: does a step or a result read it
  // A While's cond, run by run_loop, which (1) lends the feeds and takes them back after
  // the run: feed slots are never released or written over, so the loop variables move in
  // and back instead of being copied (two reference-count updates per variable and
  // iteration); and (2) reads the result right after the run, before the next one: a result
  // with a static shape lives in the frame, so the condition costs no allocation per
  // iteration. Read results with result_impl.
  bool loop_cond_ = false;
  const ops::TensorImpl* result_impl(int i, Tensor* slots, Frame* frame) const {
    const int s = result_slots_[i];
    return frame_index_[s] >= 0 ? frame->impl(frame_index_[s]) : slots[s].impl();
  }
  bool distinct_results_ = true;                     // no slot is two results, or a result and another feed
  std::vector<std::shared_ptr<const Plan>> bodies_;  // branches and loop parts, compiled once
  int num_slots_ = 0;
  MemoryPlan memory_;             // static intermediates: a per-call frame
  std::vector<int> frame_index_;  // per slot: its frame entry, or -1 for an owned tensor

  // Inter-op parallelism: chosen at compile time from a cost estimate.
  bool parallel_ = false;
  std::vector<int> num_preds_;                // per step
  std::vector<std::vector<int>> successors_;  // per step
  // Per step: every other step is its ancestor or its descendant, so nothing can run beside
  // it (a model's stem, the joins between branches). Such a step gets the intra-op threads
  // for its kernels instead of running single-threaded (run_parallel).
  std::vector<char> alone_;
  std::vector<int> slot_readers_;  // per slot: steps reading it (0: never released)

  // A plan that runs side by side, with feeds of unknown sizes, decides again per size
  // (plan_parallelism.cc).
  struct FeedSizeDecisions;
  enum class SideBySide { kYes, kNo, kMeasure };
  std::shared_ptr<FeedSizeDecisions> feed_size_decisions_;
  std::vector<int64_t> feed_sizes(const Tensor* slots) const;
  SideBySide side_by_side_for(const std::vector<int64_t>& sizes) const;
  void measure_step(const Step& st, const ops::TensorImpl* const* in, std::vector<double>& cost) const;
  void decide_side_by_side(const std::vector<int64_t>& sizes, const std::vector<double>& cost) const;
  bool worth_running_side_by_side(const std::vector<double>& cost) const;

  void plan_memory(const std::vector<int>& last_use, std::vector<char>& in_frame);
  void plan_parallelism(const graph::Graph& g);
  void plan_alone_steps();
  void plan_forwarding(const std::vector<int>& last_use, const std::vector<char>& pinned);
  void feed(const Tensor* const* feeds, size_t num_feeds, Tensor* slots) const;
  void feed(const std::vector<Tensor>& feeds, Tensor* slots) const;
  std::vector<char> result_moves_;  // per result: its slot is no later result's, so it moves out
  void execute_step(const Step& st, Tensor* slots, Frame* frame, std::vector<ops::InputInfo>& infos) const;
  static constexpr int kLeanInputs = 4, kLeanOutputs = 2;
  void run_lean(const Step& st, Tensor* slots, Frame* frame) const;
  void gather_inputs(const Step& st, Tensor* slots, Frame* frame, const ops::TensorImpl** in) const;
  void place_static_outputs(const Step& st, Tensor* slots, Frame* frame, ops::TensorImpl** out) const;
  void run_parallel(Tensor* slots, Frame* frame) const;
  void drain(const std::shared_ptr<ParallelRun>& run, Tensor* slots, Frame* frame, bool caller) const;
  void add_helpers(const std::shared_ptr<ParallelRun>& run, int count, Tensor* slots, Frame* frame) const;
  // Every step, serially or (when planned) concurrently.
  void run_steps(Tensor* slots, Frame* frame) const;
  // A call as one call: every step once over the feeds.
  void run_whole(const Tensor* const* feeds, size_t num_feeds, std::vector<Tensor>& results) const;
  // A call of a separable plan, one batch row at a time (batch_split.h); false when the rows'
  // results do not stitch (then nothing was written to `results`).
  bool run_rows(const Tensor* const* feeds, size_t num_feeds, int64_t batch, std::vector<Tensor>& results) const;
  int64_t batch_of(const Tensor* const* feeds, size_t num_feeds) const;  // 0: not one batch
  BatchSplit batch_split_;                                               // top-level plans only
  void run_loop(const Step& st, Tensor* slots) const;
  // A loop from variables `vars` to its end; with `rows`, the rest after its first step may
  // run as blocks of rows on the intra-op threads (loop_rows.h). Returns the final variables.
  static std::vector<Tensor> iterate(const Plan& cond, const Plan& body, std::vector<Tensor> vars,
                                     const LoopRows* rows);
  static std::vector<Tensor> iterate_by_rows(const Plan& cond, const Plan& body, const std::vector<Tensor>& vars,
                                             const LoopRows& rows, int64_t batch);
  std::vector<LoopRows> loop_rows_;           // the While steps' that may run by rows
  std::vector<std::string> loop_rows_names_;  // their nodes' names

  void run_control_flow(const Step& st, Tensor* slots) const;
};

// Rethrows the current kiln::Error with " [[{{node NAME}}]]" appended, keeping its type.
[[noreturn]] void rethrow_with_node(const Error& e, const std::string& node_name);

}  // namespace kiln::exec
