#include "io/structured_value.h"

#include <algorithm>

#include "graph/graph_def.h"
#include "io/proto_values.h"
#include "kiln/errors.h"

namespace kiln::io {
namespace {

constexpr int kMaxDepth = 64;  // deeper than any signature; a hostile file's nesting stops here

DType dtype_named(const std::string& name, const std::string& where) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype_name(static_cast<DType>(i)) == name) return static_cast<DType>(i);
  throw InvalidArgumentError(where + ": unknown dtype '" + name + "'");
}

void from_json(const nlohmann::json& j, tensorflow::StructuredValue* out, const std::string& where, int depth) {
  if (depth > kMaxDepth) throw InvalidArgumentError(where + ": the structure nests too deeply");
  if (j.is_null()) {
    out->mutable_none_value();
    return;
  }
  if (!j.is_object() || j.size() != 1) throw InvalidArgumentError(where + ": a structure is null or one {kind: value}");
  const std::string kind = j.begin().key();  // (not items(): its proxy would not outlive this line)
  const nlohmann::json& value = j.begin().value();
  auto each = [&](auto* list) {
    if (!value.is_array()) throw InvalidArgumentError(where + ": '" + kind + "' takes a list");
    for (const auto& item : value) from_json(item, list->add_values(), where, depth + 1);
  };
  if (kind == "tensor") {
    auto* spec = out->mutable_tensor_spec_value();
    spec->set_name(value.value("name", ""));
    const nlohmann::json& shape = value.at("shape");
    if (shape.is_null()) {
      spec->mutable_shape()->set_unknown_rank(true);
    } else {
      spec->mutable_shape();
      for (const auto& d : shape) spec->mutable_shape()->add_dim()->set_size(d.is_null() ? -1 : d.get<int64_t>());
    }
    spec->set_dtype(static_cast<tensorflow::DataType>(
        graph::dtype_to_proto(dtype_named(value.at("dtype").get<std::string>(), where))));
  } else if (kind == "tuple") {
    each(out->mutable_tuple_value());
  } else if (kind == "list") {
    each(out->mutable_list_value());
  } else if (kind == "dict") {
    auto& fields = *out->mutable_dict_value()->mutable_fields();
    for (const auto& [key, item] : value.items()) from_json(item, &fields[key], where, depth + 1);
  } else if (kind == "named_tuple") {
    auto* t = out->mutable_named_tuple_value();
    t->set_name(value.at(0).get<std::string>());
    for (const auto& pair : value.at(1)) {
      auto* p = t->add_values();
      p->set_key(pair.at(0).get<std::string>());
      from_json(pair.at(1), p->mutable_value(), where, depth + 1);
    }
  } else if (kind == "int") {
    out->set_int64_value(value.get<int64_t>());
  } else if (kind == "float") {
    out->set_float64_value(value.get<double>());
  } else if (kind == "string") {
    out->set_string_value(value.get<std::string>());
  } else if (kind == "bool") {
    out->set_bool_value(value.get<bool>());
  } else {
    throw InvalidArgumentError(where + ": unknown structure kind '" + kind + "'");
  }
}

TensorSpec spec_of(const tensorflow::TensorSpecProto& p, const std::string& where) {
  return TensorSpec{
      .shape = shape_from_proto(p.shape(), where), .dtype = dtype_from_proto(p.dtype(), where), .name = p.name()};
}

nlohmann::json to_json(const tensorflow::StructuredValue& v, const std::string& where, int depth) {
  if (depth > kMaxDepth) throw InvalidArgumentError(where + ": the structure nests too deeply");
  using K = tensorflow::StructuredValue;
  auto each = [&](const auto& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : list.values()) out.push_back(to_json(item, where, depth + 1));
    return out;
  };
  switch (v.kind_case()) {
    case K::kNoneValue:
    case K::KIND_NOT_SET:
      return nullptr;
    case K::kFloat64Value:
      return {{"float", v.float64_value()}};
    case K::kInt64Value:
      return {{"int", v.int64_value()}};
    case K::kStringValue:
      return {{"string", v.string_value()}};
    case K::kBoolValue:
      return {{"bool", v.bool_value()}};
    case K::kTensorSpecValue: {
      const TensorSpec s = spec_of(v.tensor_spec_value(), where);
      nlohmann::json shape = nullptr;
      if (s.shape.rank() >= 0) {
        shape = nlohmann::json::array();
        for (int64_t d : s.shape.dims()) d < 0 ? shape.push_back(nullptr) : shape.push_back(d);
      }
      return {{"tensor", {{"name", s.name}, {"shape", shape}, {"dtype", std::string(dtype_name(s.dtype))}}}};
    }
    case K::kListValue:
      return {{"list", each(v.list_value())}};
    case K::kTupleValue:
      return {{"tuple", each(v.tuple_value())}};
    case K::kDictValue: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, item] : v.dict_value().fields()) out[key] = to_json(item, where, depth + 1);
      return {{"dict", out}};
    }
    case K::kNamedTupleValue: {
      nlohmann::json pairs = nlohmann::json::array();
      for (const auto& p : v.named_tuple_value().values())
        pairs.push_back(nlohmann::json::array({p.key(), to_json(p.value(), where, depth + 1)}));
      return {{"named_tuple", nlohmann::json::array({v.named_tuple_value().name(), pairs})}};
    }
  }
  return {{"unsupported", std::to_string(static_cast<int>(v.kind_case()))}};
}

void flatten(const tensorflow::StructuredValue& v, const std::string& where, int depth, std::vector<TensorSpec>& out) {
  if (depth > kMaxDepth) throw InvalidArgumentError(where + ": the structure nests too deeply");
  using K = tensorflow::StructuredValue;
  switch (v.kind_case()) {
    case K::kTensorSpecValue:
      out.push_back(spec_of(v.tensor_spec_value(), where));
      return;
    case K::kListValue:
      for (const auto& item : v.list_value().values()) flatten(item, where, depth + 1, out);
      return;
    case K::kTupleValue:
      for (const auto& item : v.tuple_value().values()) flatten(item, where, depth + 1, out);
      return;
    case K::kNamedTupleValue:
      for (const auto& p : v.named_tuple_value().values()) flatten(p.value(), where, depth + 1, out);
      return;
    case K::kDictValue: {
      std::vector<std::string> keys;
      for (const auto& kv : v.dict_value().fields()) keys.push_back(kv.first);
      std::sort(keys.begin(), keys.end());
      for (const std::string& k : keys) flatten(v.dict_value().fields().at(k), where, depth + 1, out);
      return;
    }
    default:
      return;  // a Python value: not a tensor argument
  }
}

}  // namespace

void structure_from_json(const nlohmann::json& j, tensorflow::StructuredValue* out, const std::string& where) {
  try {
    from_json(j, out, where, 0);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgumentError(where + ": " + e.what());
  }
}
nlohmann::json structure_to_json(const tensorflow::StructuredValue& v, const std::string& where) {
  return to_json(v, where, 0);
}
std::vector<TensorSpec> flat_tensor_specs(const tensorflow::StructuredValue& v, const std::string& where) {
  std::vector<TensorSpec> out;
  flatten(v, where, 0, out);
  return out;
}

}  // namespace kiln::io
