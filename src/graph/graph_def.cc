#include "graph/graph_def.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype_table.h"
#include "core/object_value.h"
#include "graph.pb.h"  // generated from src/graph/proto/graph.proto

namespace kiln::graph {
namespace {

// The GraphDef producer version kiln writes (TensorFlow 2.x range).
constexpr int kProducerVersion = 1286;

tensorflow::DataType to_proto(DType d) { return static_cast<tensorflow::DataType>(detail::dtype_info(d).tf_proto); }

void shape_proto(const TensorShape& s, tensorflow::TensorShapeProto* p) {
  if (s.unknown_rank()) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : s.dims()) p->add_dim()->set_size(d);
}

void tensor_proto(const ops::TensorImpl& t, tensorflow::TensorProto* p) {
  p->set_dtype(to_proto(t.dtype));
  shape_proto(TensorShape(Dims(t.dims)), p->mutable_tensor_shape());
  if (t.dtype == DType::String) {  // one string_val per element, as TensorFlow writes them
    for (int64_t i = 0; i < t.num_elements; ++i)
      p->add_string_val(std::string(detail::string_of(t.as<detail::ObjectValue*>()[i])));
    return;
  }
  if (t.dtype == DType::Variant) throw InvalidArgumentError("a variant tensor (a TensorList) has no stored form");
  if (t.dims.empty()) {  // scalars use the typed value fields, as TensorFlow writes them
    bool written = true;
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
      default:  // the narrow and unsigned integers: their bytes, which TensorFlow reads as well
        written = false;
        break;
    }
    if (written) return;
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
// `resources`: variables passed after the tensors (ExportOptions::resource_args), which a
// While also returns.
void control_flow_attrs(const Node& n, google::protobuf::Map<std::string, tensorflow::AttrValue>& attrs,
                        size_t resources) {
  std::vector<DType> in_types;
  for (const Output& in : n.inputs) in_types.push_back(in.node->out_dtypes[in.index]);
  const bool is_loop = n.op->has(ops::kLoop);
  auto add_resources = [&](tensorflow::AttrValue& list) {
    for (size_t i = 0; i < resources; ++i) list.mutable_list()->add_type(tensorflow::DT_RESOURCE);
  };
  if (is_loop) {
    type_list(attrs["T"], in_types);
    add_resources(attrs["T"]);
  } else {
    if (std::string(n.op->attr_specs[0].name) == "then_branch") attrs["Tcond"].set_type(to_proto(in_types[0]));
    type_list(attrs["Tin"], std::vector<DType>(in_types.begin() + 1, in_types.end()));
    add_resources(attrs["Tin"]);
    type_list(attrs["Tout"], n.out_dtypes);
  }
  auto* shapes = attrs["output_shapes"].mutable_list();
  for (const auto& s : n.out_shapes) shape_proto(s, shapes->add_shape());
  if (is_loop)
    for (size_t i = 0; i < resources; ++i) shapes->add_shape();  // a handle is a scalar
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
  // A library function to write: with ExportOptions::resource_args, a body takes the
  // variables it (or a body inside it) uses after its tensors, and a While body returns them
  // (they are loop variables), so one body may be written in several variants.
  struct Pending {
    const Graph* g;
    std::string name;
    std::vector<const Resource*> resources;
    bool returns_resources;
  };
  using VariantKey = std::tuple<std::string, std::vector<const Resource*>, bool>;
  tensorflow::GraphDef* def_;
  const ExportOptions& options_;
  const FunctionLibrary* library_ = nullptr;   // where the FuncRefs being written resolve
  std::map<VariantKey, std::string> written_;  // library functions, each variant written once
  std::unordered_set<std::string> written_names_;
  std::vector<Pending> queue_;
  std::unordered_map<const Graph*, std::vector<const Resource*>> uses_;
  // The control-flow node whose function attrs are being written: the variables its bodies
  // take, and whether it is a loop (its body, attr 1, returns them).
  std::vector<const Resource*> cf_resources_;
  bool cf_loop_ = false;
  int attr_index_ = 0;

  std::string function_name(const std::string& n) const { return options_.function_prefix + n; }

  // The variables a function uses, its bodies' included, in order of first use.
  const std::vector<const Resource*>& uses(const Graph& f) {
    if (auto it = uses_.find(&f); it != uses_.end()) return it->second;
    std::vector<const Resource*> out;
    auto add = [&](const Resource* r) {
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    };
    for (const auto& n : f.nodes()) {
      for (int i = 0; i < n->attrs.size(); ++i) {
        if (const auto* res = std::get_if<ops::ResourceRef>(&n->attrs[i]); res && res->resource)
          add(res->resource.get());
        if (const auto* ref = std::get_if<ops::FuncRef>(&n->attrs[i]))
          for (const Resource* r : uses(library_->get(ref->name))) add(r);
        if (const auto* refs = std::get_if<std::vector<ops::FuncRef>>(&n->attrs[i]))
          for (const auto& ref : *refs)
            for (const Resource* r : uses(library_->get(ref.name))) add(r);
      }
    }
    return uses_[&f] = std::move(out);
  }
  // What a control-flow node's bodies use together (every branch takes the same arguments).
  std::vector<const Resource*> control_flow_resources(const Node& n) {
    std::vector<const Resource*> out;
    for (const ops::FuncRef* ref : ops::func_refs(n.attrs))
      for (const Resource* r : uses(library_->get(ref->name)))
        if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    return out;
  }

  // The name a reference to `f` is written with; queues the function the first time.
  std::string enqueue(const ops::FuncRef& f) {
    const bool returns = cf_loop_ && attr_index_ == 1 && !cf_resources_.empty();
    const VariantKey key{f.name, cf_resources_, returns};
    if (auto it = written_.find(key); it != written_.end()) return it->second;
    std::string name = function_name(f.name);
    if (!cf_resources_.empty()) {
      const std::string base = name + "_with_" + std::to_string(cf_resources_.size()) + (returns ? "_loop" : "");
      name = base;
      for (int k = 1; written_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    }
    written_names_.insert(name);
    written_[key] = name;
    queue_.push_back(
        Pending{.g = &library_->get(f.name), .name = name, .resources = cf_resources_, .returns_resources = returns});
    return name;
  }
  void drain() {
    for (size_t i = 0; i < queue_.size(); ++i) {  // in first-reference order
      const Pending f = queue_[i];
      function_proto(*f.g, f.name, false, f.resources, f.returns_resources);
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
          else if constexpr (std::is_same_v<T, ops::ShapeAttr>) {
            shape_proto(x.get(), p->mutable_shape());
          } else if constexpr (std::is_same_v<T, Tensor>) {
            if (x.impl()) tensor_proto(*x.impl(), p->mutable_tensor());
          } else if constexpr (std::is_same_v<T, ops::FuncRef>) {
            p->mutable_func()->set_name(enqueue(x));
          } else if constexpr (std::is_same_v<T, std::vector<ops::FuncRef>>) {
            auto* l = p->mutable_list();
            for (const auto& f : x) l->add_func()->set_name(enqueue(f));
          }
        },
        v);
  }

  // A name for a variable's handle (node or argument) that no node or handle in the scope has.
  static std::string handle_name(Scope& scope, const std::string& shared) {
    std::string base;
    for (char ch : shared) base += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.') ? ch : '_';
    if (base.empty() || !std::isalnum(static_cast<unsigned char>(base[0]))) base = "v" + base;
    std::string name = base;
    auto taken = [&](const std::string& n) { return scope.g.find(n) || scope.handle_names.count(n); };
    for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    scope.handle_names.insert(name);
    return name;
  }

  // How a node in this scope names a variable's handle: a VarHandleOp node written before
  // its first use or, in a root function with resource args, an argument.
  std::string handle_of(Scope& scope, const Resource* r, google::protobuf::RepeatedPtrField<tensorflow::NodeDef>* out) {
    auto it = scope.handles.find(r);
    if (it != scope.handles.end()) return it->second;
    if (scope.in_function && options_.resource_args && !scope.args_of)
      throw InternalError("a body uses a variable its arguments do not bind ('" + scope.g.function_name() + "')");
    const std::string shared = options_.variable_name ? options_.variable_name(r) : r->resource_name();
    const std::string name = handle_name(scope, shared);
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
    a["dtype"].set_type(to_proto(r->dtype()));
    shape_proto(r->shape(), a["shape"].mutable_shape());
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
    const bool threads_resources = options_.resource_args && n.op->has(ops::kControlFlow);
    const std::vector<const Resource*> resources =
        threads_resources ? control_flow_resources(n) : std::vector<const Resource*>{};
    cf_resources_ = resources;
    cf_loop_ = n.op->has(ops::kLoop);
    for (int i = 0; i < n.attrs.size() && i < static_cast<int>(n.op->attr_specs.size()); ++i) {
      const std::string key = n.op->attr_specs[i].name;
      attr_index_ = i;
      if (const auto* res = std::get_if<ops::ResourceRef>(&n.attrs[i])) {
        if (res->resource) p->add_input(handle_of(scope, res->resource.get(), out));  // none: an unused slot
        continue;
      }
      if (key == "_user_specified_name" && std::get<std::string>(n.attrs[i]).empty()) continue;
      attr_proto(n.attrs[i], &attrs[key]);
    }
    cf_resources_.clear();
    cf_loop_ = false;
    for (const Output& in : n.inputs) p->add_input(input_name(in, scope.in_function));
    for (const Resource* r : resources) p->add_input(handle_of(scope, r, out));
    for (const Node* c : n.control_inputs) p->add_input("^" + c->name);
    if (n.op->has(ops::kControlFlow)) control_flow_attrs(n, attrs, resources.size());
    auto type_of_input = [&](int idx) { return n.inputs[idx < 0 ? n.inputs.size() - 1 : idx]; };
    if (n.op->type_attr && !n.inputs.empty())
      attrs[n.op->type_attr].set_type(
          to_proto(type_of_input(n.op->type_attr_input).node->out_dtypes[type_of_input(n.op->type_attr_input).index]));
    if (n.op->type_list_attr) {
      tensorflow::AttrValue& list = attrs[n.op->type_list_attr];
      list.mutable_list();  // present even when empty
      for (const Output& o : n.inputs) list.mutable_list()->add_type(to_proto(o.node->out_dtypes[o.index]));
    }
    for (const auto& [name, idx] : n.op->index_type_attrs) {
      if (n.inputs.empty()) continue;
      const Output o = type_of_input(idx);
      attrs[name].set_type(to_proto(o.node->out_dtypes[o.index]));
    }
  }

  // `root_args`: the root function of ExportOptions::resource_args (variables become arguments
  // as they are met). `resources`: a body's variable arguments, after its tensors; returned
  // unchanged after its outputs when `returns_resources` (a While body).
  void function_proto(const Graph& f, const std::string& name, bool root_args,
                      const std::vector<const Resource*>& resources = {}, bool returns_resources = false) {
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
    Scope scope{.g = f, .in_function = true, .args_of = root_args ? p : nullptr};
    for (const Resource* r : resources) {
      const std::string arg_name =
          handle_name(scope, options_.variable_name ? options_.variable_name(r) : r->resource_name());
      scope.handles[r] = arg_name;
      auto* arg = sig->add_input_arg();
      arg->set_name(arg_name);
      arg->set_type(tensorflow::DT_RESOURCE);
      if (!returns_resources) continue;
      auto* out = sig->add_output_arg();
      out->set_name(arg_name + "_out");
      out->set_type(tensorflow::DT_RESOURCE);
      (*p->mutable_ret())[out->name()] = arg_name;
    }
    bool stateful = false;
    for (const auto& n : f.nodes()) {
      stateful |= n->stateful;
      if (n->op->has(ops::kNoKernel)) continue;
      emit(scope, *n, p->mutable_node_def());
      // TensorFlow runs a function's nodes that its outputs or control outputs need: an effect
      // (an assignment, a print) that no output depends on must be a control output.
      if (n->op->has(ops::kStateful) || n->op->has(ops::kSideEffect)) {
        sig->add_control_output(n->name);
        (*p->mutable_control_ret())[n->name] = n->name;
      }
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
