// kiln::data's graph-facing functions: each dispatches one of the dataset ops
// (ops/dataset_ops.cc), so it runs eagerly or adds a node to the trace.
#include "api/api_util.h"
#include "kiln/data.h"

namespace kiln::data {
namespace {

// output_types and output_shapes attrs of a spec list (see ops/dataset_ops.cc).
ops::Attrs spec_attrs(const std::vector<TensorSpec>& spec) {
  std::vector<int64_t> types, shapes;
  for (const TensorSpec& s : spec) {
    types.push_back(static_cast<int64_t>(s.dtype));
    shapes.push_back(s.shape.unknown_rank() ? -1 : s.shape.rank());
    for (int64_t d : s.shape.dims()) shapes.push_back(d);
  }
  return ops::Attrs{types, shapes};
}

}  // namespace

Tensor make_iterator(const Tensor& dataset) {
  return trace::dispatch1(ops::op::KilnMakeIterator(), {&dataset}, trace::no_attrs(), "Iterator");
}

std::vector<Tensor> iterator_get_next(const Tensor& iterator, const std::vector<TensorSpec>& spec) {
  return trace::dispatch_list(ops::op::KilnIteratorGetNext(), {iterator}, spec_attrs(spec), "IteratorGetNext");
}

Tensor iterator_get_next_as_optional(const Tensor& iterator) {
  return trace::dispatch1(ops::op::KilnIteratorGetNextAsOptional(), {&iterator}, trace::no_attrs(),
                          "IteratorGetNextAsOptional");
}

Tensor optional_has_value(const Tensor& optional) {
  return trace::dispatch1(ops::op::KilnOptionalHasValue(), {&optional}, trace::no_attrs(), "OptionalHasValue");
}

std::vector<Tensor> optional_get_value(const Tensor& optional, const std::vector<TensorSpec>& spec) {
  return trace::dispatch_list(ops::op::KilnOptionalGetValue(), {optional}, spec_attrs(spec), "OptionalGetValue");
}

Tensor optional_from_value(const std::vector<Tensor>& components) {
  return trace::dispatch_list(ops::op::KilnOptionalFromValue(), components, trace::no_attrs(), "OptionalFromValue")[0];
}

Tensor optional_none() {
  return trace::dispatch_list(ops::op::KilnOptionalNone(), {}, trace::no_attrs(), "OptionalNone")[0];
}

ParsedExamples parse_example(const Tensor& serialized, const std::vector<std::string>& dense_keys,
                             const std::vector<Tensor>& dense_defaults, const std::vector<TensorSpec>& dense_specs,
                             const std::vector<std::string>& sparse_keys, const std::vector<DType>& sparse_types) {
  if (dense_keys.size() != dense_defaults.size() || dense_keys.size() != dense_specs.size())
    throw InvalidArgumentError("parse_example: one default and one spec per dense key");
  std::vector<int64_t> dtypes, shapes, stypes;
  for (const TensorSpec& s : dense_specs) {
    if (s.shape.unknown_rank()) throw InvalidArgumentError("parse_example: a dense feature's shape must have a rank");
    dtypes.push_back(static_cast<int64_t>(s.dtype));
    shapes.push_back(s.shape.rank());
    for (int64_t d : s.shape.dims()) shapes.push_back(d);
  }
  for (DType d : sparse_types) stypes.push_back(static_cast<int64_t>(d));
  const int64_t nd = static_cast<int64_t>(dense_keys.size()), ns = static_cast<int64_t>(sparse_keys.size());
  std::vector<Tensor> inputs = {serialized,
                                trace::as_graph_constant(constant<std::string>(dense_keys, {nd}), "dense_keys"),
                                trace::as_graph_constant(constant<std::string>(sparse_keys, {ns}), "sparse_keys")};
  inputs.insert(inputs.end(), dense_defaults.begin(), dense_defaults.end());
  std::vector<Tensor> out =
      trace::dispatch_list(ops::op::KilnParseExample(), inputs, ops::Attrs{dtypes, stypes, shapes}, "ParseExample");
  ParsedExamples r;
  for (int64_t i = 0; i < ns; ++i) {
    r.sparse_indices.push_back(out[i]);
    r.sparse_values.push_back(out[ns + i]);
    r.sparse_shapes.push_back(out[2 * ns + i]);
  }
  for (int64_t i = 0; i < nd; ++i) r.dense_values.push_back(out[3 * ns + i]);
  return r;
}

std::vector<Tensor> decode_csv(const Tensor& records, const std::vector<Tensor>& record_defaults,
                               const std::string& field_delim, bool use_quote_delim, const std::string& na_value,
                               const std::vector<int64_t>& select_cols) {
  std::vector<Tensor> inputs = {records};
  inputs.insert(inputs.end(), record_defaults.begin(), record_defaults.end());
  return trace::dispatch_list(ops::op::KilnDecodeCSV(), inputs,
                              ops::Attrs{field_delim, use_quote_delim, na_value, select_cols}, "DecodeCSV");
}

}  // namespace kiln::data
