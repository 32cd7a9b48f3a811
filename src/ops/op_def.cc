#include "ops/op_def.h"

#include <functional>
#include <string>
#include <unordered_map>

#include "core/dtype_table.h"
#include "ops/op_list.h"

namespace kiln::ops {

namespace {
size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t hash_attr(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return 0;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          size_t h = x.size();
          for (int64_t e : x) h = combine(h, std::hash<int64_t>()(e));
          return h;
        } else if constexpr (std::is_same_v<T, ShapeAttr>) {
          size_t h = std::hash<int>()(x.get().rank());
          for (int64_t e : x.get().dims()) h = combine(h, std::hash<int64_t>()(e));
          return h;
        } else if constexpr (std::is_same_v<T, Tensor>) {
          const TensorImpl* t = x.impl();
          if (!t || t->symbolic) return 1;
          size_t h = std::hash<int>()(static_cast<int>(t->dtype));
          if (t->dtype == DType::String) {
            for (int64_t i = 0; i < t->num_elements; ++i)
              h = combine(h, std::hash<std::string_view>()(detail::string_of(t->as<detail::ObjectValue*>()[i])));
            return h;
          }
          const auto* bytes = static_cast<const unsigned char*>(t->data);
          for (size_t i = 0; i < t->nbytes(); ++i) h = combine(h, bytes[i]);
          return h;
        } else if constexpr (std::is_same_v<T, DType>)
          return static_cast<size_t>(x) + 17;
        else if constexpr (std::is_same_v<T, FuncRef>)
          return std::hash<std::string>()(x.name);
        else if constexpr (std::is_same_v<T, std::vector<FuncRef>>) {
          size_t h = x.size() + 31;
          for (const FuncRef& f : x) h = h * 1000003u ^ std::hash<std::string>()(f.name);
          return h;
        } else if constexpr (std::is_same_v<T, ResourceRef>)
          return std::hash<const void*>()(x.resource.get());
        else
          return std::hash<T>()(x);
      },
      v);
}

bool tensors_equal(const Tensor& a, const Tensor& b) {
  const TensorImpl* x = a.impl();
  const TensorImpl* y = b.impl();
  if (x == y) return true;
  if (!x || !y || x->symbolic || y->symbolic) return false;
  if (x->dtype != y->dtype || x->dims != y->dims) return false;
  if (x->dtype == DType::String) {
    for (int64_t i = 0; i < x->num_elements; ++i)
      if (detail::string_of(x->as<detail::ObjectValue*>()[i]) != detail::string_of(y->as<detail::ObjectValue*>()[i]))
        return false;
    return true;
  }
  return std::memcmp(x->data, y->data, x->nbytes()) == 0;
}
}  // namespace

std::vector<const FuncRef*> func_refs(const Attrs& attrs) {
  std::vector<const FuncRef*> refs;
  for (int i = 0; i < attrs.size(); ++i) {
    if (const auto* f = std::get_if<FuncRef>(&attrs[i])) refs.push_back(f);
    if (const auto* fs = std::get_if<std::vector<FuncRef>>(&attrs[i]))
      for (const FuncRef& f : *fs) refs.push_back(&f);
  }
  return refs;
}

size_t Attrs::hash() const {
  size_t h = static_cast<size_t>(count_);
  for (int i = 0; i < count_; ++i) h = combine(h, hash_attr((*this)[i]));
  return h;
}

bool Attrs::operator==(const Attrs& o) const {
  if (count_ != o.count_) return false;
  for (int i = 0; i < count_; ++i) {
    if ((*this)[i].index() != o[i].index()) return false;
    if (std::holds_alternative<Tensor>((*this)[i])) {
      if (!tensors_equal(std::get<Tensor>((*this)[i]), std::get<Tensor>(o[i]))) return false;
    } else if (std::holds_alternative<double>((*this)[i])) {
      // Bitwise, so that NaN attrs compare equal to themselves.
      const double x = std::get<double>((*this)[i]), y = std::get<double>(o[i]);
      if (std::memcmp(&x, &y, sizeof x) != 0) return false;
    } else {
      const bool same = std::visit(
          [&](const auto& x) -> bool {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, Tensor>)
              return false;  // handled above
            else
              return x == std::get<T>(o[i]);
          },
          (*this)[i]);
      if (!same) return false;
    }
  }
  return true;
}

void InferContext::fail(const std::string& message) const {
  throw InvalidArgumentError(message + " [Op:" + op.name + "]");
}
void KernelContext::fail(const std::string& message) const {
  throw InvalidArgumentError(message + " [Op:" + op.name + "]");
}

std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ",";
    s += d[i] < 0 ? "?" : std::to_string(d[i]);
  }
  return s + "]";
}

std::string shape_text(const TensorShape& s) { return s.unknown_rank() ? "<unknown>" : dims_text(s.dims()); }

Attrs with_defaults(const OpDef& op, Attrs attrs) {
  for (size_t i = attrs.size(); i < op.attr_specs.size(); ++i) {
    if (!op.attr_specs[i].has_default())
      throw InternalError(std::string(op.name) + " built without its attr '" + op.attr_specs[i].name + "'");
    attrs.push(op.attr_specs[i].default_value);
  }
  return attrs;
}

int attr_index(const OpDef& op, std::string_view name) {
  for (size_t i = 0; i < op.attr_specs.size(); ++i)
    if (name == op.attr_specs[i].name) return static_cast<int>(i);
  throw InternalError(std::string(op.name) + " has no attr '" + std::string(name) + "'");
}

int attr_index(std::initializer_list<std::pair<const OpDef*, const char*>> same_position) {
  int index = -1;
  for (const auto& [op, name] : same_position) {
    const int i = attr_index(*op, name);
    if (index >= 0 && i != index)
      throw InternalError(std::string(op->name) + "'s attr '" + name + "' is not where shared code reads it");
    index = i;
  }
  return index;
}

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt:
      return "int";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kBool:
      return "bool";
    case AttrKind::kType:
      return "type";
    case AttrKind::kIntList:
      return "list(int)";
    case AttrKind::kString:
      return "string";
    case AttrKind::kShape:
      return "shape";
    case AttrKind::kTensor:
      return "tensor";
    case AttrKind::kFunc:
      return "func";
    case AttrKind::kFuncList:
      return "list(func)";
    case AttrKind::kResource:
      return "resource";
  }
  return "unknown";
}

std::string dtype_list_text(const OpDef& op) {
  if (op.any_dtype_kernel) return "any";
  std::string s;
  for (const detail::DTypeInfo& d : detail::kDTypes)
    if (op.kernels[static_cast<int>(d.dtype)]) s += std::string(s.empty() ? "" : ", ") + d.tf_name;
  return s;
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> v;
#define KILN_LIST_OP(name) v.push_back(&op::name());
  KILN_OPS(KILN_LIST_OP)
#undef KILN_LIST_OP
  return v;
}

const OpDef* find_op(std::string_view name) {
  static const auto* table = [] {
    auto* m = new std::unordered_map<std::string, const OpDef*>();
    for (const OpDef* d : all_ops()) (*m)[d->name] = d;
    return m;
  }();
  auto it = table->find(std::string(name));
  return it == table->end() ? nullptr : it->second;
}

void OpDef::run_moving_objects(KernelContext& c) {
  auto clear = [&] {  // the moved pointers were never retained: the outputs must not release them
    for (int i = 0; i < c.num_outputs; ++i)
      if (TensorImpl* o = c.outputs[i]; o && detail::holds_objects(o->dtype)) std::memset(o->data, 0, o->nbytes());
  };
  try {
    c.op.mover()(c);
  } catch (...) {
    clear();
    throw;
  }
  for (int i = 0; i < c.num_outputs; ++i)
    if (TensorImpl* o = c.outputs[i]; o && detail::holds_objects(o->dtype))
      for (int64_t k = 0; k < o->num_elements; ++k) detail::object_retain(o->as<detail::ObjectValue*>()[k]);
}

}  // namespace kiln::ops
