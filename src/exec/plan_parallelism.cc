// Inter-op parallelism: which steps of a plan may run side by side, and whether that pays.
// The plan decides once from its static shapes. A loaded signature's shapes have an unknown
// batch, which the estimate must count as 1; so a plan that chose to run side by side
// decides again for each size of its feeds' unknown dimensions, from the costs its first run
// at that size measured. At batch 32 a Transformer's matmuls are large enough to split each
// over the threads; estimated at batch 1 they looked small, and ran one per thread.
#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>

#include "exec/plan.h"

namespace kiln::exec {
namespace {

// A step this large splits its own work over the intra-op threads well: measured on
// InceptionV3 (two threads, its convolutions 1e7..1e9 multiply-adds at batch 1), splitting
// each step beat running the branches side by side with single-threaded kernels (104
// against 106-112 ms at batch 1, 2.6 against 3.6 s at batch 32). Inter-op parallelism is
// for graphs whose work is mostly in smaller steps.
constexpr double kSplitsWell = 1e7;
constexpr double kMinWork = 4e6;  // ~1 ms of scalar work: below it, hand-offs cost more
// Feed sizes remembered per plan; a plan called with more runs as first planned for the rest.
constexpr size_t kMaxFeedSizes = 16;

// The op's own estimate, else the elements it reads (an unknown dimension counts as 1).
double step_cost(const Step& st, const std::vector<ops::InputInfo>& infos) {
  if (st.op->cost) return static_cast<double>(st.op->cost(infos.data(), static_cast<int>(infos.size()), *st.attrs));
  double elements = 0;
  for (const ops::InputInfo& in : infos) {
    if (in.unknown_rank) continue;
    double e = 1;
    for (int64_t d : *in.dims) e *= static_cast<double>(std::max<int64_t>(d, 1));
    elements += e;
  }
  return elements;
}

}  // namespace

// Per feed size, append-only: a call reads the first `count` entries without a lock (each is
// written before count is raised past it, and never again); writers append under mu.
struct Plan::FeedSizeDecisions {
  std::mutex mu;
  std::array<std::pair<std::vector<int64_t>, bool>, kMaxFeedSizes> side_by_side;
  std::atomic<size_t> count{0};
};

// Run steps concurrently only when there is real work beside the critical path, and most of
// the work is in steps too small to split well.
bool Plan::worth_running_side_by_side(const std::vector<double>& cost) const {
  const size_t n = steps_.size();
  std::vector<double> start(n, 0);
  double total = 0, critical = 0, small = 0;
  for (size_t si = 0; si < n; ++si) {
    const double finish = start[si] + cost[si];
    for (int q : successors_[si]) start[q] = std::max(start[q], finish);
    if (cost[si] < kSplitsWell) small += cost[si];
    total += cost[si];
    critical = std::max(critical, finish);
  }
  return small >= kMinWork && small >= total / 2 && critical > 0 && total / critical >= 1.5;
}

void Plan::plan_parallelism(const graph::Graph& g) {
  const int n = static_cast<int>(steps_.size());
  std::vector<int> producer(num_slots_, -1), step_of_node(g.num_nodes(), -1);
  for (int si = 0; si < n; ++si) {
    const Step& st = steps_[si];
    step_of_node[st.node->id] = si;
    for (int i = 0; i < st.num_outputs; ++i) producer[output_slots_[st.first_output + i]] = si;
  }
  num_preds_.assign(n, 0);
  successors_.assign(n, {});
  std::vector<double> cost(n, 0);
  std::vector<ops::InputInfo> infos;
  for (int si = 0; si < n; ++si) {
    const Step& st = steps_[si];
    std::vector<int> preds;
    for (int i = 0; i < st.num_inputs; ++i)
      if (const int p = producer[input_slots_[st.first_input + i]]; p >= 0) preds.push_back(p);
    for (const graph::Node* c : st.node->control_inputs)
      if (c->id < static_cast<int>(step_of_node.size()) && step_of_node[c->id] >= 0)
        preds.push_back(step_of_node[c->id]);
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    num_preds_[si] = static_cast<int>(preds.size());
    for (int p : preds) successors_[p].push_back(si);
    infos.clear();
    for (const graph::Output& in : st.node->inputs) infos.push_back(graph::input_info(in));
    cost[si] = step_cost(st, infos);
  }
  parallel_ = worth_running_side_by_side(cost);
  if (!parallel_) return;
  plan_alone_steps();
  bool sizes_vary = false;
  for (const TensorShape& shape : feed_shapes_) sizes_vary |= !shape.is_fully_defined();
  if (sizes_vary) feed_size_decisions_ = std::make_shared<FeedSizeDecisions>();
}

// Steps are in a topological order. Step i runs alone when no dependency edge jumps over
// it (p < i < q), no step before it is a sink (each then leads to i, its successors staying
// at or before i) and no step after it is a source (each then comes from i). Linear time.
void Plan::plan_alone_steps() {
  const int n = static_cast<int>(steps_.size());
  std::vector<int> jumps(n + 1, 0), sinks_before(n + 1, 0), sources_after(n + 1, 0);
  for (int p = 0; p < n; ++p)
    for (int q : successors_[p])
      if (q > p + 1) {  // the edge jumps over p+1 .. q-1
        ++jumps[p + 1];
        --jumps[q];
      }
  for (int i = 0; i < n; ++i) sinks_before[i + 1] = sinks_before[i] + (successors_[i].empty() ? 1 : 0);
  for (int i = n - 1; i >= 0; --i) sources_after[i] = sources_after[i + 1] + (num_preds_[i] == 0 ? 1 : 0);
  alone_.assign(n, 0);
  int over = 0;
  for (int i = 0; i < n; ++i) {
    over += jumps[i];
    alone_[i] = over == 0 && sinks_before[i] == 0 && sources_after[i + 1] == 0;
  }
}

// The fed sizes of the feeds' unknown dimensions (an unknown rank: the rank and every size).
std::vector<int64_t> Plan::feed_sizes(const Tensor* slots) const {
  std::vector<int64_t> key;
  for (size_t i = 0; i < feed_slots_.size(); ++i) {
    const ops::TensorImpl* t = slots[feed_slots_[i]].impl();
    const TensorShape& planned = feed_shapes_[i];
    if (!t || planned.is_fully_defined()) continue;
    if (planned.unknown_rank()) {
      key.push_back(-1 - static_cast<int64_t>(t->dims.size()));
      key.insert(key.end(), t->dims.begin(), t->dims.end());
      continue;
    }
    for (int d = 0; d < planned.rank() && d < static_cast<int>(t->dims.size()); ++d)
      if (planned.dims()[d] < 0) key.push_back(t->dims[d]);
  }
  return key;
}

Plan::SideBySide Plan::side_by_side_for(const std::vector<int64_t>& sizes) const {
  if (!feed_size_decisions_) return SideBySide::kYes;
  const FeedSizeDecisions& d = *feed_size_decisions_;
  const size_t known = d.count.load(std::memory_order_acquire);
  for (size_t i = 0; i < known; ++i)
    if (d.side_by_side[i].first == sizes) return d.side_by_side[i].second ? SideBySide::kYes : SideBySide::kNo;
  return known < kMaxFeedSizes ? SideBySide::kMeasure : SideBySide::kYes;
}

bool Plan::will_run_in_parallel(const std::vector<Tensor>& feeds) const {
  if (!will_run_in_parallel()) return false;
  if (!feed_size_decisions_) return true;
  std::vector<Tensor> slots(num_slots_);
  for (size_t i = 0; i < feeds.size() && i < feed_slots_.size(); ++i) slots[feed_slots_[i]] = feeds[i];
  return side_by_side_for(feed_sizes(slots.data())) == SideBySide::kYes;
}

// Called before a step of a measuring (serial) run executes, while its inputs are live.
void Plan::measure_step(const Step& st, const ops::TensorImpl* const* in, std::vector<double>& cost) const {
  std::vector<ops::InputInfo> infos(st.num_inputs);
  for (int i = 0; i < st.num_inputs; ++i)
    infos[i] = in[i] ? ops::InputInfo{in[i]->dtype, &in[i]->dims, false, in[i]}
                     : ops::InputInfo{DType::Float32, nullptr, true, nullptr};
  cost.push_back(step_cost(st, infos));
}

void Plan::decide_side_by_side(const std::vector<int64_t>& sizes, const std::vector<double>& cost) const {
  if (cost.size() != steps_.size()) return;  // the run stopped early (an error, a cancellation)
  const bool yes = worth_running_side_by_side(cost);
  FeedSizeDecisions& d = *feed_size_decisions_;
  std::lock_guard<std::mutex> lock(d.mu);
  const size_t known = d.count.load(std::memory_order_relaxed);
  for (size_t i = 0; i < known; ++i)
    if (d.side_by_side[i].first == sizes) return;  // another call measured it meanwhile
  if (known == kMaxFeedSizes) return;
  d.side_by_side[known] = {sizes, yes};
  d.count.store(known + 1, std::memory_order_release);
}

}  // namespace kiln::exec
