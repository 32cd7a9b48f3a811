// Collectives over every rank of the process group (src/distribute/communicator.h, MPI):
// CollectiveReduceV2 and CollectiveGatherV2 with TensorFlow's names and inputs (input,
// group_size, group_key, instance_key) and attrs (merge_op Add|Mul|Min|Max, final_op Id|Div,
// timeout_seconds); KilnBroadcast(input), attr root_rank (TensorFlow splits a broadcast into
// a send on the root and receives elsewhere; one op on every rank suits a program that every
// rank traces the same way). The group is the whole world: group_size must be its size.
// Stateful: never folded, merged or pruned, and traced in program order, so every rank runs
// the same collectives in the same order. CollectiveGatherV2 may take a different first
// dimension on each rank (Horovod's allgather); TensorFlow's requires equal shapes.
#include <cstring>

#include "distribute/communicator.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

namespace comm = distribute::comm;

constexpr int kMergeOp = 0, kFinalOp = 1;  // CollectiveReduceV2's attrs (then timeout_seconds)
constexpr int kRootRank = 0;               // KilnBroadcast's attr

void check_group(const InferContext& c) {
  for (int i = 1; i < 4; ++i) {
    const InputInfo& k = c.in(i);
    if (k.dtype != DType::Int32)
      c.fail(std::string("group_size, group_key and instance_key must be int32, got ") + tf_type_name(k.dtype));
    if (!k.unknown_rank && !k.dims->empty()) c.fail("group_size, group_key and instance_key must be scalars");
  }
}
void check_group_size(const KernelContext& c) {
  const int32_t group = c.in(1).as<int32_t>()[0];
  if (group != comm::size())
    throw InvalidArgumentError("kiln.distribute: group_size is " + std::to_string(group) +
                               ", but the collective runs over all " + std::to_string(comm::size()) + " ranks");
}
std::vector<int64_t> dims_of(const TensorImpl& t) { return std::vector<int64_t>(t.dims.begin(), t.dims.end()); }

comm::Reduction reduction(const std::string& merge) {
  if (merge == "Add") return comm::Reduction::kSum;
  if (merge == "Min") return comm::Reduction::kMin;
  if (merge == "Max") return comm::Reduction::kMax;
  if (merge == "Mul") return comm::Reduction::kProd;
  throw InvalidArgumentError("merge_op must be Add, Mul, Min or Max, got '" + merge + "'");
}

void infer_reduce(InferContext& c) {
  check_group(c);
  const DType d = c.in(0).dtype;
  if (d == DType::Bool) c.fail("CollectiveReduceV2 does not support bool tensors");
  reduction(c.attrs.s(kMergeOp));
  const std::string& final_op = c.attrs.s(kFinalOp);
  if (final_op != "Id" && final_op != "Div") c.fail("final_op must be Id or Div, got '" + final_op + "'");
  if (final_op == "Div" && !is_floating(d))
    c.fail(std::string("final_op Div needs a floating-point tensor, got ") + tf_type_name(d));
  c.out(0) = OutputInfo{d, c.in(0).unknown_rank ? TensorShape::unknown() : TensorShape(Dims(*c.in(0).dims))};
  c.kernel_dtype = d;
}
template <class T>
struct ReduceKernel {
  static void run(KernelContext& c) {
    check_group_size(c);
    const TensorImpl& x = c.in(0);
    const comm::Reduction op = reduction(c.attrs.s(kMergeOp));
    comm::agree({.what = "allreduce",
                 .dtype = x.dtype,
                 .dims = dims_of(x),
                 .first_dim_may_differ = false,
                 .detail = static_cast<int64_t>(op) * 2 + (c.attrs.s(kFinalOp) == "Div")});
    T* out = c.out(0).as<T>();
    if (x.num_elements == 0) return;
    comm::allreduce(x.as<T>(), out, x.num_elements, x.dtype, op);
    if constexpr (std::is_floating_point_v<T>) {
      if (c.attrs.s(kFinalOp) == "Div") {
        const T n = static_cast<T>(comm::size());
        for (int64_t i = 0; i < x.num_elements; ++i) out[i] /= n;
      }
    }
  }
};
// d(sum or mean over ranks) / d(this rank's input): the same reduction of the upstream
// gradients, as Horovod's allreduce gradient.
void reduce_grad(GradContext& c) {
  if (c.attrs.s(kMergeOp) != "Add")
    throw UnimplementedError("the gradient of CollectiveReduceV2 with merge_op " + c.attrs.s(kMergeOp) +
                             " (only Add, the sum or the average)");
  c.dx[0] = grad::emit1(c.b, op::CollectiveReduceV2(), {&c.dy[0], &c.x[1], &c.x[2], &c.x[3]}, c.attrs);
}

void infer_gather(InferContext& c) {
  check_group(c);
  const InputInfo& x = c.in(0);
  if (!x.unknown_rank && x.dims->empty()) c.fail("CollectiveGatherV2 needs a tensor of rank >= 1, got a scalar");
  Dims dims = x.unknown_rank ? Dims{} : *x.dims;
  if (!dims.empty()) dims[0] = -1;  // the ranks' first dimensions add up at run time
  c.out(0) = OutputInfo{x.dtype, x.unknown_rank ? TensorShape::unknown() : TensorShape(Dims(dims))};
}
struct GatherKernel {
  static void run(KernelContext& c) {
    check_group_size(c);
    const TensorImpl& x = c.in(0);
    const std::vector<int64_t> firsts = comm::agree(
        {.what = "allgather", .dtype = x.dtype, .dims = dims_of(x), .first_dim_may_differ = true, .detail = 0});
    const int64_t row_bytes = x.dims[0] ? static_cast<int64_t>(x.nbytes()) / x.dims[0] : 0;
    std::vector<int64_t> dims = dims_of(x), rank_bytes;
    dims[0] = 0;
    for (int64_t f : firsts) {
      dims[0] += f;
      rank_bytes.push_back(f * row_bytes);
    }
    int64_t elements = 1;
    for (int64_t d : dims) elements *= d;
    TensorImpl* out = detail::make_concrete_checked(x.dtype, dims.data(), dims.size(), elements,
                                                    elements * static_cast<int64_t>(dtype_size(x.dtype)));
    try {
      comm::allgather(x.data, static_cast<int64_t>(x.nbytes()), rank_bytes, out->data);
    } catch (...) {
      detail::destroy_tensor_impl(out);
      throw;
    }
    c.outputs[0] = out;  // owned by the step from here on
  }
};

void infer_broadcast(InferContext& c) {
  const InputInfo& x = c.in(0);
  if (c.attrs.i(kRootRank) < 0) c.fail("root_rank must be >= 0, got " + std::to_string(c.attrs.i(kRootRank)));
  c.out(0) = OutputInfo{x.dtype, x.unknown_rank ? TensorShape::unknown() : TensorShape(Dims(*x.dims))};
}
struct BroadcastKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const int64_t root = c.attrs.i(kRootRank);
    if (root >= comm::size())
      throw InvalidArgumentError("kiln.distribute: root_rank " + std::to_string(root) + " is not a rank (there are " +
                                 std::to_string(comm::size()) + ")");
    comm::agree(
        {.what = "broadcast", .dtype = x.dtype, .dims = dims_of(x), .first_dim_may_differ = false, .detail = root});
    std::memcpy(c.out(0).data, x.data, x.nbytes());
    comm::broadcast(c.out(0).data, static_cast<int64_t>(x.nbytes()), static_cast<int>(root));
  }
};

}  // namespace

const OpDef& op::CollectiveReduceV2() {
  static const OpDef def = {
      .name = "CollectiveReduceV2",
      .num_inputs = 4,
      .num_outputs = 1,
      .input_args = {"input", "group_size", "group_key", "instance_key"},
      .traits = kStateful,
      .attr_specs = {string_attr("merge_op"), string_attr("final_op"), float_attr("timeout_seconds", 0.0)},
      .infer = infer_reduce,
      .kernels = kernels_for<ReduceKernel, KILN_NUMERIC>(),
      .grad = &reduce_grad,
      .output_args = {"data"}};
  return def;
}
const OpDef& op::CollectiveGatherV2() {
  static const OpDef def = {.name = "CollectiveGatherV2",
                            .num_inputs = 4,
                            .num_outputs = 1,
                            .input_args = {"input", "group_size", "group_key", "instance_key"},
                            .traits = kStateful | kOwnOutputs,
                            .attr_specs = {float_attr("timeout_seconds", 0.0)},
                            .infer = infer_gather,
                            .any_dtype_kernel = &GatherKernel::run,
                            .grad = &no_gradient,
                            .output_args = {"data"}};
  return def;
}
const OpDef& op::KilnBroadcast() {
  static const OpDef def = {.name = "KilnBroadcast",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kStateful,
                            .attr_specs = {int_attr("root_rank")},
                            .infer = infer_broadcast,
                            .any_dtype_kernel = &BroadcastKernel::run,
                            .grad = &no_gradient,
                            .output_args = {"output"}};
  return def;
}

}  // namespace kiln::ops
