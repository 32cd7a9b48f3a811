// kiln::distribute: the process group (src/distribute/communicator.h) and the collectives as
// ops (src/ops/collective.cc), with Horovod's semantics; tensor fusion packs many gradients
// into one reduction with the ordinary Reshape, ConcatV2 and Slice ops.
#include "kiln/distribute.h"

#include <map>

#include "api/api_util.h"
#include "distribute/communicator.h"
#include "kiln/ops.h"

namespace kiln::distribute {
namespace {

// The group is the whole world; its key and instance key are TensorFlow's inputs, unused.
Tensor reduce_op(const Tensor& t, const char* merge, const char* final_op) {
  const Tensor group = api::int_scalar(size(), "group_size");
  const Tensor key = api::int_scalar(0, "group_key");
  const Tensor instance = api::int_scalar(0, "instance_key");
  return trace::dispatch1(ops::op::CollectiveReduceV2(), {&t, &group, &key, &instance},
                          ops::Attrs{std::string(merge), std::string(final_op), comm::timeout_seconds()},
                          "CollectiveReduceV2");
}

}  // namespace

bool available() { return comm::available(); }
void init() { comm::init(); }
bool is_initialized() { return comm::initialized(); }
void shutdown() { comm::shutdown(); }
void abort_job(int exit_code) { comm::abort_job(exit_code); }
int rank() { return comm::rank(); }
int size() { return comm::size(); }
int local_rank() { return comm::local_rank(); }
int local_size() { return comm::local_size(); }
double timeout_seconds() { return comm::timeout_seconds(); }
void set_timeout_seconds(double seconds) { comm::set_timeout_seconds(seconds); }
int64_t collective_calls() { return comm::calls(); }

Tensor allreduce(const Tensor& t, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return reduce_op(t, "Add", "Id");
    case ReduceOp::kMin:
      return reduce_op(t, "Min", "Id");
    case ReduceOp::kMax:
      return reduce_op(t, "Max", "Id");
    case ReduceOp::kAverage:
      if (is_floating(t.dtype())) return reduce_op(t, "Add", "Div");
      return div(reduce_op(t, "Add", "Id"), cast(api::int_scalar(size()), t.dtype()));
  }
  throw InvalidArgumentError("kiln.distribute.allreduce: unknown reduction");
}

std::vector<Tensor> grouped_allreduce(const std::vector<Tensor>& ts, ReduceOp op, int64_t fusion_bytes) {
  std::vector<Tensor> out(ts.size());
  // Buckets of one dtype, filled in the order given until the next tensor would overflow one.
  std::map<DType, std::vector<std::vector<size_t>>> buckets;
  std::map<DType, int64_t> filled;
  for (size_t i = 0; i < ts.size(); ++i) {
    const TensorShape shape = ts[i].shape();
    if (!shape.is_fully_defined() || (op == ReduceOp::kAverage && !is_floating(ts[i].dtype()))) {
      out[i] = allreduce(ts[i], op);  // a shape known only at run time, or a dtype change: alone
      continue;
    }
    const int64_t bytes = shape.num_elements() * static_cast<int64_t>(dtype_size(ts[i].dtype()));
    auto& list = buckets[ts[i].dtype()];
    int64_t& used = filled[ts[i].dtype()];
    if (list.empty() || used + bytes > fusion_bytes) {
      list.emplace_back();
      used = 0;
    }
    list.back().push_back(i);
    used += bytes;
  }
  for (const auto& [dtype, list] : buckets)
    for (const std::vector<size_t>& bucket : list) {
      if (bucket.size() == 1) {
        out[bucket[0]] = allreduce(ts[bucket[0]], op);
        continue;
      }
      std::vector<Tensor> flat;
      for (size_t i : bucket) flat.push_back(reshape(ts[i], {-1}));
      const Tensor reduced = allreduce(concat(flat, 0), op);
      int64_t at = 0;
      for (size_t i : bucket) {
        const TensorShape shape = ts[i].shape();
        out[i] = reshape(slice(reduced, {at}, {shape.num_elements()}), shape.dims());
        at += shape.num_elements();
      }
    }
  return out;
}

Tensor allgather(const Tensor& t) {
  const Tensor group = api::int_scalar(size(), "group_size");
  const Tensor key = api::int_scalar(0, "group_key");
  const Tensor instance = api::int_scalar(0, "instance_key");
  return trace::dispatch1(ops::op::CollectiveGatherV2(), {&t, &group, &key, &instance},
                          ops::Attrs{comm::timeout_seconds()}, "CollectiveGatherV2");
}

Tensor broadcast(const Tensor& t, int root_rank) {
  return trace::dispatch1(ops::op::KilnBroadcast(), {&t}, ops::Attrs{int64_t{root_rank}}, "KilnBroadcast");
}

void broadcast_variables(const std::vector<Variable*>& variables, int root_rank) {
  for (Variable* v : variables) {
    if (!v) throw InvalidArgumentError("kiln.distribute.broadcast_variables: a null variable");
    v->assign(broadcast(v->read(), root_rank));
  }
}

}  // namespace kiln::distribute
