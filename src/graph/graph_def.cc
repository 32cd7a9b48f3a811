#include "graph/graph_def.h"

#include <google/protobuf/text_format.h>

#include <cctype>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "graph.pb.h"  // generated from src/graph/proto/graph.proto
#include "ops/variable_state.h"

namespace kiln::graph {
namespace {

// The GraphDef producer version kiln writes (TensorFlow 2.x range).
constexpr int kProducerVersion = 1286;

tensorflow::DataType to_proto(DType d) {
  switch (d) {
    case DType::Bool:
      return tensorflow::DT_BOOL;
    case DType::Int32:
      return tensorflow::DT_INT32;
    case DType::Int64:
      return tensorflow::DT_INT64;
    case DType::Float32:
      return tensorflow::DT_FLOAT;
    case DType::Float64:
      return tensorflow::DT_DOUBLE;
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
      case DType::Bool:
        p->add_bool_val(t.as<bool>()[0]);
        break;
      case DType::Int32:
        p->add_int_val(t.as<int32_t>()[0]);
        break;
      case DType::Int64:
        p->add_int64_val(t.as<int64_t>()[0]);
        break;
      case DType::Float32:
        p->add_float_val(t.as<float>()[0]);
        break;
      case DType::Float64:
        p->add_double_val(t.as<double>()[0]);
        break;
    }
    return;
  }
  p->set_tensor_content(std::string(static_cast<const char*>(t.data), t.nbytes()));
}

// Graph nodes name inputs "node" or "node:1"; function bodies name arguments by name and
// node outputs "node:output:i" (TensorFlow uses the op's output arg name in the middle).
std::string input_name(const Output& o, bool in_function) {
  if (in_function) {
    if (o.node->op->has(ops::kNoKernel)) return o.node->name;
    const auto& args = o.node->op->output_args;
    if (args.size() > 1 && o.index < static_cast<int>(args.size())) return o.node->name + ":" + args[o.index] + ":0";
    return o.node->name + ":" + (args.empty() ? "output" : args[0]) + ":" + std::to_string(o.index);
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

// Writes nodes and functions into one GraphDef; each reachable library function once.
class Writer {
 public:
  Writer(tensorflow::GraphDef* def, const ExportOptions& options) : def_(def), options_(options) {}

  void graph(const Graph& g) {
    library_ = &g.library();
    Scope scope{.g = g, .in_function = false};
    for (const auto& n : g.nodes()) emit(scope, *n, def_->mutable_node());
    drain();
  }
  void function(const Graph& f, const std::string& name) {
    library_ = &f.library();
    function_proto(f, name, options_.resource_args != nullptr);
    drain();
  }

 private:
  struct Scope {
    const Graph& g;
    bool in_function;
    std::unordered_map<const Resource*, std::string> handles = {};  // how nodes name each variable's handle
    std::unordered_set<std::string> handle_names = {};              // the handles' node or argument names
    // The root function of ExportOptions::resource_args: variables become its trailing
    // resource args instead of VarHandleOp nodes.
    tensorflow::FunctionDef* args_of = nullptr;
  };
  tensorflow::GraphDef* def_;
  const ExportOptions& options_;
  const FunctionLibrary* library_ = nullptr;  // where the FuncRefs being written resolve
  std::unordered_set<std::string> written_;   // library functions, each written once
  std::vector<const Graph*> queue_;

  std::string function_name(const std::string& n) const { return options_.function_prefix + n; }

  void enqueue(const ops::FuncRef& f) {
    if (written_.insert(f.name).second) queue_.push_back(&library_->get(f.name));
  }
  void drain() {
    for (size_t i = 0; i < queue_.size(); ++i) {  // in first-reference order
      const Graph* f = queue_[i];
      function_proto(*f, function_name(f->function_name()), false);
    }
    queue_.clear();
  }

  void attr_proto(const ops::AttrValue& v, tensorflow::AttrValue* p) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>)
            p->set_i(x);
          else if constexpr (std::is_same_v<T, double>)
            p->set_f(static_cast<float>(x));
          else if constexpr (std::is_same_v<T, bool>)
            p->set_b(x);
          else if constexpr (std::is_same_v<T, DType>)
            p->set_type(to_proto(x));
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            auto* l = p->mutable_list();
            for (int64_t e : x) l->add_i(e);
          } else if constexpr (std::is_same_v<T, std::string>)
            p->set_s(x);
          else if constexpr (std::is_same_v<T, TensorShape>) {
            ops::PartialShape ps{Dims(x.dims()), x.rank() < 0};
            shape_proto(ps, p->mutable_shape());
          } else if constexpr (std::is_same_v<T, Tensor>) {
            if (x.impl()) tensor_proto(*x.impl(), p->mutable_tensor());
          } else if constexpr (std::is_same_v<T, ops::FuncRef>) {
            p->mutable_func()->set_name(function_name(x.name));
            enqueue(x);
          } else if constexpr (std::is_same_v<T, std::vector<ops::FuncRef>>) {
            auto* l = p->mutable_list();
            for (const auto& f : x) {
              l->add_func()->set_name(function_name(f.name));
              enqueue(f);
            }
          }
        },
        v);
  }

  // How a node in this scope names a variable's handle: a VarHandleOp node written before
  // its first use or, in a root function with resource args, an argument.
  std::string handle_of(Scope& scope, const Resource* r, google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* out) {
    auto it = scope.handles.find(r);
    if (it != scope.handles.end()) return it->second;
    if (scope.in_function && options_.resource_args && !scope.args_of)
      throw UnimplementedError("saving a variable used inside a control-flow body ('" + scope.g.function_name() +
                               "') for TensorFlow is not supported yet: use the variable outside the branch or loop");
    const std::string shared = options_.variable_name ? options_.variable_name(r) : r->resource_name();
    std::string base;
    for (char ch : shared) base += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.') ? ch : '_';
    if (base.empty() || !std::isalnum(static_cast<unsigned char>(base[0]))) base = "v" + base;
    std::string name = base;
    auto taken = [&](const std::string& n) { return scope.g.find(n) || scope.handle_names.count(n); };
    for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    scope.handle_names.insert(name);
    const auto* var = static_cast<const ops::VariableState*>(r);
    if (scope.args_of) {
      auto* arg = scope.args_of->mutable_signature()->add_input_arg();
      arg->set_name(name);
      arg->set_type(tensorflow::DT_RESOURCE);
      options_.resource_args->push_back(r);
      return scope.handles[r] = name;
    }
    scope.handles[r] = scope.in_function ? name + ":resource:0" : name;
    tensorflow::NodeDef* h = out->Add();
    h->set_name(name);
    h->set_op("VarHandleOp");
    auto& a = *h->mutable_attr();
    a["dtype"].set_type(to_proto(var->dtype()));
    shape_proto(ops::PartialShape{Dims(var->shape().dims()), false}, a["shape"].mutable_shape());
    a["shared_name"].set_s(shared);
    a["container"].set_s("");
    return scope.handles[r];
  }

  // Appends n's NodeDef to `out`, after the VarHandleOp it may need.
  void emit(Scope& scope, const Node& n, google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* out) {
    tensorflow::NodeDef tmp;
    node(scope, n, &tmp, out);
    *out->Add() = std::move(tmp);
  }

  void node(Scope& scope, const Node& n, tensorflow::NodeDef* p,
            google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* out) {
    p->set_name(n.name);
    p->set_op(n.op->name);
    auto& attrs = *p->mutable_attr();
    for (int i = 0; i < n.attrs.size() && i < static_cast<int>(n.op->attr_names.size()); ++i) {
      const std::string key = n.op->attr_names[i];
      if (const auto* res = std::get_if<ops::ResourceRef>(&n.attrs[i])) {
        p->add_input(handle_of(scope, res->resource.get(), out));
        continue;
      }
      if (key == "_user_specified_name" && std::get<std::string>(n.attrs[i]).empty()) continue;
      attr_proto(n.attrs[i], &attrs[key]);
    }
    for (const Output& in : n.inputs) p->add_input(input_name(in, scope.in_function));
    for (const Node* c : n.control_inputs) p->add_input("^" + c->name);
    if (n.op->has(ops::kControlFlow)) control_flow_attrs(n, attrs);
    auto type_of_input = [&](int idx) { return n.inputs[idx < 0 ? n.inputs.size() - 1 : idx]; };
    if (n.op->type_attr && !n.inputs.empty())
      attrs[n.op->type_attr].set_type(
          to_proto(type_of_input(n.op->type_attr_input).node->out_dtypes[type_of_input(n.op->type_attr_input).index]));
    for (const auto& [name, idx] : n.op->index_type_attrs) {
      if (n.inputs.empty()) continue;
      const Output o = type_of_input(idx);
      attrs[name].set_type(to_proto(o.node->out_dtypes[o.index]));
    }
  }

  void function_proto(const Graph& f, const std::string& name, bool resource_args) {
    tensorflow::FunctionDef* p = def_->mutable_library()->add_function();
    auto* sig = p->mutable_signature();
    sig->set_name(name);
    // The argument shapes, which TensorFlow's loader gives its placeholders (a resource: scalar).
    auto* input_shapes = (*p->mutable_attr())["_input_shapes"].mutable_list();
    for (const Node* in : f.inputs) {
      auto* arg = sig->add_input_arg();
      arg->set_name(in->name);
      arg->set_type(to_proto(in->out_dtypes[0]));
      shape_proto(in->out_shapes[0], input_shapes->add_shape());
    }
    for (size_t i = 0; i < f.outputs.size(); ++i) {
      const Output& o = f.outputs[i];
      auto* arg = sig->add_output_arg();
      arg->set_name("output_" + std::to_string(i));
      arg->set_type(to_proto(o.node->out_dtypes[o.index]));
      (*p->mutable_ret())[arg->name()] = input_name(o, true);
    }
    Scope scope{.g = f, .in_function = true, .args_of = resource_args ? p : nullptr};
    bool stateful = false;
    for (const auto& n : f.nodes()) {
      stateful |= n->stateful;
      if (n->op->has(ops::kNoKernel)) continue;
      emit(scope, *n, p->mutable_node_def());
    }
    for (int i = static_cast<int>(f.inputs.size()); i < sig->input_arg_size(); ++i) input_shapes->add_shape();
    sig->set_is_stateful(stateful);
  }
};

}  // namespace

void write_graph_def(const Graph& g, tensorflow::GraphDef* def, const ExportOptions& options) {
  Writer(def, options).graph(g);
  def->mutable_versions()->set_producer(kProducerVersion);
}

void write_function_library(const Graph& f, const std::string& name, tensorflow::GraphDef* def,
                            const ExportOptions& options) {
  Writer(def, options).function(f, name);
  def->mutable_versions()->set_producer(kProducerVersion);
}

int dtype_to_proto(DType d) { return to_proto(d); }

GraphDef to_graph_def(const Graph& g) {
  tensorflow::GraphDef def;
  write_graph_def(g, &def);
  std::string text, bytes;
  google::protobuf::TextFormat::PrintToString(def, &text);
  def.SerializeToString(&bytes);
  return GraphDef(std::move(text), std::move(bytes));
}

}  // namespace kiln::graph
