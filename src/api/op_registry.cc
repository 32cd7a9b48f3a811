#include "kiln/op_registry.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "api/variable_handle.h"
#include "core/dtype_table.h"
#include "ops/gradient.h"
#include "ops/op_list.h"
#include "trace/dispatch.h"

namespace kiln {
namespace {

std::string default_text(const ops::AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* f = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", *f);
    return buf;
  }
  if (const auto* d = std::get_if<DType>(&v)) {
    std::string name = detail::dtype_info(*d).tf_name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    return "DT_" + name;
  }
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    std::string t = "[";
    for (size_t i = 0; i < l->size(); ++i) t += (i ? ", " : "") + std::to_string((*l)[i]);
    return t + "]";
  }
  if (const auto* boxed = std::get_if<ops::ShapeAttr>(&v)) {
    const TensorShape& s = boxed->get();
    if (s.rank() < 0) return "<unknown>";
    std::string t = "[";
    for (size_t i = 0; i < s.dims().size(); ++i) t += (i ? ", " : "") + std::to_string(s.dims()[i]);
    return t + "]";
  }
  return "?";
}

// The raw_ops name of an op's variable (its one resource attr), when execute_op can run it
// given that variable; empty otherwise.
std::string variable_arg(const ops::OpDef& op) {
  if (op.has(ops::kInternal) || op.has(ops::kNoKernel) || op.has(ops::kControlFlow)) return "";
  const ops::AttrSpec* resource = nullptr;
  for (const ops::AttrSpec& spec : op.attr_specs) {
    if (spec.kind == ops::AttrKind::kFunc || spec.kind == ops::AttrKind::kFuncList) return "";
    if (spec.kind == ops::AttrKind::kResource) {
      if (resource) return "";  // several variables (ResourceApplyAdam): not by name yet
      resource = &spec;
    }
  }
  return resource ? (resource->api_name ? resource->api_name : "resource") : "";
}

// execute_op's refusals that depend only on the row.
bool runnable_by_name(const ops::OpDef& op) {
  if (op.has(ops::kInternal) || op.has(ops::kNoKernel) || op.has(ops::kControlFlow)) return false;
  for (const ops::AttrSpec& spec : op.attr_specs)
    if (spec.kind == ops::AttrKind::kResource || spec.kind == ops::AttrKind::kFunc ||
        spec.kind == ops::AttrKind::kFuncList)
      return false;
  return true;
}

}  // namespace

std::vector<OpInfo> registered_ops() {
  std::vector<OpInfo> out;
  for (const ops::OpDef* op : ops::all_ops()) {
    OpInfo info{.name = op->name,
                .inputs = {},
                .outputs = {op->output_args.begin(), op->output_args.end()},
                .num_outputs = op->num_outputs,
                .attrs = {},
                .dtypes = {},
                .gradient = op->grad == nullptr             ? OpGradient::kMissing
                            : op->grad == &ops::no_gradient ? OpGradient::kNotDifferentiable
                                                            : OpGradient::kDefined,
                .runnable_by_name = runnable_by_name(*op),
                .variable_arg = variable_arg(*op),
                .stateful = op->is_stateful(),
                .tfjs = op->has(ops::kTfjs),
                .internal = op->has(ops::kInternal)};
    if (op->num_outputs == 0) info.outputs.clear();
    for (const ops::ArgSpec& a : op->input_args)
      info.inputs.push_back({.name = a.name,
                             .list = a.list,
                             .number_attr = a.number_attr ? a.number_attr : "",
                             .api_name = a.api_name ? a.api_name : a.name});
    for (int d = 0; d < kNumDTypes; ++d)
      if (op->kernel_for(static_cast<DType>(d))) info.dtypes.push_back(static_cast<DType>(d));
    for (const ops::AttrSpec& a : op->attr_specs) {
      if (a.name[0] == '_') continue;  // annotations (_user_specified_name), kiln's variable refs
      info.attrs.push_back(OpAttrInfo{
          .name = a.name,
          .type = ops::attr_kind_name(a.kind),
          .default_value = a.has_default() ? std::optional<std::string>(default_text(a.default_value)) : std::nullopt,
          .api_name = a.api_name ? a.api_name : a.name,
          .from_variable = a.from_variable});
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const OpInfo& a, const OpInfo& b) { return a.name < b.name; });
  return out;
}

namespace {

// `v` as the attr kind `spec` asks for, or InvalidArgumentError.
ops::AttrValue attr_of_kind(const ops::OpDef& op, const ops::AttrSpec& spec, const OpAttrValue& v) {
  const auto wrong = [&]() -> ops::AttrValue {
    throw InvalidArgumentError(std::string("attr '") + spec.name + "' of " + op.name + " must be a " +
                               ops::attr_kind_name(spec.kind) + " value");
  };
  switch (spec.kind) {
    case ops::AttrKind::kInt:
      if (const auto* i = std::get_if<int64_t>(&v)) return *i;
      return wrong();
    case ops::AttrKind::kFloat:
      if (const auto* f = std::get_if<double>(&v)) return *f;
      if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      return wrong();
    case ops::AttrKind::kBool:
      if (const auto* b = std::get_if<bool>(&v)) return *b;
      return wrong();
    case ops::AttrKind::kType:
      if (const auto* d = std::get_if<DType>(&v)) return *d;
      return wrong();
    case ops::AttrKind::kIntList:
      if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) return *l;
      return wrong();
    case ops::AttrKind::kString:
      if (const auto* s = std::get_if<std::string>(&v)) return *s;
      return wrong();
    case ops::AttrKind::kShape:
      if (const auto* s = std::get_if<TensorShape>(&v)) return ops::ShapeAttr(*s);
      if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) return ops::ShapeAttr(TensorShape(*l));
      return wrong();
    case ops::AttrKind::kTensor:
      if (const auto* t = std::get_if<Tensor>(&v); t && t->defined() && !t->is_symbolic()) return *t;
      return wrong();
    default:
      return wrong();
  }
}

// The variable given under `arg`, or InvalidArgumentError.
const Variable& given_variable(const ops::OpDef& op, const std::string& arg,
                               const std::map<std::string, OpAttrValue>& attrs) {
  auto it = attrs.find(arg);
  if (it == attrs.end()) throw InvalidArgumentError(std::string(op.name) + " needs a variable as '" + arg + "'");
  const auto* v = std::get_if<Variable>(&it->second);
  if (!v) throw InvalidArgumentError("'" + arg + "' of " + op.name + " must be a variable");
  return *v;
}

}  // namespace

std::vector<Tensor> execute_op(const std::string& name, const std::vector<Tensor>& inputs,
                               const std::map<std::string, OpAttrValue>& attrs) {
  const ops::OpDef* op = ops::find_op(name);
  if (!op) throw InvalidArgumentError("kiln has no op named '" + name + "'");
  if (op->has(ops::kInternal) || op->has(ops::kNoKernel) || op->has(ops::kControlFlow))
    throw InvalidArgumentError(name + " cannot be run by name");
  ops::Attrs values;
  size_t used = 0;
  const std::string var_arg = variable_arg(*op);
  const Variable* var = var_arg.empty() ? nullptr : &given_variable(*op, var_arg, attrs);
  if (var) ++used;
  for (const ops::AttrSpec& spec : op->attr_specs) {
    if (spec.kind == ops::AttrKind::kResource && var) {
      values.push(ops::ResourceRef{var->handle()->state});
      continue;
    }
    if (spec.from_variable && var && !attrs.count(spec.name)) {
      values.push(var->dtype());
      continue;
    }
    if (spec.kind == ops::AttrKind::kResource || spec.kind == ops::AttrKind::kFunc ||
        spec.kind == ops::AttrKind::kFuncList)
      throw InvalidArgumentError(name + " needs a function: it cannot be run by name");
    auto it = attrs.find(spec.name);
    if (it != attrs.end()) {
      values.push(attr_of_kind(*op, spec, it->second));
      ++used;
    } else if (spec.has_default()) {
      values.push(spec.default_value);
    } else {
      throw InvalidArgumentError(name + " needs attr '" + spec.name + "'");
    }
  }
  if (used != attrs.size())
    for (const auto& entry : attrs) {
      const std::string& attr = entry.first;  // a plain reference: clang 14 cannot capture a structured binding
      if (!(var && attr == var_arg) && std::none_of(op->attr_specs.begin(), op->attr_specs.end(),
                                                    [&](const ops::AttrSpec& s) { return attr == s.name; }))
        throw InvalidArgumentError(name + " has no attr '" + attr + "'");
    }
  if (op->num_inputs >= 0 && static_cast<int>(inputs.size()) != op->num_inputs)
    throw InvalidArgumentError(name + " takes " + std::to_string(op->num_inputs) + " inputs, got " +
                               std::to_string(inputs.size()));
  for (const Tensor& t : inputs)
    if (!t.defined()) throw InvalidArgumentError(name + ": an input is an empty Tensor");
  return trace::dispatch_list(*op, inputs, std::move(values));
}

}  // namespace kiln
