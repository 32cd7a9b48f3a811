// The ops that let a traced function iterate a dataset (tf.data inside tf.function):
//   KilnMakeIterator(dataset) -> iterator          a new pass over the dataset
//   KilnIteratorGetNext(iterator) -> components     the next element; OutOfRangeError at the end
//   KilnIteratorGetNextAsOptional(iterator) -> optional
//   KilnOptionalHasValue(optional) -> bool
//   KilnOptionalGetValue(optional) -> components
//   KilnOptionalFromValue(components) -> optional   an optional holding the components
//   KilnOptionalNone() -> optional                   an empty optional
// Datasets, iterators and optionals are scalar variant tensors (ops/dataset_object.h).
// TensorFlow's rows (AnonymousIteratorV3, IteratorGetNext, ...) pass the iterator as a
// resource, which kiln holds as a tensor; these rows are kiln's own (kInternal: a graph that
// holds a dataset is not saved). output_types lists the components' dtypes; output_shapes
// their shapes, each as its rank (-1: unknown) followed by its dims (-1: unknown).
#include "ops/dataset_object.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kGetNextTypes = attr_index(op::KilnIteratorGetNext(), "output_types");
const int kGetNextShapes = attr_index(op::KilnIteratorGetNext(), "output_shapes");
const int kGetValueTypes = attr_index(op::KilnOptionalGetValue(), "output_types");
const int kGetValueShapes = attr_index(op::KilnOptionalGetValue(), "output_shapes");

// The components' specs from the two attrs; InvalidArgumentError for a malformed list.
template <class Fail>
std::vector<TensorSpec> specs_of(const std::vector<int64_t>& types, const std::vector<int64_t>& shapes, Fail fail) {
  std::vector<TensorSpec> out;
  size_t at = 0;
  for (int64_t t : types) {
    if (t < 0 || t >= kNumDTypes) fail("output_types holds an invalid dtype");
    if (at >= shapes.size()) fail("output_shapes is shorter than output_types");
    const int64_t rank = shapes[at++];
    if (rank < -1 || rank > 254 || at + static_cast<size_t>(std::max<int64_t>(rank, 0)) > shapes.size())
      fail("output_shapes holds an invalid shape");
    TensorShape shape = TensorShape::unknown();
    if (rank >= 0) {
      Dims dims;
      for (int64_t d = 0; d < rank; ++d) {
        if (shapes[at] < -1) fail("output_shapes holds an invalid dimension");
        dims.push_back(shapes[at++]);
      }
      shape = TensorShape(dims);
    }
    out.push_back({.shape = shape, .dtype = static_cast<DType>(t)});
  }
  if (at != shapes.size()) fail("output_shapes is longer than output_types");
  return out;
}

void require_variant(const InferContext& c) {
  if (c.in(0).dtype != DType::Variant)
    c.fail(std::string(c.op.name) + " takes a variant tensor, got " + tf_type_name(c.in(0).dtype));
}

void infer_handle(InferContext& c) {  // KilnMakeIterator, KilnIteratorGetNextAsOptional
  require_variant(c);
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void infer_has_value(InferContext& c) {
  require_variant(c);
  c.out(0) = {.dtype = DType::Bool, .shape = TensorShape()};
}

void infer_components(InferContext& c) {  // KilnIteratorGetNext, KilnOptionalGetValue
  require_variant(c);
  const bool get_next = &c.op == &op::KilnIteratorGetNext();
  const auto specs =
      specs_of(c.attrs.list(get_next ? kGetNextTypes : kGetValueTypes),
               c.attrs.list(get_next ? kGetNextShapes : kGetValueShapes), [&](const std::string& m) { c.fail(m); });
  c.set_num_outputs(static_cast<int>(specs.size()));
  for (size_t i = 0; i < specs.size(); ++i)
    c.out(static_cast<int>(i)) = {.dtype = specs[i].dtype, .shape = specs[i].shape};
}

// Checks an element against the node's specs (a dataset's elements always match its spec;
// this guards a graph built against another dataset) and hands out its components.
void hand_out_element(KernelContext& c, const std::vector<Tensor>& element, int types, int shapes) {
  const auto specs = specs_of(c.attrs.list(types), c.attrs.list(shapes), [&](const std::string& m) { c.fail(m); });
  if (element.size() != specs.size() || static_cast<int>(element.size()) != c.num_outputs)
    c.fail("the element has " + std::to_string(element.size()) + " components, the node expects " +
           std::to_string(specs.size()));
  for (size_t i = 0; i < element.size(); ++i)
    if (element[i].dtype() != specs[i].dtype || !specs[i].shape.is_compatible_with(element[i].shape()))
      c.fail("component " + std::to_string(i) +
             " of the element does not match the node's output_types and "
             "output_shapes");
  for (size_t i = 0; i < element.size(); ++i) c.outputs[i] = hand_out(element[i]);
}

IteratorObject& iterator_in(KernelContext& c) {
  IteratorObject* it = object_in<IteratorObject>(c.in(0));
  if (!it) c.fail("the input is not an iterator (a scalar variant holding one)");
  return *it;
}

void run_make_iterator(KernelContext& c) {
  const DatasetObject* ds = object_in<DatasetObject>(c.in(0));
  if (!ds) c.fail("the input is not a dataset (a scalar variant holding one)");
  Tensor t = variant_holding(new IteratorObject(ds));
  c.outputs[0] = hand_out(t);
}

void run_get_next(KernelContext& c) {
  std::vector<Tensor> element;
  if (!iterator_in(c).next(&element)) throw OutOfRangeError("End of sequence");
  hand_out_element(c, element, kGetNextTypes, kGetNextShapes);
}

void run_get_next_as_optional(KernelContext& c) {
  auto* opt = new OptionalObject;
  Tensor t = variant_holding(opt);  // owns opt from here, whatever happens next
  opt->has_value = iterator_in(c).next(&opt->value);
  c.outputs[0] = hand_out(t);
}

const OptionalObject& optional_in(KernelContext& c) {
  const OptionalObject* opt = object_in<OptionalObject>(c.in(0));
  if (!opt) c.fail("the input is not an optional (a scalar variant holding one)");
  return *opt;
}

void run_has_value(KernelContext& c) {
  const bool has = optional_in(c).has_value;
  Tensor t = detail::wrap(detail::make_concrete(DType::Bool, Dims{}));
  detail::impl_of(t)->as<bool>()[0] = has;
  c.outputs[0] = hand_out(t);
}

void run_get_value(KernelContext& c) {
  const OptionalObject& opt = optional_in(c);
  if (!opt.has_value) throw InvalidArgumentError("The optional does not have a value");
  hand_out_element(c, opt.value, kGetValueTypes, kGetValueShapes);
}

void infer_optional(InferContext& c) {  // KilnOptionalFromValue, KilnOptionalNone
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void run_optional_from_value(KernelContext& c) {
  auto* opt = new OptionalObject;
  Tensor t = variant_holding(opt);
  opt->has_value = true;
  for (int i = 0; i < c.num_inputs; ++i) {  // shared, as the element an iterator hands out is
    auto* impl = const_cast<detail::TensorImpl*>(c.inputs[i]);
    impl->refs.fetch_add(1, std::memory_order_relaxed);
    opt->value.emplace_back(impl);
  }
  c.outputs[0] = hand_out(t);
}

void run_optional_none(KernelContext& c) {
  Tensor t = variant_holding(new OptionalObject);
  c.outputs[0] = hand_out(t);
}

}  // namespace

const OpDef& op::KilnMakeIterator() {
  static const OpDef def = {.name = "KilnMakeIterator",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"dataset"},
                            .traits = kStateful | kInternal | kOwnOutputs,
                            .infer = infer_handle,
                            .any_dtype_kernel = &run_make_iterator,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"handle"}};
  return def;
}

const OpDef& op::KilnIteratorGetNext() {
  static const OpDef def = {.name = "KilnIteratorGetNext",
                            .num_inputs = 1,
                            .num_outputs = -1,
                            .input_args = {"iterator"},
                            .traits = kStateful | kInternal | kOwnOutputs,
                            .attr_specs = {int_list_attr("output_types"), int_list_attr("output_shapes")},
                            .infer = infer_components,
                            .any_dtype_kernel = &run_get_next,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"components"}};
  return def;
}

const OpDef& op::KilnIteratorGetNextAsOptional() {
  static const OpDef def = {.name = "KilnIteratorGetNextAsOptional",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"iterator"},
                            .traits = kStateful | kInternal | kOwnOutputs,
                            .infer = infer_handle,
                            .any_dtype_kernel = &run_get_next_as_optional,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"optional"}};
  return def;
}

const OpDef& op::KilnOptionalHasValue() {
  static const OpDef def = {.name = "KilnOptionalHasValue",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"optional"},
                            .traits = kInternal | kOwnOutputs,
                            .infer = infer_has_value,
                            .any_dtype_kernel = &run_has_value,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"has_value"}};
  return def;
}

const OpDef& op::KilnOptionalGetValue() {
  static const OpDef def = {.name = "KilnOptionalGetValue",
                            .num_inputs = 1,
                            .num_outputs = -1,
                            .input_args = {"optional"},
                            .traits = kInternal | kOwnOutputs,
                            .attr_specs = {int_list_attr("output_types"), int_list_attr("output_shapes")},
                            .infer = infer_components,
                            .any_dtype_kernel = &run_get_value,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"components"}};
  return def;
}

// Optionals made in a trace (tf.experimental.Optional.from_value / empty) are variant tensors,
// so they can be loop variables and results like those an iterator makes. Stateful: never
// folded into a constant (a variant constant cannot be written as one).
const OpDef& op::KilnOptionalFromValue() {
  static const OpDef def = {.name = "KilnOptionalFromValue",
                            .num_inputs = -1,
                            .num_outputs = 1,
                            .input_args = {list_arg("components")},
                            .traits = kStateful | kInternal | kOwnOutputs,
                            .infer = infer_optional,
                            .any_dtype_kernel = &run_optional_from_value,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"optional"}};
  return def;
}

const OpDef& op::KilnOptionalNone() {
  static const OpDef def = {.name = "KilnOptionalNone",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .traits = kStateful | kInternal | kOwnOutputs,
                            .infer = infer_optional,
                            .any_dtype_kernel = &run_optional_none,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"optional"}};
  return def;
}

}  // namespace kiln::ops
