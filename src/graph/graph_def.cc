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
        }
      },
      v);
}

std::string input_name(const Output& o) {
  return o.index == 0 ? o.node->name : o.node->name + ":" + std::to_string(o.index);
}

void node_proto(const Node& n, tensorflow::NodeDef* p) {
  p->set_name(n.name);
  p->set_op(n.op->name);
  for (const Output& in : n.inputs) p->add_input(input_name(in));
  for (const Node* c : n.control_inputs) p->add_input("^" + c->name);
  auto& attrs = *p->mutable_attr();
  for (int i = 0; i < n.attrs.size() && i < static_cast<int>(n.op->attr_names.size()); ++i) {
    const std::string key = n.op->attr_names[i];
    if (key == "_user_specified_name" && std::get<std::string>(n.attrs[i]).empty()) continue;
    attr_proto(n.attrs[i], &attrs[key]);
  }
  auto type_of_input = [&](int idx) { return n.inputs[idx < 0 ? n.inputs.size() - 1 : idx]; };
  if (n.op->type_attr && !n.inputs.empty()) attrs[n.op->type_attr].set_type(to_proto(type_of_input(n.op->type_attr_input).node->out_dtypes[type_of_input(n.op->type_attr_input).index]));
  for (const auto& [name, idx] : n.op->index_type_attrs) {
    if (n.inputs.empty()) continue;
    const Output o = type_of_input(idx);
    attrs[name].set_type(to_proto(o.node->out_dtypes[o.index]));
  }
}

}  // namespace

GraphDef to_graph_def(const Graph& g) {
  tensorflow::GraphDef def;
  for (const auto& n : g.nodes()) node_proto(*n, def.add_node());
  def.mutable_versions()->set_producer(kProducerVersion);
  std::string text, bytes;
  google::protobuf::TextFormat::PrintToString(def, &text);
  def.SerializeToString(&bytes);
  return GraphDef(std::move(text), std::move(bytes));
}

}  // namespace kiln::graph
