// TensorFlow's TensorList ops: a list of tensors of one dtype held by a scalar variant tensor.
// Keras's recurrent layers (and tf.TensorArray) read their input steps from one and write
// their outputs into one inside a While loop. A list value never changes once another tensor
// may see it: SetItem and PushBack make a new list that shares the untouched items, unless a
// plan hands them the only reference to a list that dies at the step (kUpdatesInput), which
// they change in place: a loop's writes then cost O(1) each, not O(length). Items are copies
// of the tensors given (an input may live in a plan's reused memory), so a list owns what it
// holds.
//
// Every kernel validates its inputs itself: these ops hand out their outputs (kOwnOutputs),
// so plans run them without their shape function.
#include "ops/tensor_list.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/object_value.h"
#include "core/parallel.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// More elements than this in one list is refused (ResourceExhaustedError): a corrupt
// num_elements must not make kiln reserve gigabytes of handles.
constexpr int64_t kMaxListElements = int64_t{1} << 24;

struct TensorList final : detail::ObjectValue {
  DType element_dtype = DType::Float32;
  TensorShape element_shape = TensorShape::unknown();  // what every item must be compatible with
  std::vector<Tensor> items;                           // an undefined handle: not set yet
  int64_t max_num_elements = -1;                       // EmptyTensorList's bound; -1 none

  const char* type_name() const override { return "tensorflow::TensorList"; }
  std::string summary() const override {
    return "TensorList<" + std::string(tf_type_name(element_dtype)) + ">(" + shape_text(element_shape) + ", " +
           std::to_string(items.size()) + " elements)";
  }
};

const int kReserveDtype = attr_index(op::TensorListReserve(), "element_dtype");
const int kEmptyDtype = attr_index(op::EmptyTensorList(), "element_dtype");
const int kGetItemDtype = attr_index(op::TensorListGetItem(), "element_dtype");
const int kStackDtype = attr_index(op::TensorListStack(), "element_dtype");
const int kStackNum = attr_index(op::TensorListStack(), "num_elements");
const int kPopBackDtype = attr_index(op::TensorListPopBack(), "element_dtype");
const int kSetItemResize = attr_index(op::TensorListSetItem(), "resize_if_index_out_of_bounds");
const int kElementShapeType = attr_index(op::TensorListElementShape(), "shape_type");

std::string type_text(DType d) { return tf_type_name(d); }

// ---- shape functions: what is known without the list's value ---------------------------

void require_dtype(const InferContext& c, int input, DType want) {
  if (c.in(input).dtype != want)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(input) +
           "(zero-based) was expected to be a " + tf_type_name(want) + " tensor but is a " +
           tf_type_name(c.in(input).dtype) + " tensor");
}
void require_value_dtype(const InferContext& c, DType d) {
  if (!detail::has_values(d)) c.fail("kiln's TensorLists hold tensors of value dtypes, not " + type_text(d));
}
void require_scalar(const InferContext& c, int input, const char* what) {
  const InputInfo& in = c.in(input);
  if (!in.unknown_rank && !in.dims->empty())
    c.fail(std::string(what) + " must be a scalar, got shape " + dims_text(*in.dims));
}

// An element_shape input as a partial shape, when its value is known (else unknown rank).
TensorShape known_element_shape(const InputInfo& in) {
  std::vector<int64_t> v;
  if (in.unknown_rank || in.dims->size() != 1 || !known_ints(in, &v)) return TensorShape::unknown();
  for (int64_t d : v)
    if (d < -1) return TensorShape::unknown();
  return TensorShape(v);
}

void infer_makes_list(InferContext& c) {  // Reserve, EmptyTensorList
  require_int_dtype(c, 0, "element_shape");
  require_dtype(c, 1, DType::Int32);
  require_scalar(c, 1, &c.op == &op::TensorListReserve() ? "num_elements" : "max_num_elements");
  require_value_dtype(c, c.attrs.type(&c.op == &op::TensorListReserve() ? kReserveDtype : kEmptyDtype));
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void infer_from_tensor(InferContext& c) {
  require_value_dtype(c, c.in(0).dtype);
  require_int_dtype(c, 1, "element_shape");
  if (!c.in(0).unknown_rank && c.in(0).dims->empty()) c.fail("Tensor must be at least a vector, but saw shape: []");
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void infer_get_item(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  require_dtype(c, 1, DType::Int32);
  require_dtype(c, 2, DType::Int32);
  require_scalar(c, 1, "index");
  const DType d = c.attrs.type(kGetItemDtype);
  require_value_dtype(c, d);
  c.out(0) = {.dtype = d, .shape = known_element_shape(c.in(2))};
}

void infer_set_item(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  require_dtype(c, 1, DType::Int32);
  require_scalar(c, 1, "index");
  require_value_dtype(c, c.in(2).dtype);
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void infer_push_back(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  require_value_dtype(c, c.in(1).dtype);
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
}

void infer_pop_back(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  require_dtype(c, 1, DType::Int32);
  const DType d = c.attrs.type(kPopBackDtype);
  require_value_dtype(c, d);
  c.out(0) = {.dtype = DType::Variant, .shape = TensorShape()};
  c.out(1) = {.dtype = d, .shape = known_element_shape(c.in(1))};
}

void infer_stack(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  require_dtype(c, 1, DType::Int32);
  const DType d = c.attrs.type(kStackDtype);
  require_value_dtype(c, d);
  const int64_t n = c.attrs.i(kStackNum);
  if (n < -1) c.fail("num_elements must be -1 or non-negative, got " + std::to_string(n));
  const TensorShape element = known_element_shape(c.in(1));
  TensorShape out = TensorShape::unknown();
  if (!element.unknown_rank()) {
    Dims dims = element.dims();
    dims.insert_at(0, n);
    out = TensorShape(dims);
  }
  c.out(0) = {.dtype = d, .shape = out};
}

void infer_length(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  c.out(0) = {.dtype = DType::Int32, .shape = TensorShape()};
}

void infer_element_shape(InferContext& c) {
  require_dtype(c, 0, DType::Variant);
  const DType d = c.attrs.type(kElementShapeType);
  if (d != DType::Int32 && d != DType::Int64) c.fail("shape_type must be int32 or int64, got " + type_text(d));
  c.out(0) = {.dtype = d, .shape = TensorShape::unknown()};
}

// ---- kernels ----------------------------------------------------------------------------

// The list input `i` holds; TensorFlow's message when it holds none.
const TensorList& list_of(const KernelContext& c, int i) {
  const TensorImpl& t = c.in(i);
  const detail::ObjectValue* v =
      t.dtype == DType::Variant && t.num_elements == 1 ? t.as<detail::ObjectValue*>()[0] : nullptr;
  const auto* list = dynamic_cast<const TensorList*>(v);
  if (!list || !t.dims.empty())
    c.fail("Input handle is not a list. Saw: '" + std::string(v ? v->summary() : "an empty variant") + "'");
  return *list;
}

void require_kernel_dtype(const KernelContext& c, int input, DType want) {
  if (c.in(input).dtype != want)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(input) +
           "(zero-based) was expected to be a " + tf_type_name(want) + " tensor but is a " +
           tf_type_name(c.in(input).dtype) + " tensor");
}

int64_t scalar_int32(const KernelContext& c, int input, const char* what) {
  require_kernel_dtype(c, input, DType::Int32);
  if (!c.in(input).dims.empty())
    c.fail(std::string(what) + " must be a scalar, got shape " + dims_text(c.in(input).dims));
  return c.in(input).as<int32_t>()[0];
}

// TensorFlow's reading of an element_shape tensor: -1 (a scalar) is an unknown rank, a vector
// lists the dims with -1 for unknown ones.
TensorShape element_shape_of(const KernelContext& c, int input) {
  const TensorImpl& t = c.in(input);
  if (t.dtype != DType::Int32 && t.dtype != DType::Int64)
    c.fail("element_shape must be an int32 or int64 tensor, got " + type_text(t.dtype));
  if (t.dims.size() > 1) c.fail("Shape must be at most rank 1 but is rank " + std::to_string(t.dims.size()));
  const std::vector<int64_t> v = int_values(t);
  if (t.dims.empty()) {
    if (v[0] != -1) c.fail("The only valid scalar shape tensor is the fully unknown shape specified as -1.");
    return TensorShape::unknown();
  }
  for (int64_t d : v)
    if (d < -1) c.fail("Dimension " + std::to_string(d) + " must be >= -1");
  return TensorShape(v);
}

// TensorFlow's PartialTensorShape::MergeWith.
TensorShape merge(const KernelContext& c, const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank()) return b;
  if (b.unknown_rank()) return a;
  if (a.rank() != b.rank())
    c.fail("Incompatible ranks during merge: " + std::to_string(a.rank()) + " vs. " + std::to_string(b.rank()));
  Dims d = a.dims();
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t y = b.dims()[i];
    if (d[i] >= 0 && y >= 0 && d[i] != y)
      c.fail("Incompatible shapes during merge: " + shape_text(a) + " vs. " + shape_text(b));
    if (d[i] < 0) d[i] = y;
  }
  return TensorShape(d);
}

void require_element_dtype(const KernelContext& c, const TensorList& l, DType op_dtype) {
  if (op_dtype != l.element_dtype)
    c.fail("Invalid data types; op elements " + type_text(op_dtype) + " but list elements " +
           type_text(l.element_dtype));
}

// A tensor the list owns: a copy of `src` (or of a slice of it: `count` elements from `first`).
Tensor owned_copy(const TensorImpl& src, const Dims& dims, int64_t first, int64_t count) {
  TensorImpl* t = detail::make_concrete(src.dtype, dims);
  Tensor owner = detail::wrap(t);
  const size_t size = dtype_size(src.dtype);
  if (count > 0) std::memcpy(t->data, static_cast<const char*>(src.data) + first * size, count * size);
  return owner;
}

Tensor zeros(const KernelContext& c, DType d, const TensorShape& shape, const char* why) {
  if (!shape.is_fully_defined())
    c.fail(std::string(why) + " but element_shape: " + shape_text(shape) + " is not fully defined");
  TensorImpl* t = detail::make_concrete(d, shape.dims());
  std::memset(t->data, 0, t->nbytes());  // zero bits are zero in every value dtype
  return detail::wrap(t);
}

// A new scalar variant holding a new empty list, which the tensor owns (so a failure while
// the list is filled frees both).
Tensor new_list_tensor(TensorList** list) {
  Tensor t = detail::wrap(detail::make_concrete(DType::Variant, Dims{}));
  *list = new TensorList;
  detail::impl_of(t)->as<detail::ObjectValue*>()[0] = *list;
  return t;
}

// A new list tensor holding a copy of `l` (its items shared: they never change).
Tensor copy_of(const TensorList& l, TensorList** out_list) {
  Tensor t = new_list_tensor(out_list);
  TensorList* out = *out_list;
  out->element_dtype = l.element_dtype;
  out->element_shape = l.element_shape;
  out->items = l.items;
  out->max_num_elements = l.max_num_elements;
  return t;
}

std::atomic<int64_t> g_updates_in_place{0};  // list_updates_in_place()

// The list a list update writes, and `holder`, the tensor that holds it: input 0's own list
// when the caller lets the kernel change input 0 (KernelContext::may_update_input0) and no
// other tensor holds the list, else a new copy of it.

TensorList* writable_list(const KernelContext& c, const TensorList& l, Tensor* holder) {
  if (c.may_update_input0 && l.refs.load(std::memory_order_acquire) == 1) {
    g_updates_in_place.fetch_add(1, std::memory_order_relaxed);
    auto* t = const_cast<TensorImpl*>(&c.in(0));
    t->refs.fetch_add(1, std::memory_order_relaxed);
    *holder = Tensor(t);
    return const_cast<TensorList*>(&l);
  }
  TensorList* out;
  *holder = copy_of(l, &out);
  return out;
}

void check_count(const KernelContext& c, int64_t n) {
  if (n > kMaxListElements)
    throw ResourceExhaustedError("a TensorList of " + std::to_string(n) + " elements (kiln holds at most " +
                                 std::to_string(kMaxListElements) + ") [Op:" + c.op.name + "]");
}

void run_make_list(KernelContext& c) {  // TensorListReserve, EmptyTensorList
  const bool reserve = &c.op == &op::TensorListReserve();
  const TensorShape shape = element_shape_of(c, 0);
  const int64_t n = scalar_int32(c, 1, reserve ? "num_elements" : "max_num_elements");
  if (reserve && n < 0)
    c.fail("The num_elements to reserve must be a non negative number, but got " + std::to_string(n));
  check_count(c, reserve ? n : 0);
  TensorList* list;
  Tensor holder = new_list_tensor(&list);
  list->element_dtype = c.attrs.type(reserve ? kReserveDtype : kEmptyDtype);
  list->element_shape = shape;
  if (reserve)
    list->items.resize(static_cast<size_t>(n));
  else
    list->max_num_elements = n;
  c.outputs[0] = hand_out(std::move(holder));
}

void run_from_tensor(KernelContext& c) {
  const TensorImpl& t = c.in(0);
  if (!detail::has_values(t.dtype)) c.fail("kiln's TensorLists hold tensors of value dtypes, not variant");
  const TensorShape requested = element_shape_of(c, 1);
  if (t.dims.empty()) c.fail("Tensor must be at least a vector, but saw shape: []");
  Dims element(t.dims.begin() + 1, t.dims.end());
  if (!requested.is_compatible_with(TensorShape(element)))
    c.fail("Specified a list with shape " + shape_text(requested) + " from a tensor with shape " + dims_text(element));
  check_count(c, t.dims[0]);
  TensorList* list;
  Tensor holder = new_list_tensor(&list);
  list->element_dtype = t.dtype;
  list->element_shape = requested;
  const int64_t per = t.dims[0] == 0 ? 0 : t.num_elements / t.dims[0];
  list->items.reserve(static_cast<size_t>(t.dims[0]));
  // Items view a buffered input's rows (it is immutable; the views keep it alive): a
  // sequence made into a list before a loop is not copied. Frame memory (a plan reuses it)
  // and memory another library owns (a NumPy array's, which its owner may change) are
  // copied; so would object elements be, which a view would not retain.
  const bool views = t.buffer && !t.buffer->external_release && !detail::holds_objects(t.dtype) &&
                     static_cast<size_t>(per) * dtype_size(t.dtype) > detail::kInlineBytes;
  for (int64_t i = 0; i < t.dims[0]; ++i)
    list->items.push_back(views ? detail::wrap(detail::make_view(&t, element, i * per))
                                : owned_copy(t, element, i * per, per));
  c.outputs[0] = hand_out(std::move(holder));
}

// The item at `index`, or zeros of the known element shape for one never set.
Tensor item_or_zeros(const KernelContext& c, const TensorList& l, size_t index, const TensorShape& element_shape) {
  if (l.items[index].defined()) return l.items[index];
  TensorShape shape = element_shape;
  if (!shape.is_fully_defined())  // another item may tell (TensorFlow looks as well)
    for (const Tensor& t : l.items)
      if (t.defined()) {
        shape = merge(c, shape, t.shape());
        break;
      }
  return zeros(c, l.element_dtype, shape, "Trying to read an uninitialized tensor");
}

void run_get_item(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  require_element_dtype(c, l, c.attrs.type(kGetItemDtype));
  const int64_t index = scalar_int32(c, 1, "index");
  if (index < 0 || index >= static_cast<int64_t>(l.items.size()))
    c.fail("Trying to access element " + std::to_string(index) + " in a list with " + std::to_string(l.items.size()) +
           " elements.");
  const TensorShape shape = merge(c, l.element_shape, element_shape_of(c, 2));
  Tensor item = item_or_zeros(c, l, static_cast<size_t>(index), shape);
  c.outputs[0] = detail::make_alias(detail::impl_of(item), detail::impl_of(item)->dims);
}

void run_set_item(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  const TensorImpl& item = c.in(2);
  require_element_dtype(c, l, item.dtype);
  const int64_t index = scalar_int32(c, 1, "index");
  const bool resize = c.attrs.b(kSetItemResize);
  if (index < 0 || (!resize && index >= static_cast<int64_t>(l.items.size())))
    c.fail("Trying to modify element " + std::to_string(index) + " in a list with " + std::to_string(l.items.size()) +
           " elements.");
  if (!l.element_shape.is_compatible_with(TensorShape(item.dims)))
    c.fail("Tried to set a tensor with incompatible shape at a list index. Item element shape: " +
           dims_text(item.dims) + " list shape: " + shape_text(l.element_shape));
  check_count(c, index + 1);
  Tensor holder;
  TensorList* out = writable_list(c, l, &holder);
  if (index >= static_cast<int64_t>(out->items.size())) out->items.resize(static_cast<size_t>(index) + 1);
  out->items[static_cast<size_t>(index)] = owned_copy(item, item.dims, 0, item.num_elements);
  c.outputs[0] = hand_out(std::move(holder));
}

void run_push_back(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  const TensorImpl& item = c.in(1);
  require_element_dtype(c, l, item.dtype);
  if (!l.element_shape.is_compatible_with(TensorShape(item.dims)))
    c.fail("Tried to append a tensor with incompatible shape to a list. Op element shape: " + dims_text(item.dims) +
           " list shape: " + shape_text(l.element_shape));
  const auto size = static_cast<int64_t>(l.items.size());
  if (l.max_num_elements != -1 && size >= l.max_num_elements)
    c.fail("Tried to push item into a full list list size: " + std::to_string(size) +
           ", max_num_elements: " + std::to_string(l.max_num_elements));
  check_count(c, size + 1);
  Tensor holder;
  TensorList* out = writable_list(c, l, &holder);
  out->items.push_back(owned_copy(item, item.dims, 0, item.num_elements));
  c.outputs[0] = hand_out(std::move(holder));
}

void run_pop_back(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  require_element_dtype(c, l, c.attrs.type(kPopBackDtype));
  if (l.items.empty()) c.fail("Trying to pop from an empty list.");
  const TensorShape shape = merge(c, l.element_shape, element_shape_of(c, 1));
  Tensor last = item_or_zeros(c, l, l.items.size() - 1, shape);
  TensorList* out;
  Tensor holder = copy_of(l, &out);
  out->items.pop_back();
  c.outputs[1] = detail::make_alias(detail::impl_of(last), detail::impl_of(last)->dims);
  c.outputs[0] = hand_out(std::move(holder));
}

void run_stack(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  const DType d = c.attrs.type(kStackDtype);
  require_element_dtype(c, l, d);
  const int64_t want = c.attrs.i(kStackNum);
  const auto n = static_cast<int64_t>(l.items.size());
  if (want != -1 && want != n)
    c.fail("Operation expected a list with " + std::to_string(want) + " elements but got a list with " +
           std::to_string(n) + " elements.");
  TensorShape shape = merge(c, l.element_shape, element_shape_of(c, 1));
  if (!shape.is_fully_defined()) {
    if (n == 0)
      c.fail("Tried to stack elements of an empty list with non-fully-defined element_shape: " + shape_text(shape));
    for (const Tensor& t : l.items)
      if (t.defined()) {
        shape = merge(c, shape, t.shape());
        break;
      }
    if (!shape.is_fully_defined())
      c.fail(
          "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
          "element_shape: " +
          shape_text(shape));
  }
  Dims dims = shape.dims();
  dims.insert_at(0, n);
  TensorImpl* out = detail::make_concrete(d, dims);
  c.outputs[0] = out;
  const size_t row = static_cast<size_t>(shape.num_elements()) * dtype_size(d);
  auto* dst = static_cast<char*>(out->data);
  for (int64_t i = 0; i < n; ++i, dst += row) {
    const Tensor& t = l.items[static_cast<size_t>(i)];
    if (!t.defined()) {
      std::memset(dst, 0, row);
      continue;
    }
    if (!(t.shape() == shape))
      c.fail("Incompatible shapes during merge: " + shape_text(shape) + " vs. " + shape_text(t.shape()));
    if (row) std::memcpy(dst, t.data(), row);
  }
}

void run_length(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  TensorImpl* out = detail::make_concrete(DType::Int32, Dims{});
  out->as<int32_t>()[0] = static_cast<int32_t>(l.items.size());
  c.outputs[0] = out;
}

void run_element_shape(KernelContext& c) {
  const TensorList& l = list_of(c, 0);
  const DType d = c.attrs.type(kElementShapeType);
  if (d != DType::Int32 && d != DType::Int64) c.fail("shape_type must be int32 or int64, got " + type_text(d));
  const TensorShape& s = l.element_shape;
  const Dims dims = s.unknown_rank() ? Dims{} : Dims{static_cast<int64_t>(s.rank())};
  TensorImpl* out = detail::make_concrete(d, dims);
  c.outputs[0] = out;
  for (int i = 0; i < (s.unknown_rank() ? 1 : s.rank()); ++i) {
    const int64_t v = s.unknown_rank() ? -1 : s.dim(i);
    if (d == DType::Int32)
      out->as<int32_t>()[i] = static_cast<int32_t>(v);
    else
      out->as<int64_t>()[i] = v;
  }
}

}  // namespace

int64_t list_updates_in_place() { return g_updates_in_place.load(std::memory_order_relaxed); }

namespace {
const TensorList* list_in(const TensorImpl& t) {
  if (t.dtype != DType::Variant || t.num_elements != 1 || !t.dims.empty()) return nullptr;
  return dynamic_cast<const TensorList*>(t.as<detail::ObjectValue*>()[0]);
}
}  // namespace

bool list_batch(const TensorImpl& t, int64_t* batch) {
  const TensorList* l = list_in(t);
  if (!l || (!l->element_shape.unknown_rank() && (l->element_shape.rank() == 0 || l->element_shape.dim(0) >= 0)))
    return false;
  *batch = -1;
  for (const Tensor& item : l->items) {
    if (!item.defined()) continue;
    const TensorImpl& i = *detail::impl_of(item);
    if (i.dims.empty() || (*batch >= 0 && i.dims[0] != *batch)) return false;
    *batch = i.dims[0];
  }
  return true;
}

Tensor rows_of(const TensorImpl& t, int64_t first, int64_t count) {
  Dims dims = t.dims;
  const int64_t per = dims[0] == 0 ? 0 : t.num_elements / dims[0];
  dims[0] = count;
  // A view where the rows live in a buffer kiln owns (which never changes under a tensor that
  // another holds); a copy otherwise (inline data, another library's memory).
  if (t.buffer && !t.buffer->external_release && !detail::holds_objects(t.dtype))
    return detail::wrap(detail::make_view(&t, dims, first * per));
  return owned_copy(t, dims, first * per, count * per);
}

Tensor list_rows(const TensorImpl& t, int64_t first, int64_t count) {
  const TensorList* l = list_in(t);
  if (!l) throw InternalError("list_rows of a tensor that holds no TensorList");
  TensorList* out;
  Tensor holder = copy_of(*l, &out);
  for (Tensor& item : out->items)
    if (item.defined()) item = rows_of(*detail::impl_of(item), first, count);
  return holder;
}

Tensor stitch_rows(const std::vector<const TensorImpl*>& parts) {
  const TensorImpl& p0 = *parts.at(0);
  if (p0.dims.empty() || detail::holds_objects(p0.dtype)) throw InternalError("stitch_rows of scalars or objects");
  Dims dims = p0.dims;
  dims[0] = 0;
  for (const TensorImpl* p : parts) {
    if (p->dtype != p0.dtype || p->dims.size() != p0.dims.size() ||
        !std::equal(p->dims.begin() + 1, p->dims.end(), p0.dims.begin() + 1))
      throw InternalError("row partitions of shapes " + dims_text(p0.dims) + " and " + dims_text(p->dims) +
                          " do not stitch");
    dims[0] += p->dims[0];
  }
  Tensor out = detail::wrap(detail::make_concrete(p0.dtype, dims));
  auto* dst = static_cast<unsigned char*>(detail::impl_of(out)->data);
  for (const TensorImpl* p : parts) {
    const size_t bytes = static_cast<size_t>(p->num_elements) * dtype_size(p->dtype);
    if (bytes) std::memcpy(dst, p->data, bytes);
    dst += bytes;
  }
  return out;
}

Tensor stitch_lists(const std::vector<const TensorImpl*>& parts) {
  std::vector<const TensorList*> lists;
  for (const TensorImpl* p : parts) {
    lists.push_back(list_in(*p));
    if (!lists.back() || lists.back()->items.size() != lists[0]->items.size() ||
        lists.back()->element_dtype != lists[0]->element_dtype)
      throw InternalError("row partitions' lists do not stitch");
  }
  TensorList* out;
  Tensor holder = copy_of(*lists[0], &out);
  int64_t bytes = 0;
  for (size_t i = 0; i < out->items.size(); ++i) {
    size_t set = 0;
    for (const TensorList* l : lists)
      if (const Tensor& item = l->items[i]; item.defined()) {
        ++set;
        const TensorImpl& t = *detail::impl_of(item);
        bytes += t.num_elements * static_cast<int64_t>(dtype_size(t.dtype));
      }
    if (set != 0 && set != lists.size()) throw InternalError("row partitions' lists set different items");
  }
  // The items split over the intra-op threads from 256 KB (a recurrent layer's outputs: 100
  // items of [32, 128] are 1.6 MB).
  const auto n = static_cast<int64_t>(out->items.size());
  parallel_for(n, bytes < (int64_t{256} << 10) ? n + 1 : 2, [&](int64_t lo, int64_t hi) {
    std::vector<const TensorImpl*> items(lists.size());
    for (auto i = static_cast<size_t>(lo); i < static_cast<size_t>(hi); ++i) {
      if (!lists[0]->items[i].defined()) continue;
      for (size_t p = 0; p < lists.size(); ++p) items[p] = detail::impl_of(lists[p]->items[i]);
      out->items[i] = stitch_rows(items);
    }
  });
  return holder;
}

const OpDef& op::EmptyTensorList() {
  static const OpDef def = {.name = "EmptyTensorList",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"element_shape", "max_num_elements"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("element_dtype")},
                            .infer = infer_makes_list,
                            .any_dtype_kernel = &run_make_list,
                            .type_attr = "shape_type",
                            .output_args = {"handle"}};
  return def;
}

const OpDef& op::TensorListReserve() {
  static const OpDef def = {.name = "TensorListReserve",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"element_shape", "num_elements"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("element_dtype")},
                            .infer = infer_makes_list,
                            .any_dtype_kernel = &run_make_list,
                            .type_attr = "shape_type",
                            .output_args = {"handle"}};
  return def;
}

const OpDef& op::TensorListFromTensor() {
  static const OpDef def = {.name = "TensorListFromTensor",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"tensor", "element_shape"},
                            .traits = kOwnOutputs | kSharesInput,
                            .infer = infer_from_tensor,
                            .any_dtype_kernel = &run_from_tensor,
                            .type_attr = "element_dtype",
                            .index_type_attrs = {{"shape_type", 1}},
                            .output_args = {"output_handle"}};
  return def;
}

const OpDef& op::TensorListGetItem() {
  static const OpDef def = {.name = "TensorListGetItem",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input_handle", "index", "element_shape"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("element_dtype")},
                            .infer = infer_get_item,
                            .any_dtype_kernel = &run_get_item,
                            .type_attr = nullptr,
                            .output_args = {"item"}};
  return def;
}

const OpDef& op::TensorListSetItem() {
  static const OpDef def = {.name = "TensorListSetItem",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input_handle", "index", "item"},
                            .traits = kOwnOutputs | kUpdatesInput,
                            .attr_specs = {bool_attr("resize_if_index_out_of_bounds", false)},
                            .infer = infer_set_item,
                            .any_dtype_kernel = &run_set_item,
                            .type_attr = "element_dtype",
                            .type_attr_input = 2,
                            .output_args = {"output_handle"}};
  return def;
}

const OpDef& op::TensorListPushBack() {
  static const OpDef def = {.name = "TensorListPushBack",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input_handle", "tensor"},
                            .traits = kOwnOutputs | kUpdatesInput,
                            .infer = infer_push_back,
                            .any_dtype_kernel = &run_push_back,
                            .type_attr = "element_dtype",
                            .type_attr_input = 1,
                            .output_args = {"output_handle"}};
  return def;
}

const OpDef& op::TensorListPopBack() {
  static const OpDef def = {.name = "TensorListPopBack",
                            .num_inputs = 2,
                            .num_outputs = 2,
                            .input_args = {"input_handle", "element_shape"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("element_dtype")},
                            .infer = infer_pop_back,
                            .any_dtype_kernel = &run_pop_back,
                            .type_attr = nullptr,
                            .output_args = {"output_handle", "tensor"}};
  return def;
}

const OpDef& op::TensorListStack() {
  static const OpDef def = {.name = "TensorListStack",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input_handle", "element_shape"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("element_dtype"), int_attr("num_elements", -1)},
                            .infer = infer_stack,
                            .any_dtype_kernel = &run_stack,
                            .type_attr = nullptr,
                            .output_args = {"tensor"}};
  return def;
}

const OpDef& op::TensorListLength() {
  static const OpDef def = {.name = "TensorListLength",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input_handle"},
                            .traits = kOwnOutputs,
                            .infer = infer_length,
                            .any_dtype_kernel = &run_length,
                            .type_attr = nullptr,
                            .output_args = {"length"}};
  return def;
}

const OpDef& op::TensorListElementShape() {
  static const OpDef def = {.name = "TensorListElementShape",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input_handle"},
                            .traits = kOwnOutputs,
                            .attr_specs = {type_attr("shape_type")},
                            .infer = infer_element_shape,
                            .any_dtype_kernel = &run_element_shape,
                            .type_attr = nullptr,
                            .output_args = {"element_shape"}};
  return def;
}

}  // namespace kiln::ops
