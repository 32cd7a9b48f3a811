#include "exec/plan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype_table.h"
#include "core/parallel.h"
#include "core/run_limits.h"
#include "core/shape_fit.h"
#include "eager/execute.h"
#include "ops/tensor_list.h"

namespace kiln::exec {

void rethrow_with_node(const Error& e, const std::string& node_name) {
  throw_error(e.code(), std::string(e.what()) + "\n\t [[{{node " + node_name + "}}]]");
}

Plan::Plan(const graph::Graph& g) {
  BodyCache cache;
  compile(g, cache);
  batch_split_ = analyze_batch_split(g);
}

std::vector<std::string> Plan::loops_by_rows() const {
  std::vector<std::string> names = loop_rows_names_;
  std::unordered_set<const Plan*> seen;  // a body several nodes call is compiled once
  for (const auto& body : bodies_)
    if (seen.insert(body.get()).second)
      for (auto& name : body->loops_by_rows()) names.push_back(std::move(name));
  return names;
}

Plan::Plan(const graph::Graph& g, BodyCache& cache, bool loop_cond) : loop_cond_(loop_cond) { compile(g, cache); }

void Plan::compile(const graph::Graph& g, BodyCache& cache) {
  const int n = g.num_nodes();
  // Liveness: what the results and the stateful ops need.
  std::vector<char> live(n, 0);
  std::vector<int> stack;
  auto mark = [&](const graph::Node* node) {
    if (!live[node->id]) {
      live[node->id] = 1;
      stack.push_back(node->id);
    }
  };
  for (const graph::Output& o : g.outputs) mark(o.node);
  for (const auto& node : g.nodes())
    if (node->stateful) mark(node.get());
  for (const graph::Node* in : g.inputs) mark(in);  // feeds always get a slot
  while (!stack.empty()) {
    const graph::Node* node = g.node(stack.back());
    stack.pop_back();
    for (const graph::Output& in : node->inputs) mark(in.node);
    for (const graph::Node* c : node->control_inputs) mark(c);
  }

  // Slots: one per live node output.
  // Forwarding nodes (Identity) get no slot and no step: their output is their input's slot.
  std::vector<int> first_slot(n, -1);
  auto forwards = [&](const graph::Node* node) {
    return node->op->has(ops::kForwardsInput) && !node->stateful && node->inputs.size() == 1;
  };
  for (int id = 0; id < n; ++id) {
    if (!live[id] || forwards(g.node(id))) continue;
    first_slot[id] = num_slots_;
    num_slots_ += g.node(id)->num_outputs();
  }
  std::function<int(const graph::Output&)> slot_of = [&](const graph::Output& o) -> int {
    if (forwards(o.node)) return slot_of(o.node->inputs[0]);
    return first_slot[o.node->id] + o.index;
  };

  for (const graph::Node* in : g.inputs) {
    feed_slots_.push_back(first_slot[in->id]);
    feed_dtypes_.push_back(in->out_dtypes[0]);
    feed_shapes_.push_back(in->out_shapes[0]);
  }
  for (const graph::Output& o : g.outputs) result_slots_.push_back(slot_of(o));
  // The slot array dies with the call: each result moves out of it, unless a later result
  // is the same slot (then it is copied, and the last one moves).
  for (size_t i = 0; i < result_slots_.size(); ++i)
    result_moves_.push_back(std::find(result_slots_.begin() + static_cast<std::ptrdiff_t>(i) + 1, result_slots_.end(),
                                      result_slots_[i]) == result_slots_.end());

  // Last use of each slot, so intermediates return to the pool as soon as they die.
  std::vector<int> last_use(num_slots_, -1);
  std::vector<char> pinned(num_slots_, 0);
  for (int s : result_slots_) pinned[s] = 1;
  if (loop_cond_)
    for (int s : feed_slots_) pinned[s] = 1;

  for (int id = 0; id < n; ++id) {
    if (!live[id]) continue;
    const graph::Node* node = g.node(id);
    if (node->op->has(ops::kNoKernel) || forwards(node)) continue;  // fed, or an alias
    if (node->op->has(ops::kConstValue)) {
      const_slots_.emplace_back(first_slot[id], node->attrs.tensor(ops::kConstValueAttr));
      pinned[first_slot[id]] = 1;  // constants live for the whole plan
      continue;
    }
    Step st{};
    st.op = node->op;
    st.attrs = &node->attrs;
    st.node = node;
    st.first_input = static_cast<int>(input_slots_.size());
    st.num_inputs = static_cast<int>(node->inputs.size());
    for (const graph::Output& in : node->inputs) input_slots_.push_back(slot_of(in));
    st.first_output = static_cast<int>(output_slots_.size());
    st.num_outputs = node->num_outputs();
    for (int i = 0; i < st.num_outputs; ++i) output_slots_.push_back(first_slot[id] + i);
    st.static_shapes = !node->shape_needs_values;  // else its shape function runs again with the values
    for (const auto& s : node->out_shapes) st.static_shapes &= s.is_fully_defined();
    st.first_static = static_cast<int>(static_outputs_.size());
    if (st.static_shapes)
      for (int i = 0; i < st.num_outputs; ++i) {
        const Dims& dims = node->out_shapes[i].dims();
        const int64_t n = detail::checked_num_elements(dims.data(), dims.size());
        const int64_t bytes = checked_mul(n, static_cast<int64_t>(dtype_size(node->out_dtypes[i])), "a buffer size");
        static_outputs_.push_back({node->out_dtypes[i], dims, n, bytes});
      }
    // The kernel the shape function chose at trace time (inputs' dtypes are fixed by then).
    st.kernel = node->op->kernel_for(node->kernel_dtype);
    st.first_body = static_cast<int>(bodies_.size());
    if (node->op->has(ops::kControlFlow)) {
      st.static_shapes = false;
      // Each body is compiled once for the whole plan tree, however many nodes call it.
      const bool loop = node->op->has(ops::kLoop);
      int index = 0;
      for (const ops::FuncRef* f : ops::func_refs(node->attrs)) {
        const graph::Graph* body = &g.library().get(f->name);
        const bool loop_cond = loop && index++ == 0;  // a While's cond (run_loop runs it)
        std::shared_ptr<const Plan>& compiled = cache[{body, loop_cond}];
        if (!compiled) compiled = std::shared_ptr<const Plan>(new Plan(*body, cache, loop_cond));
        bodies_.push_back(compiled);
      }
    }
    st.num_bodies = static_cast<int>(bodies_.size()) - st.first_body;
    st.loop_rows = -1;
    if (node->op->has(ops::kLoop) && st.num_bodies == 2) {
      const auto refs = ops::func_refs(node->attrs);
      LoopRows rows = analyze_loop_rows(g.library().get(refs[0]->name), g.library().get(refs[1]->name));
      if (rows.separable) {
        st.loop_rows = static_cast<int>(loop_rows_.size());
        loop_rows_.push_back(std::move(rows));
        loop_rows_names_.push_back(node->name);
      }
    }
    const int step_index = static_cast<int>(steps_.size());
    for (int i = 0; i < st.num_inputs; ++i) last_use[input_slots_[st.first_input + i]] = step_index;
    steps_.push_back(st);
  }
  // Outputs never read die right after their step.
  for (size_t si = 0; si < steps_.size(); ++si)
    for (int i = 0; i < steps_[si].num_outputs; ++i) {
      const int s = output_slots_[steps_[si].first_output + i];
      if (last_use[s] < 0) last_use[s] = static_cast<int>(si);
    }
  std::vector<char> in_frame(num_slots_, 0);
  for (int s = 0; s < num_slots_; ++s) in_frame[s] = pinned[s] ? 2 : 0;  // 2: never in the frame
  if (loop_cond_)  // results stay pinned (never released), but may live in the frame till the end
    for (int s : result_slots_) {
      in_frame[s] = 0;
      last_use[s] = static_cast<int>(steps_.size());
    }
  for (const auto& [slot, value] : const_slots_) in_frame[slot] = 2;
  plan_parallelism(g);
  plan_memory(last_use, in_frame);
  plan_forwarding(last_use, pinned);
  for (Step& st : steps_)
    st.lean = st.static_shapes && st.kernel && !st.op->has(ops::kControlFlow) && !st.op->control_flow &&
              !st.op->has(ops::kOwnOutputs) && st.num_inputs <= kLeanInputs && st.num_outputs <= kLeanOutputs;
  // Readers per owned slot, for releasing at last use when steps run concurrently.
  slot_readers_.assign(num_slots_, 0);
  for (const Step& st : steps_)
    for (int i = 0; i < st.num_inputs; ++i) ++slot_readers_[input_slots_[st.first_input + i]];
  for (int s = 0; s < num_slots_; ++s)
    if (pinned[s] || in_frame[s] == 1) slot_readers_[s] = 0;
  std::vector<std::vector<int>> releases(steps_.size());
  for (int s = 0; s < num_slots_; ++s)
    if (!pinned[s] && in_frame[s] != 1 && last_use[s] >= 0) releases[last_use[s]].push_back(s);
  for (size_t si = 0; si < steps_.size(); ++si) {
    steps_[si].first_release = static_cast<int>(release_slots_.size());
    steps_[si].num_release = static_cast<int>(releases[si].size());
    release_slots_.insert(release_slots_.end(), releases[si].begin(), releases[si].end());
  }
  // For loops (run_loop): which feeds anything reads, and whether results can move out.
  std::vector<char> read(num_slots_, 0);
  for (int s : input_slots_) read[s] = 1;
  for (int s : result_slots_) read[s] = 1;
  for (int s : feed_slots_) feed_read_.push_back(read[s]);
  distinct_results_ = true;
  for (const auto& [slot, value] : const_slots_)  // a constant result must stay in its slot
    for (int r : result_slots_) distinct_results_ &= r != slot;
  for (size_t i = 0; i < result_slots_.size(); ++i)
    for (size_t j = 0; j < result_slots_.size(); ++j)
      if ((i != j && result_slots_[i] == result_slots_[j]) ||
          (i != j && j < feed_slots_.size() && result_slots_[i] == feed_slots_[j]))
        distinct_results_ = false;
}

void Plan::plan_memory(const std::vector<int>& last_use, std::vector<char>& in_frame) {
  // Values a stateful or control-flow op receives may outlive the call (a variable keeps
  // what it is assigned; a loop passes it on): they stay owned tensors.
  for (const Step& st : steps_)
    if (st.node->stateful || st.op->has(ops::kControlFlow))
      for (int i = 0; i < st.num_inputs; ++i) in_frame[input_slots_[st.first_input + i]] = 2;
  // A view (kView) shares its input's buffer, which the frame would reuse after the input's
  // last step; make_alias copies frame data instead. So the input is an owned tensor and the
  // view costs no copy.
  for (const Step& st : steps_)
    if (st.num_inputs > 0 && (st.op->has(ops::kView) || st.op->has(ops::kSharesInput)))
      in_frame[input_slots_[st.first_input]] = 2;
  std::vector<FrameEntry> entries;
  std::vector<int> def_step, last_step;
  frame_index_.assign(num_slots_, -1);
  for (size_t si = 0; si < steps_.size(); ++si) {
    const Step& st = steps_[si];
    if (!st.static_shapes || st.op->has(ops::kControlFlow) || st.op->has(ops::kOwnOutputs)) continue;
    for (int i = 0; i < st.num_outputs; ++i) {
      const int s = output_slots_[st.first_output + i];
      const StaticOutput& so = static_outputs_[st.first_static + i];
      // Object elements (strings, variants) hold references, which only a tensor's own
      // release gives back.
      if (in_frame[s] == 2 || !detail::has_values(so.dtype)) continue;
      frame_index_[s] = static_cast<int>(entries.size());
      in_frame[s] = 1;
      entries.push_back(FrameEntry{so.dtype, so.dims, detail::checked_num_elements(so.dims.data(), so.dims.size()), 0});
      def_step.push_back(static_cast<int>(si));
      last_step.push_back(std::max(last_use[s], static_cast<int>(si)));
    }
  }
  memory_.plan(std::move(entries), def_step, last_step, /*reuse=*/!parallel_);
  for (int& f : frame_index_)
    if (f >= 0) f = memory_.header_of(f);
}

// TensorFlow's buffer forwarding: an elementwise step whose input dies at this step, with the
// output's dtype and shape, may write its output over that input when, at run time, nothing
// else holds the tensor or its buffer. Elementwise kernels read element i before writing
// element i, so the exact overlap is safe. Off for concurrent plans, where "dies here" in
// step order does not mean no other step still reads it. A step whose shapes are known only
// at run time forwards too, once its shape function says the input has the output's shape.
void Plan::plan_forwarding(const std::vector<int>& last_use, const std::vector<char>& pinned) {
  for (size_t si = 0; si < steps_.size(); ++si) {
    Step& st = steps_[si];
    st.forward_slot = -1;
    if (parallel_) continue;
    // A slot whose tensor nothing reads after this step and that no frame or caller owns.
    auto dies_here = [&](int s) {
      return s >= 0 && !pinned[s] && frame_index_[s] < 0 && last_use[s] == static_cast<int>(si);
    };
    // A list update (kUpdatesInput) whose list dies here may change it in place.
    if (st.op->has(ops::kUpdatesInput)) {
      if (st.num_inputs > 0 && dies_here(input_slots_[st.first_input])) st.forward_slot = input_slots_[st.first_input];
      continue;
    }
    if (!st.op->has(ops::kElementwise) || st.op->has(ops::kOwnOutputs) || st.num_outputs < 1 ||
        frame_index_[output_slots_[st.first_output]] >= 0)
      continue;
    const DType dtype = st.node->out_dtypes[0];
    const TensorShape& want = st.node->out_shapes[0];
    // A kernel writes object pointers, never over owned ones.
    if (detail::holds_objects(dtype) || want.unknown_rank()) continue;
    // Static steps need an input of exactly the output's shape; steps whose shapes are known
    // only at run time (a served model's unknown batch) one that may have it, which
    // execute_step checks once the shape function has run.
    for (int i = 0; i < st.num_inputs && st.forward_slot < 0; ++i) {
      const int s = input_slots_[st.first_input + i];
      const graph::Output& in = st.node->inputs[i];
      const TensorShape& shape = in.node->out_shapes[in.index];
      const bool fits = st.static_shapes ? shape.is_fully_defined() && shape == want
                                         : !shape.unknown_rank() && shape.is_compatible_with(want);
      if (dies_here(s) && in.node->out_dtypes[in.index] == dtype && fits) st.forward_slot = s;
    }
  }
}

namespace {
// Gives a frame back to its plan's pool when a run ends (also by an error).
struct FrameLease {
  const MemoryPlan& plan;
  std::unique_ptr<Frame> frame;
  explicit FrameLease(const MemoryPlan& p) : plan(p) {
    if (!p.empty()) frame = p.acquire();
  }
  ~FrameLease() {
    if (frame) plan.release(std::move(frame));
  }
};

// The value slots of one run. Small plans (branches, loop bodies) keep them on the stack and
// construct only the slots they use: no allocation and no wasted destructors per run.
class SlotArray {
 public:
  explicit SlotArray(int n) : n_(n) {
    if (n > kStack)
      heap_ = std::make_unique<Tensor[]>(n);
    else
      for (int i = 0; i < n; ++i) new (&stack()[i]) Tensor();
  }
  ~SlotArray() {
    if (!heap_)
      for (int i = 0; i < n_; ++i) stack()[i].~Tensor();
  }
  SlotArray(const SlotArray&) = delete;
  SlotArray& operator=(const SlotArray&) = delete;
  Tensor* data() { return heap_ ? heap_.get() : stack(); }

 private:
  static constexpr int kStack = 32;
  Tensor* stack() { return reinterpret_cast<Tensor*>(storage_); }
  alignas(Tensor) unsigned char storage_[kStack * sizeof(Tensor)];
  std::unique_ptr<Tensor[]> heap_;
  int n_;
};

// Runs a control-flow node's compiled bodies.
class BodyRunner : public ops::SubgraphRunner {
 public:
  BodyRunner(const std::shared_ptr<const Plan>* bodies, int n) : bodies_(bodies), n_(n) {}
  void run(int body, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    bodies_[body]->run_into(inputs, outputs);
  }
  int num_bodies() const override { return n_; }

 private:
  const std::shared_ptr<const Plan>* bodies_;
  int n_;
};
}  // namespace

void Plan::run_control_flow(const Step& st, Tensor* slots) const {
  std::vector<Tensor> inputs(st.num_inputs), outputs;
  const int* is = input_slots_.data() + st.first_input;
  for (int i = 0; i < st.num_inputs; ++i) inputs[i] = slots[is[i]];
  BodyRunner runner(bodies_.data() + st.first_body, st.num_bodies);
  st.op->control_flow(*st.attrs, inputs, runner, outputs);
  if (static_cast<int>(outputs.size()) != st.num_outputs)
    throw InternalError(std::string(st.op->name) + " produced " + std::to_string(outputs.size()) +
                        " outputs, expected " + std::to_string(st.num_outputs));
  const int* os = output_slots_.data() + st.first_output;
  for (int i = 0; i < st.num_outputs; ++i) slots[os[i]] = std::move(outputs[i]);
}

std::vector<Tensor> Plan::run(const std::vector<Tensor>& feeds) const {
  std::vector<Tensor> results;
  run_into(feeds, results);
  return results;
}

namespace {
// The addresses of n contiguous tensors.
SmallVec<const Tensor*, 8> addresses(const Tensor* t, size_t n) {
  SmallVec<const Tensor*, 8> p;
  for (size_t i = 0; i < n; ++i) p.push_back(t + i);
  return p;
}
}  // namespace

void Plan::feed(const std::vector<Tensor>& feeds, Tensor* slots) const {
  feed(addresses(feeds.data(), feeds.size()).data(), feeds.size(), slots);
}

void Plan::feed(const Tensor* const* feeds, size_t num_feeds, Tensor* slots) const {
  if (num_feeds != feed_slots_.size())
    throw InvalidArgumentError("Expected " + std::to_string(feed_slots_.size()) + " inputs, got " +
                               std::to_string(num_feeds));
  for (size_t i = 0; i < num_feeds; ++i) {
    const ops::TensorImpl* t = feeds[i]->impl();
    if (!t || t->symbolic) throw InvalidArgumentError("Input " + std::to_string(i) + " must be a concrete tensor");
    if (t->dtype != feed_dtypes_[i])
      throw InvalidArgumentError("Input " + std::to_string(i) + " must be " + std::string(dtype_name(feed_dtypes_[i])) +
                                 ", got " + std::string(dtype_name(t->dtype)));
    const TensorShape& want = feed_shapes_[i];
    if (!detail::fits_within(t->dims.data(), static_cast<int>(t->dims.size()), want.dims().data(), want.rank()))
      throw InvalidArgumentError("Input " + std::to_string(i) + " has shape " + detail::shape_of_impl(*t).str() +
                                 ", which is not compatible with " + ops::shape_text(want));
    slots[feed_slots_[i]] = *feeds[i];
  }
  for (const auto& [slot, value] : const_slots_) slots[slot] = value;
}

bool Plan::will_run_in_parallel() const { return parallel_ && intra_op_threads() > 1 && inter_op_threads() != 1; }

void Plan::run_steps(Tensor* slots, Frame* frame) const {
  std::vector<int64_t> sizes;
  std::vector<double> measured;
  bool measuring = false;
  if (will_run_in_parallel()) {
    if (feed_size_decisions_) sizes = feed_sizes(slots);
    switch (side_by_side_for(sizes)) {
      case SideBySide::kYes:
        run_parallel(slots, frame);
        return;
      case SideBySide::kNo:
        break;
      case SideBySide::kMeasure:  // this run is serial, and measures each step's cost
        measuring = true;
        measured.reserve(steps_.size());
        break;
    }
  }
  std::vector<ops::InputInfo> infos;
  std::vector<const ops::TensorImpl*> measure_in;
  const detail::ActiveLimits* limits = detail::active_limits();
  for (const Step& st : steps_) {
    if (limits) limits->check();  // cancellation and deadline, between steps
    if (measuring) {
      measure_in.resize(st.num_inputs);
      gather_inputs(st, slots, frame, measure_in.data());
      measure_step(st, measure_in.data(), measured);
    }
    if (st.lean)
      run_lean(st, slots, frame);
    else
      execute_step(st, slots, frame, infos);
    const int* rs = release_slots_.data() + st.first_release;
    for (int i = 0; i < st.num_release; ++i) slots[rs[i]] = Tensor();
  }
  if (measuring) decide_side_by_side(sizes, measured);
}

// A While step. The cond and body plans get their slots and frames once for the whole loop;
// each iteration feeds the loop variables into them and runs their steps. Only the first
// feed is checked: later values are the body's results, whose dtypes and shapes the builder
// (or the importer) checked against the loop's shapes.
void Plan::run_loop(const Step& st, Tensor* slots) const {
  const Plan& cond = *bodies_[st.first_body];
  const Plan& body = *bodies_[st.first_body + 1];
  const int n = st.num_inputs;
  if (st.num_outputs != n || static_cast<int>(body.result_slots_.size()) != n)
    throw InternalError("a While node must have one output and one body result per loop variable");
  std::vector<Tensor> vars(n);
  const int* is = input_slots_.data() + st.first_input;
  for (int i = 0; i < n; ++i) vars[i] = slots[is[i]];
  const LoopRows* rows =
      st.loop_rows >= 0 && intra_op_threads() > 1 && loop_rows_enabled() ? &loop_rows_[st.loop_rows] : nullptr;
  std::vector<Tensor> out = iterate(cond, body, std::move(vars), rows);
  const int* os = output_slots_.data() + st.first_output;
  for (int i = 0; i < n; ++i) slots[os[i]] = std::move(out[i]);
}

// A loop's first step (its condition and body) has to take this long before the rest runs by
// rows: a block per thread costs a hand-over and a wait once, and stitching its rows back.
constexpr double kRowsMinStepMicros = 5;

std::vector<Tensor> Plan::iterate(const Plan& cond, const Plan& body, std::vector<Tensor> vars, const LoopRows* rows) {
  const int n = static_cast<int>(vars.size());
  SlotArray cond_slots(cond.num_slots_), body_slots(body.num_slots_);
  FrameLease cond_frame(cond.memory_), body_frame(body.memory_);
  Tensor* cs = cond_slots.data();
  Tensor* bs = body_slots.data();
  cond.feed(vars, cs);
  body.feed(vars, bs);
  vars.clear();
  // The body's feed slots hold the current loop variables between iterations (its
  // results move there); the cond gets a copy of those it reads.
  if (cond.result_slots_.size() != 1) throw InternalError("a While's cond must have one result");
  const int* body_feeds = body.feed_slots_.data();
  const int* body_results = body.result_slots_.data();
  const int* cond_feeds = cond.feed_slots_.data();
  const char* cond_reads = cond.feed_read_.data();
  // The cond borrows the variables it reads (it never releases or overwrites its feeds).
  for (int i = 0; i < n; ++i)
    if (cond_reads[i]) cs[cond_feeds[i]] = Tensor();
  const detail::ActiveLimits* limits = detail::active_limits();
  const auto start = rows ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  while (true) {
    if (limits) limits->check();  // a loop that never ends stops at its deadline
    for (int i = 0; i < n; ++i)
      if (cond_reads[i]) cs[cond_feeds[i]] = std::move(bs[body_feeds[i]]);
    cond.run_steps(cs, cond_frame.frame.get());
    // Read before the variables move back: the result may be one of them.
    const bool again = ops::condition_truth(*cond.result_impl(0, cs, cond_frame.frame.get()));
    for (int i = 0; i < n; ++i)
      if (cond_reads[i]) bs[body_feeds[i]] = std::move(cs[cond_feeds[i]]);
    if (!again) break;
    body.run_steps(bs, body_frame.frame.get());
    if (body.distinct_results_) {
      for (int i = 0; i < n; ++i) bs[body_feeds[i]] = std::move(bs[body_results[i]]);
    } else {  // a slot that is two results, a constant, or another variable's feed
      std::vector<Tensor> next(n);
      for (int i = 0; i < n; ++i) next[i] = bs[body_results[i]];
      for (int i = 0; i < n; ++i) bs[body_feeds[i]] = std::move(next[i]);
    }
    if (rows) {  // after the first step: the rest by rows, when the step took long enough
      const double micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      if (micros >= kRowsMinStepMicros) {
        std::vector<Tensor> now(n);
        for (int i = 0; i < n; ++i) now[i] = bs[body_feeds[i]];
        if (const int64_t batch = loop_batch(*rows, now); batch >= 2 * kRowsMinBlock) {
          for (int i = 0; i < n; ++i) bs[body_feeds[i]] = Tensor();  // `now` and the blocks hold them
          return iterate_by_rows(cond, body, now, *rows, batch);
        }
      }
      rows = nullptr;
    }
  }
  std::vector<Tensor> out(n);
  for (int i = 0; i < n; ++i) out[i] = bs[body_feeds[i]];
  return out;
}

std::vector<Tensor> Plan::iterate_by_rows(const Plan& cond, const Plan& body, const std::vector<Tensor>& vars,
                                          const LoopRows& rows, int64_t batch) {
  const int64_t blocks = std::min<int64_t>(intra_op_threads(), batch / kRowsMinBlock);
  count_loop_run_by_rows();
  std::vector<std::vector<Tensor>> results(static_cast<size_t>(blocks));
  detail::ActiveLimits* limits = detail::active_limits();  // the caller's, which waits for every block
  parallel_for_split(blocks, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      // Each block checks the caller's limits (deadline, cancellation, memory budgets) at
      // every step; its kernels run single-threaded, the threads being the blocks'.
      detail::LimitsAdoption adopt(limits);
      SerialKernelsScope serial;
      const int64_t first = batch * b / blocks, end = batch * (b + 1) / blocks;
      results[static_cast<size_t>(b)] = iterate(cond, body, vars_for_rows(rows, vars, first, end - first), nullptr);
    }
  });
  return stitch_vars(rows, results, vars);
}

namespace {
// Runs a step's kernel over its inputs and (allocated, or for kOwnOutputs null) outputs.
inline void call_kernel(const Step& st, const ops::TensorImpl* const* in, ops::TensorImpl** out,
                        bool may_update_input0 = false) {
  ops::KernelContext kc{.op = *st.op,
                        .inputs = in,
                        .num_inputs = st.num_inputs,
                        .outputs = out,
                        .num_outputs = st.num_outputs,
                        .attrs = *st.attrs,
                        .may_update_input0 = may_update_input0};
  st.kernel(kc);
}
}  // namespace

// The impls a step reads: frame headers or slot tensors.
inline void Plan::gather_inputs(const Step& st, Tensor* slots, Frame* frame, const ops::TensorImpl** in) const {
  const int* frame_index = frame_index_.data();
  const int* is = input_slots_.data() + st.first_input;
  for (int i = 0; i < st.num_inputs; ++i) {
    const int f = frame_index[is[i]];
    in[i] = f >= 0 ? frame->impl(f) : slots[is[i]].impl();
  }
}

// Output 0 written over the step's dying input (plan_forwarding) when nothing else holds its
// tensor or buffer, and, for a shape known only now, when it has `dims`: the tensor, moved
// to output 0's slot, or null. Dtypes were checked when the plan was made.
inline ops::TensorImpl* take_forwarded(const Step& st, Tensor* slots, int out_slot, const Dims* dims) {
  ops::TensorImpl* t = slots[st.forward_slot].impl();
  if (!t || (dims && t->dims != *dims) || !detail::exclusively_owned(*t)) return nullptr;
  slots[out_slot] = std::move(slots[st.forward_slot]);
  return t;
}

// A static-shape step's outputs (shapes and dtypes were checked at trace time: no shape
// function runs): a forwarded input, planned frame memory, or a new tensor in its slot.
inline void Plan::place_static_outputs(const Step& st, Tensor* slots, Frame* frame, ops::TensorImpl** out) const {
  const int* frame_index = frame_index_.data();
  const int* os = output_slots_.data() + st.first_output;
  const StaticOutput* so = static_outputs_.data() + st.first_static;
  int first = 0;
  if (st.forward_slot >= 0 && (out[0] = take_forwarded(st, slots, os[0], nullptr))) first = 1;
  for (int i = first; i < st.num_outputs; ++i) {
    const int f = frame_index[os[i]];
    if (f >= 0) {
      out[i] = frame->impl(f);  // planned memory: nothing to allocate
      continue;
    }
    slots[os[i]] = Tensor(detail::make_concrete_checked(so[i].dtype, so[i].dims.data(), so[i].dims.size(),
                                                        so[i].num_elements, so[i].bytes));
    out[i] = slots[os[i]].impl();
  }
}

// execute_step's static-shape path without its generality (control flow, kernels that own
// their outputs, dynamic shapes, any number of inputs): most steps of a plan are this.
inline void Plan::run_lean(const Step& st, Tensor* slots, Frame* frame) const {
  const ops::TensorImpl* in[kLeanInputs];
  ops::TensorImpl* out[kLeanOutputs];
  gather_inputs(st, slots, frame, in);
  try {
    place_static_outputs(st, slots, frame, out);
    call_kernel(st, in, out);
  } catch (const Error& e) {
    rethrow_with_node(e, st.node->name);
  }
}

void Plan::execute_step(const Step& st, Tensor* slots, Frame* frame, std::vector<ops::InputInfo>& infos) const {
  if (st.op->has(ops::kLoop) || st.op->control_flow) {
    try {
      if (st.op->has(ops::kLoop))
        run_loop(st, slots);
      else
        run_control_flow(st, slots);
    } catch (const Error& e) {
      rethrow_with_node(e, st.node->name);
    }
    return;
  }
  constexpr int kMax = 16;
  const ops::TensorImpl* in_stack[kMax];
  ops::TensorImpl* out_stack[kMax];
  std::vector<const ops::TensorImpl*> in_heap;
  std::vector<ops::TensorImpl*> out_heap;
  const ops::TensorImpl** in = in_stack;
  ops::TensorImpl** out = out_stack;
  if (st.num_inputs > kMax) {
    in_heap.resize(st.num_inputs);
    in = in_heap.data();
  }
  if (st.num_outputs > kMax) {
    out_heap.resize(st.num_outputs);
    out = out_heap.data();
  }
  gather_inputs(st, slots, frame, in);
  try {
    const int* os = output_slots_.data() + st.first_output;
    // A view's output shape was known when traced. Its input's may not have been (a Reshape
    // of a [?] to [2, 3]): only an input of as many elements aliases without the kernel,
    // whose shape function reports any other.
    if (st.op->has(ops::kView) && st.static_shapes &&
        in[0]->num_elements == static_outputs_[st.first_static].num_elements) {
      slots[os[0]] = Tensor(detail::make_alias(in[0], static_outputs_[st.first_static].dims));
      return;
    }
    if (st.op->has(ops::kOwnOutputs)) {  // the kernel provides its outputs
      for (int i = 0; i < st.num_outputs; ++i) out[i] = nullptr;
      // Input 0 dies here (plan_forwarding): the kernel may change it when nothing else
      // holds it. The slot keeps its reference until the step's releases.
      const ops::TensorImpl* dying = st.forward_slot >= 0 ? slots[st.forward_slot].impl() : nullptr;
      call_kernel(st, in, out, dying && dying == in[0] && detail::exclusively_owned(*dying));
      for (int i = 0; i < st.num_outputs; ++i) slots[os[i]] = Tensor(out[i]);
      return;
    }
    if (st.static_shapes) {
      place_static_outputs(st, slots, frame, out);
    } else {
      infos.resize(st.num_inputs);
      for (int i = 0; i < st.num_inputs; ++i) infos[i] = ops::InputInfo{in[i]->dtype, &in[i]->dims, false, in[i]};
      ops::InferContext ctx{*st.op, infos.data(), st.num_inputs, *st.attrs};
      eager::infer_concrete(ctx);
      int first = 0;
      if (st.forward_slot >= 0 && (out[0] = take_forwarded(st, slots, os[0], &ctx.out(0).shape.dims()))) first = 1;
      for (int i = first; i < st.num_outputs; ++i) {
        slots[os[i]] = Tensor(eager::allocate_output(ctx, i));
        out[i] = slots[os[i]].impl();
      }
    }
    call_kernel(st, in, out);
  } catch (const Error& e) {
    rethrow_with_node(e, st.node->name);
  }
}

// One inter-op parallel run: ready steps, dependency counts, and the first error. Shared
// with pool helpers, which may start after the run is over (then they find nothing to do).
struct ParallelRun {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> ready;
  std::unique_ptr<std::atomic<int>[]> pending, readers;
  int remaining = 0, running = 0;
  int helpers = 0, max_helpers = 0;  // pool threads in drain now, and at most
  std::exception_ptr error;
  // The caller's limits, copied: helpers adopt them while they run its steps.
  detail::ActiveLimits limits;
  bool has_limits = false;
};

// Call with run->mu held.
void Plan::add_helpers(const std::shared_ptr<ParallelRun>& run, int count, Tensor* slots, Frame* frame) const {
  count = std::min(count, run->max_helpers - run->helpers);
  for (int h = 0; h < count; ++h) {
    ++run->helpers;
    schedule_on_pool([this, run, slots, frame] { drain(run, slots, frame, false); });
  }
}

// Each participant takes ready steps until none are left; only the caller waits for steps in
// flight elsewhere (helpers never block, so the pool cannot deadlock). Steps beside others run
// single-threaded (the threads are busy with steps); a step that runs alone is the caller's,
// and its kernels split over the pool as in a serial run. A pool thread must not take it: it
// would wait for chunks queued behind itself.
void Plan::drain(const std::shared_ptr<ParallelRun>& run, Tensor* slots, Frame* frame, bool caller) const {
  ParallelRun& r = *run;
  detail::LimitsAdoption adopt(r.has_limits ? &r.limits : nullptr);
  std::vector<ops::InputInfo> infos;
  std::unique_lock<std::mutex> lock(r.mu);
  while (r.remaining > 0) {
    const bool can_take = !r.ready.empty() && !r.error && (caller || !alone_[r.ready.back()]);
    if (!can_take) {
      if (!caller) break;
      if (r.running == 0 && (r.error || r.ready.empty())) break;
      r.cv.wait(lock);
      continue;
    }
    const int si = r.ready.back();
    r.ready.pop_back();
    // The caller's step with nothing beside it (nothing else ready or running) gets the
    // intra-op threads too: the plan's estimate cannot know a loaded signature's batch, and a
    // batch-32 matmul run single-threaded here left the second thread idle.
    const bool alone = alone_[si] || (caller && r.ready.empty() && r.running == 0);
    ++r.running;
    lock.unlock();
    std::exception_ptr err;
    try {
      if (r.has_limits) r.limits.check();
      const Step& st = steps_[si];
      if (alone) {
        execute_step(st, slots, frame, infos);
      } else {
        SerialKernelsScope serial;
        execute_step(st, slots, frame, infos);
      }
      for (int i = 0; i < st.num_inputs; ++i) {
        const int s = input_slots_[st.first_input + i];
        if (slot_readers_[s] > 0 && r.readers[s].fetch_sub(1, std::memory_order_acq_rel) == 1) slots[s] = Tensor();
      }
    } catch (...) {
      err = std::current_exception();
    }
    lock.lock();
    --r.running;
    --r.remaining;
    if (err && !r.error) r.error = err;
    if (!err) {
      for (int next : successors_[si])
        if (r.pending[next].fetch_sub(1, std::memory_order_acq_rel) == 1) r.ready.push_back(next);
      // Helpers that left while a step ran alone come back for the steps it released.
      if (r.ready.size() > 1) add_helpers(run, static_cast<int>(r.ready.size()) - 1, slots, frame);
    }
    r.cv.notify_all();
  }
  if (!caller) --r.helpers;
}

void Plan::run_parallel(Tensor* slots, Frame* frame) const {
  auto run = std::make_shared<ParallelRun>();
  const int n = static_cast<int>(steps_.size());
  run->pending = std::make_unique<std::atomic<int>[]>(n);
  run->readers = std::make_unique<std::atomic<int>[]>(num_slots_);
  for (int i = 0; i < n; ++i) {
    run->pending[i].store(num_preds_[i], std::memory_order_relaxed);
    if (num_preds_[i] == 0) run->ready.push_back(i);
  }
  for (int s = 0; s < num_slots_; ++s) run->readers[s].store(slot_readers_[s], std::memory_order_relaxed);
  run->remaining = n;
  run->max_helpers = configured_threads() - 1;
  if (const int limit = inter_op_threads(); limit > 1) run->max_helpers = std::min(run->max_helpers, limit - 1);
  if (const detail::ActiveLimits* l = detail::active_limits()) {
    run->limits = *l;
    run->has_limits = true;
  }
  {
    std::lock_guard<std::mutex> lock(run->mu);
    add_helpers(run, run->max_helpers, slots, frame);
  }
  drain(run, slots, frame, true);
  std::unique_lock<std::mutex> lock(run->mu);
  run->cv.wait(lock, [&] { return run->running == 0; });
  const int never_ran = run->remaining;
  run->remaining = 0;  // late helpers see nothing left
  // Take the error out of the shared state: a late helper may drop the last reference to
  // that state while this thread is still handling the exception.
  std::exception_ptr error = std::move(run->error);
  run->error = nullptr;
  lock.unlock();
  if (error) std::rethrow_exception(error);
  if (never_ran > 0)  // dependency counts that never reach zero: a plan bug, never a silent result
    throw InternalError("parallel plan stalled: " + std::to_string(never_ran) + " steps never became ready");
}

void Plan::run_into(const Tensor* feeds, size_t num_feeds, std::vector<Tensor>& results) const {
  run_into(addresses(feeds, num_feeds).data(), num_feeds, results);
}

void Plan::run_into(const Tensor* const* feeds, size_t num_feeds, std::vector<Tensor>& results) const {
  if (batch_split_.separable && batch_split_enabled()) {
    const int64_t batch = batch_of(feeds, num_feeds);
    if (batch > 1 && run_rows(feeds, num_feeds, batch, results)) return;
  }
  run_whole(feeds, num_feeds, results);
}

void Plan::run_whole(const Tensor* const* feeds, size_t num_feeds, std::vector<Tensor>& results) const {
  SlotArray slot_array(num_slots_);
  Tensor* slots = slot_array.data();
  FrameLease lease(memory_);
  Frame* frame = lease.frame.get();
  feed(feeds, num_feeds, slots);
  run_steps(slots, frame);
  results.resize(result_slots_.size());
  for (size_t i = 0; i < result_slots_.size(); ++i)
    results[i] = result_moves_[i] ? std::move(slots[result_slots_[i]]) : slots[result_slots_[i]];
}

int64_t Plan::batch_of(const Tensor* const* feeds, size_t num_feeds) const {
  if (num_feeds != batch_split_.batched_feed.size()) return 0;  // feed() reports the mismatch
  int64_t batch = -1;
  for (size_t i = 0; i < num_feeds; ++i) {
    if (!batch_split_.batched_feed[i]) continue;
    const detail::TensorImpl* t = feeds[i]->impl();
    if (!t || t->symbolic || t->dims.empty() || t->dtype != feed_dtypes_[i] || (batch >= 0 && t->dims[0] != batch))
      return 0;
    batch = t->dims[0];
  }
  return batch;
}

namespace {

// The rows' results, each result's rows one after another; false unless every row's part
// of a result has one row and the same dtype and dims.
bool stitch_results(const std::vector<std::vector<Tensor>>& rows, std::vector<Tensor>& results) {
  const int64_t batch = static_cast<int64_t>(rows.size());
  std::vector<Tensor> stitched(rows[0].size());
  for (size_t r = 0; r < stitched.size(); ++r) {
    const detail::TensorImpl* first = rows[0][r].impl();
    if (!first || first->symbolic || first->dims.empty() || first->dims[0] != 1) return false;
    for (const auto& row : rows) {
      const detail::TensorImpl* part = row[r].impl();
      if (!part || part->symbolic || part->dtype != first->dtype || part->dims != first->dims) return false;
    }
    if (detail::holds_objects(first->dtype)) return false;
    std::vector<const detail::TensorImpl*> parts(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) parts[static_cast<size_t>(b)] = rows[static_cast<size_t>(b)][r].impl();
    stitched[r] = ops::stitch_rows(parts);
  }
  results = std::move(stitched);
  return true;
}

}  // namespace

bool Plan::run_rows(const Tensor* const* feeds, size_t num_feeds, int64_t batch, std::vector<Tensor>& results) const {
  std::vector<std::vector<Tensor>> rows(static_cast<size_t>(batch));
  std::atomic<bool> failed{false};
  std::atomic<int64_t> next{0};
  // Rows side by side, each on one thread with single-threaded kernels: one image's layers
  // are too small to split well over threads (MobileNetV2 at batch 1: 6.2 ms on one thread,
  // 4.4 on two), and two images at once keep both cores busy. Each thread takes the next
  // row when it is done with one (a thread slowed by a neighbour does fewer).
  const int64_t workers = std::min<int64_t>(intra_op_threads(), batch);
  parallel_for(workers, 2, [&](int64_t, int64_t) {
    SerialKernelsScope serial;
    std::vector<Tensor> row_feeds(num_feeds);
    std::vector<const Tensor*> ptrs(feeds, feeds + num_feeds);
    for (int64_t b; !failed.load(std::memory_order_relaxed) && (b = next.fetch_add(1)) < batch;) {
      for (size_t i = 0; i < num_feeds; ++i) {
        if (!batch_split_.batched_feed[i]) continue;
        row_feeds[i] = ops::rows_of(*feeds[i]->impl(), b, 1);  // a view where kiln owns the buffer
        ptrs[i] = &row_feeds[i];
      }
      try {
        run_whole(ptrs.data(), num_feeds, rows[static_cast<size_t>(b)]);
      } catch (const Error& e) {
        // A row's error is reported as the whole batch's run reports it (with its shapes),
        // unless the call ran out of time or memory or was cancelled: those stand.
        if (e.code() == ErrorCode::Cancelled || e.code() == ErrorCode::DeadlineExceeded ||
            e.code() == ErrorCode::ResourceExhausted)
          throw;
        failed = true;
      }
    }
  });
  return !failed && stitch_results(rows, results);
}

}  // namespace kiln::exec
