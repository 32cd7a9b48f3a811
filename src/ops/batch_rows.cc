#include "ops/batch_rows.h"

#include "core/tensor_impl.h"

namespace kiln::ops {

bool RowsContext::sized() const {
  for (int i = 0; i < num_inputs; ++i)
    if (kinds[i] == RowKind::kBatchSize || kinds[i] == RowKind::kRowsShape) return true;
  return false;
}

bool RowsContext::ints(int i, std::vector<int64_t>& out) const {
  const TensorImpl* v = i < num_inputs ? inputs[i].value : nullptr;
  if (!v) return false;
  out.clear();
  for (int64_t k = 0; k < v->num_elements; ++k) {
    if (v->dtype == DType::Int32)
      out.push_back(v->as<int32_t>()[k]);
    else if (v->dtype == DType::Int64)
      out.push_back(v->as<int64_t>()[k]);
    else
      return false;
  }
  return true;
}

bool touches_batch(const std::vector<int64_t>& axes, int rank) {
  for (int64_t a : axes)
    if (a == 0 || (rank > 0 && a == -rank)) return true;
  return false;
}

bool broadcasts_per_row(const InputInfo& free_input, int rank) {
  if (free_input.unknown_rank) return false;
  const Dims& d = *free_input.dims;
  const int r = static_cast<int>(d.size());
  return r < rank || (r == rank && rank > 0 && d[0] == 1);
}

RowKind rows_by_traits(const RowsContext& c) {
  if (!c.op.has(kElementwise) && !c.op.has(kForwardsInput)) return RowKind::kOther;
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.rows(i) ? c.rank(i) != c.out_rank : !c.free(i) || !broadcasts_per_row(c.inputs[i], c.out_rank))
      return RowKind::kOther;
  }
  return RowKind::kRows;
}

}  // namespace kiln::ops
