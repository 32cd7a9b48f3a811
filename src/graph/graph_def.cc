#include "graph/graph_def.h"

#include <google/protobuf/text_format.h>

#include <cstring>

#include "graph.pb.h"  // generated from src/graph/proto/graph.proto

namespace kiln::graph {
namespace {

// The GraphDef producer version kiln writes (TensorFlow 2.x range).
constexpr int kProducerVersion = 1286;

tensorflow::DataType to_proto(DType d) {
  switch (d) {
    case DType::Bool: return tensorflow::DT_BOOL;
    case DType::Int32: return tensorflow::DT_INT32;
    case DType::Int64: return tensorflow::DT_INT64;
    case DType::Float32: return tensorflow::DT_FLOAT;
    case DType::Float64: return tensorflow::DT_DOUBLE;
  }
  return tensorflow::DT_INVALID;
}

void shape_proto(const ops::PartialShape& s, tensorflow::TensorShapeProto* p) {
  if (s.unknown_rank) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : s.dims) p->add_dim()->set_size(d);
}

void tensor_proto(const ops::TensorImpl& t, tensorflow::TensorProto* p) {
  p->set_dtype(to_proto(t.dtype));
  shape_proto(ops::PartialShape{t.dims, false}, p->mutable_tensor_shape());
  if (t.dims.empty()) {  // scalars use the typed value fields, as TensorFlow writes them
    switch (t.dtype) {
      case DType::Bool: p->add_bool_val(t.as<bool>()[0]); break;
      case DType::Int32: p->add_int_val(t.as<int32_t>()[0]); break;
      case DType::Int64: p->add_int64_val(t.as<int64_t>()[0]); break;
      case DType::Float32: p->add_float_val(t.as<float>()[0]); break;
      case DType::Float64: p->add_double_val(t.as<double>()[0]); break;
    }
    return;
  }
  p->set_tensor_content(std::string(static_cast<const char*>(t.data), t.nbytes()));
}

void attr_proto(const ops::AttrValue& v, tensorflow::AttrValue* p) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) p->set_i(x);
        else if constexpr (std::is_same_v<T, double>) p->set_f(static_cast<float>(x));
        else if constexpr (std::is_same_v<T, bool>) p->set_b(x);
        else if constexpr (std::is_same_v<T, DType>) p->set_type(to_proto(x));
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          auto* l = p->mutable_list();
          for (int64_t e : x) l->add_i(e);
        } else if constexpr (std::is_same_v<T, std::string>) p->set_s(x);
        else if constexpr (std::is_same_v<T, TensorShape>) {
          ops::PartialShape ps{Dims(x.dims()), x.rank() < 0};
          shape_proto(ps, p->mutable_shape());
        } else if constexpr (std::is_same_v<T, Tensor>) {
          if (x.impl()) tensor_proto(*x.impl(), p->mutable_tensor());
        } else if constexpr (std::is_same_v<T, ops::FuncRef>) {
          p->mutable_func()->set_name(x.name);
        } else if constexpr (std::is_same_v<T, std::vector<ops::FuncRef>>) {
          auto* l = p->mutable_list();
          for (const auto& f : x) l->add_func()->set_name(f.name);
        } else if constexpr (std::is_same_v<T, ops::ResourceRef>) {
          p->set_s(x.resource ? x.resource->resource_name() : "");
        }
      },
      v);
}

// Graph nodes name inputs "node" or "node:1"; function bodies name arguments by name and
// node outputs "node:output:i" (TensorFlow uses the op's output arg name in the middle).
std::string input_name(const Output& o, bool in_function) {
  if (in_function) {
    if (o.node->op->has(ops::kNoKernel)) return o.node->name;
    return o.node->name + ":output:" + std::to_string(o.index);
  }
  return o.index == 0 ? o.node->name : o.node->name + ":" + std::to_string(o.index);
}

void type_list(tensorflow::AttrValue& a, const std::vector<DType>& types) {
  auto* l = a.mutable_list();
  for (DType d : types) l->add_type(to_proto(d));
}

// Control flow nodes: the type and shape lists TensorFlow's If/While/Case carry.
void control_flow_attrs(const Node& n, google::protobuf::Map<std::string, tensorflow::AttrValue>& attrs) {
  std::vector<DType> in_types;
  for (const Output& in : n.inputs) in_types.push_back(in.node->out_dtypes[in.index]);
  const bool is_loop = std::string(n.op->attr_names[0]) == "cond";
  if (is_loop) {
    type_list(attrs["T"], in_types);
  } else {
    if (std::string(n.op->attr_names[0]) == "then_branch") attrs["Tcond"].set_type(to_proto(in_types[0]));
    type_list(attrs["Tin"], std::vector<DType>(in_types.begin() + 1, in_types.end()));
    type_list(attrs["Tout"], n.out_dtypes);
  }
  auto* shapes = attrs["output_shapes"].mutable_list();
  for (const auto& s : n.out_shapes) shape_proto(s, shapes->add_shape());
}

void node_proto(const Node& n, tensorflow::NodeDef* p, bool in_function = false) {
  p->set_name(n.name);
  p->set_op(n.op->name);
  for (const Output& in : n.inputs) p->add_input(input_name(in, in_function));
  for (const Node* c : n.control_inputs) p->add_input("^" + c->name);
  auto& attrs = *p->mutable_attr();
  for (int i = 0; i < n.attrs.size() && i < static_cast<int>(n.op->attr_names.size()); ++i) {
    const std::string key = n.op->attr_names[i];
    if (key == "_user_specified_name" && std::get<std::string>(n.attrs[i]).empty()) continue;
    attr_proto(n.attrs[i], &attrs[key]);
  }
  if (n.op->has(ops::kControlFlow)) control_flow_attrs(n, attrs);
  auto type_of_input = [&](int idx) { return n.inputs[idx < 0 ? n.inputs.size() - 1 : idx]; };
  if (n.op->type_attr && !n.inputs.empty()) attrs[n.op->type_attr].set_type(to_proto(type_of_input(n.op->type_attr_input).node->out_dtypes[type_of_input(n.op->type_attr_input).index]));
  for (const auto& [name, idx] : n.op->index_type_attrs) {
    if (n.inputs.empty()) continue;
    const Output o = type_of_input(idx);
    attrs[name].set_type(to_proto(o.node->out_dtypes[o.index]));
  }
}

void function_proto(const Graph& f, tensorflow::FunctionDef* p) {
  auto* sig = p->mutable_signature();
  sig->set_name(f.function_name());
  for (const Node* in : f.inputs) {
    auto* arg = sig->add_input_arg();
    arg->set_name(in->name);
    arg->set_type(to_proto(in->out_dtypes[0]));
  }
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    const Output& o = f.outputs[i];
    auto* arg = sig->add_output_arg();
    arg->set_name("output_" + std::to_string(i));
    arg->set_type(to_proto(o.node->out_dtypes[o.index]));
    (*p->mutable_ret())[arg->name()] = input_name(o, true);
  }
  bool stateful = false;
  for (const auto& n : f.nodes()) {
    stateful |= n->stateful;
    if (!n->op->has(ops::kNoKernel)) node_proto(*n, p->add_node_def(), true);
  }
  sig->set_is_stateful(stateful);
}

}  // namespace

GraphDef to_graph_def(const Graph& g) {
  tensorflow::GraphDef def;
  for (const auto& n : g.nodes()) node_proto(*n, def.add_node());
  for (const auto& f : g.library()) function_proto(*f, def.mutable_library()->add_function());
  def.mutable_versions()->set_producer(kProducerVersion);
  std::string text, bytes;
  google::protobuf::TextFormat::PrintToString(def, &text);
  def.SerializeToString(&bytes);
  return GraphDef(std::move(text), std::move(bytes));
}

}  // namespace kiln::graph
