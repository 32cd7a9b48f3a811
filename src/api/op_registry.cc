#include "kiln/op_registry.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/dtype_table.h"
#include "ops/op_list.h"

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

}  // namespace

std::vector<OpInfo> registered_ops() {
  std::vector<OpInfo> out;
  for (const ops::OpDef* op : ops::all_ops()) {
    OpInfo info{.name = op->name,
                .attrs = {},
                .stateful = op->is_stateful(),
                .tfjs = op->has(ops::kTfjs),
                .internal = op->has(ops::kInternal)};
    for (const ops::AttrSpec& a : op->attr_specs) {
      if (a.name[0] == '_') continue;  // annotations (_user_specified_name), kiln's variable refs
      info.attrs.push_back(OpAttrInfo{
          .name = a.name,
          .type = ops::attr_kind_name(a.kind),
          .default_value = a.has_default() ? std::optional<std::string>(default_text(a.default_value)) : std::nullopt});
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const OpInfo& a, const OpInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace kiln
