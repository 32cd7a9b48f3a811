// SavedModels written by TensorFlow: saved_model.pb (one MetaGraphDef: the main graph, the
// function library, signature_defs, the object graph) and variables/ (a TensorBundle).
//
// A signature's outputs name the main graph's call node, StatefulPartitionedCall(inputs...,
// variable handles..., f = the signature wrapper). kiln imports f with its tensor arguments as
// inputs and its resource arguments bound to variables; the object graph says which objects
// those are (SavedConcreteFunction.bound_inputs: node ids) and the checkpoint's object graph,
// whose node ids are the same, says under which key each variable's value is saved. The saver
// functions (SaveV2, RestoreV2) are never run.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <tuple>

#include "io/files.h"
#include "io/graph_import.h"
#include "io/limits.h"
#include "io/proto_values.h"
#include "io/saved_model.h"
#include "io/structured_value.h"
#include "kiln/checkpoint.h"
#include "ops/op_def.h"
#include "saved_model.pb.h"  // generated from src/io/proto/saved_model.proto
#include "trace/function_config.h"

namespace kiln::io {
namespace {

constexpr const char* kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr const char* kValueSuffix = "/.ATTRIBUTES/VARIABLE_VALUE";

// "node:3" or "node" -> (node, 3).
std::pair<std::string, int> tensor_name(const std::string& text, const std::string& where) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return {text, 0};
  const std::string digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgumentError(where + ": malformed tensor name '" + text + "'");
  return {text.substr(0, colon), std::stoi(digits)};
}

// The saved variables, made on first use: by object node id.
class Variables {
 public:
  Variables(std::function<CheckpointReader()> open, const tensorflow::SavedObjectGraph& saved)
      : open_(std::move(open)), saved_(saved) {}

  // `handle`: the VarHandleOp that names it in the main graph, checked against it (or null).
  std::shared_ptr<ops::VariableState> get(int node_id, const tensorflow::NodeDef* handle, const std::string& where) {
    if (auto it = by_node_.find(node_id); it != by_node_.end()) return it->second;
    open();
    if (node_id < 0 || node_id >= objects_.nodes_size())
      throw InvalidArgumentError(where + ": captured object " + std::to_string(node_id) +
                                 " is not in the checkpoint's object graph");
    std::string key;
    for (const auto& a : objects_.nodes(node_id).attributes())
      if (a.name() == "VARIABLE_VALUE") key = a.checkpoint_key();
    if (key.empty())
      throw InvalidArgumentError(where + ": captured object " + std::to_string(node_id) +
                                 " has no saved variable value (only variables are supported as captures)");
    Tensor value = reader_->get_tensor(key);
    static const tensorflow::NodeDef kNoHandle;
    const tensorflow::NodeDef& h = handle ? *handle : kNoHandle;
    auto dt = h.attr().find("dtype");
    if (dt != h.attr().end() && std::get<DType>(attr_from_proto(dt->second, AttrKind::kType, where)) != value.dtype())
      throw InvalidArgumentError(where + ": variable '" + key + "' is saved as " +
                                 std::string(dtype_name(value.dtype())) + ", its handle says otherwise");
    auto sh = h.attr().find("shape");
    if (sh != h.attr().end() && !std::get<ops::ShapeAttr>(attr_from_proto(sh->second, AttrKind::kShape, where))
                                     .get()
                                     .is_compatible_with(value.shape()))
      throw InvalidArgumentError(where + ": variable '" + key + "' is saved with shape " + value.shape().str() +
                                 ", its handle says otherwise");
    check_declared(node_id, key, value, where);
    std::string name = key;
    if (name.size() > std::string(kValueSuffix).size() &&
        name.compare(name.size() - std::string(kValueSuffix).size(), std::string::npos, kValueSuffix) == 0)
      name.resize(name.size() - std::string(kValueSuffix).size());
    auto v = std::make_shared<ops::VariableState>(value, name);
    by_node_.emplace(node_id, v);
    by_name_[name] = v;
    return v;
  }
  std::map<std::string, std::shared_ptr<ops::VariableState>> by_name() const { return by_name_; }

 private:
  void open() {
    if (reader_) return;
    reader_ = std::make_unique<CheckpointReader>(open_());
    const std::vector<std::string> graph = reader_->get_strings(kObjectGraphKey);
    if (graph.size() != 1 || !reader_->shape(kObjectGraphKey).empty())
      throw DataLossError("the checkpoint's object graph is not a scalar string");
    if (!objects_.ParseFromString(graph[0])) throw DataLossError("the checkpoint's object graph does not parse");
  }

  // The SavedModel's object graph declares each variable's dtype and shape too; a checkpoint
  // that disagrees is another model's (or a crafted one).
  void check_declared(int node_id, const std::string& key, const Tensor& value, const std::string& where) const {
    if (node_id >= saved_.nodes_size() || !saved_.nodes(node_id).has_variable()) return;
    const tensorflow::SavedVariable& declared = saved_.nodes(node_id).variable();
    if (declared.dtype() != tensorflow::DT_INVALID && dtype_from_proto(declared.dtype(), where) != value.dtype())
      throw InvalidArgumentError(where + ": variable '" + key + "' is saved as " +
                                 std::string(dtype_name(value.dtype())) + ", the object graph declares " +
                                 std::string(dtype_name(dtype_from_proto(declared.dtype(), where))));
    if (declared.has_shape() && !shape_from_proto(declared.shape(), where).is_compatible_with(value.shape()))
      throw InvalidArgumentError(where + ": variable '" + key + "' is saved with shape " + value.shape().str() +
                                 ", the object graph declares " + shape_from_proto(declared.shape(), where).str());
  }

  std::function<CheckpointReader()> open_;
  const tensorflow::SavedObjectGraph& saved_;
  std::unique_ptr<CheckpointReader> reader_;
  tensorflow::TrackableObjectGraph objects_;
  std::map<int, std::shared_ptr<ops::VariableState>> by_node_;
  std::map<std::string, std::shared_ptr<ops::VariableState>> by_name_;
};

// Every op kiln lacks in the functions `root` reaches (through call and control-flow attrs),
// with the functions it appears in.
std::map<std::string, std::set<std::string>> missing_ops(const tensorflow::FunctionDefLibrary& library,
                                                         const std::string& root) {
  std::map<std::string, const tensorflow::FunctionDef*> functions;
  for (const auto& f : library.function()) functions.emplace(f.signature().name(), &f);
  std::map<std::string, std::set<std::string>> missing;  // op -> functions
  std::set<std::string> seen{root};
  std::vector<std::string> todo{root};
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    auto it = functions.find(name);
    if (it == functions.end()) continue;  // the importer reports a missing function
    for (const auto& nd : it->second->node_def()) {
      const std::string& op = nd.op();
      const bool handled = op == "StatefulPartitionedCall" || op == "PartitionedCall" || op == "VarHandleOp";
      const ops::OpDef* def = ops::find_op(op);
      if (!handled && (!def || def->has(ops::kInternal) || def->has(ops::kNoKernel))) missing[op].insert(name);
      for (const auto& [attr, value] : nd.attr()) {
        std::vector<std::string> callees;
        if (value.value_case() == tensorflow::AttrValue::kFunc) callees.push_back(value.func().name());
        if (value.value_case() == tensorflow::AttrValue::kList)
          for (const auto& f : value.list().func()) callees.push_back(f.name());
        for (const std::string& callee : callees)
          if (seen.insert(callee).second) todo.push_back(callee);
      }
    }
  }
  return missing;
}

std::vector<std::string> missing_list(const std::map<std::string, std::set<std::string>>& missing) {
  std::vector<std::string> out;
  for (const auto& [op, in] : missing) {
    std::string line = op + " (in";
    for (const std::string& f : in) line += " " + f;
    out.push_back(line + ")");
  }
  return out;
}

// One UnimplementedError listing every op kiln lacks, before any import, rather than the
// first one found.
void check_ops(const tensorflow::FunctionDefLibrary& library, const std::string& root, const std::string& where) {
  const auto missing = missing_ops(library, root);
  if (missing.empty()) return;
  std::string text;
  for (const std::string& line : missing_list(missing)) text += "\n  " + line;
  throw UnimplementedError(where + " uses " + std::to_string(missing.size()) + " op(s) kiln does not have:" + text);
}

// Positional calls (LoadedModel::call) take the inputs in the order of the signature function's
// keywords (the traced function's parameters), not the sorted order TensorFlow passes them in.
void follow_keyword_order(const tensorflow::SavedObjectGraph& objects, const std::string& function,
                          detail::ConcreteImpl& cf) {
  for (const auto& node : objects.nodes()) {
    if (!node.has_bare_concrete_function() || node.bare_concrete_function().concrete_function_name() != function)
      continue;
    const auto& keywords = node.bare_concrete_function().argument_keywords();
    if (static_cast<size_t>(keywords.size()) != cf.inputs.size()) return;
    std::vector<size_t> order;  // order[i]: the input that goes i-th
    for (const std::string& k : keywords) {
      const auto it =
          std::find_if(cf.inputs.begin(), cf.inputs.end(), [&](const TensorSpec& s) { return s.name == k; });
      if (it == cf.inputs.end()) return;  // not a permutation: keep the call's order
      order.push_back(static_cast<size_t>(it - cf.inputs.begin()));
    }
    if (std::set<size_t>(order.begin(), order.end()).size() != order.size()) return;
    auto inputs = cf.inputs;
    auto signature = cf.signature;
    auto nodes = cf.graph->inputs;
    for (size_t i = 0; i < order.size(); ++i) {
      cf.inputs[i] = inputs[order[i]];
      cf.signature[i] = signature[order[i]];
      cf.graph->inputs[i] = nodes[order[i]];
    }
    return;
  }
}

// The function's arguments fed by captured constants become Const nodes; the rest stay its
// inputs, in order.
void bind_captured_constants(graph::Graph& g, const std::vector<Tensor>& captured) {
  if (g.inputs.size() != captured.size())
    throw InternalError("the imported function has " + std::to_string(g.inputs.size()) + " inputs, the call " +
                        std::to_string(captured.size()));
  std::map<std::pair<const graph::Node*, int>, graph::Output> replacements;
  std::vector<graph::Node*> inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (i < captured.size() && captured[i].defined())
      replacements[{g.inputs[i], 0}] = graph::Output{g.add_const(captured[i], "captured_constant"), 0};
    else
      inputs.push_back(g.inputs[i]);
  }
  if (replacements.empty()) return;
  g.replace_uses(replacements);
  g.inputs = std::move(inputs);
  g.compact_order(/*remove_dead=*/true);
}

// A concrete function's input `s`: its spec and its entry in the call signature.
void add_input(detail::ConcreteImpl& cf, const TensorSpec& s) {
  cf.inputs.push_back(s);
  detail::ArgEntry arg;
  arg.name = s.name;
  arg.dtype = s.dtype;
  arg.shape = s.shape;
  cf.signature.push_back(arg);
}

// A concrete function's output `o`, named `key`.
void add_output(detail::ConcreteImpl& cf, const graph::Output& o, std::string key) {
  cf.graph->outputs.push_back(o);
  cf.outputs.push_back(TensorSpec{o.node->out_shapes[o.index], o.node->out_dtypes[o.index], std::move(key)});
}

std::shared_ptr<detail::ConcreteImpl> load_signature(const tensorflow::MetaGraphDef& mg, const std::string& name,
                                                     const tensorflow::SignatureDef& sig,
                                                     const std::map<std::string, const tensorflow::NodeDef*>& nodes,
                                                     Variables& variables, NodeBudget& budget) {
  const std::string where = "signature '" + name + "'";
  auto node_named = [&](const std::string& n) -> const tensorflow::NodeDef& {
    auto it = nodes.find(n);
    if (it == nodes.end()) throw InvalidArgumentError(where + ": the graph has no node '" + n + "'");
    return *it->second;
  };
  // Outputs, in key order, and the one call node they come from.
  std::vector<std::pair<std::string, int>> outputs;  // (key, output index of the call)
  const tensorflow::NodeDef* call = nullptr;
  // In the order of the call's outputs (what kiln's positional results follow), then by key.
  std::vector<std::tuple<int, std::string, std::string>> keys;  // (index, key, node)
  for (const auto& [key, info] : sig.outputs()) {
    const auto [node, index] = tensor_name(info.name(), where);
    keys.emplace_back(index, key, node);
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& [index, key, node] : keys) {
    const tensorflow::NodeDef& nd = node_named(node);
    if (nd.op() != "StatefulPartitionedCall" && nd.op() != "PartitionedCall")
      throw UnimplementedError(where + ": output '" + key + "' comes from a " + nd.op() +
                               " node; kiln serves signatures that call a function (TensorFlow 2 SavedModels)");
    if (call && call != &nd) throw UnimplementedError(where + ": its outputs come from more than one function call");
    call = &nd;
    outputs.emplace_back(key, index);
  }
  if (!call) {  // no outputs (a step run for its effects): the call its inputs feed
    std::set<std::string> placeholders;
    for (const auto& [key, info] : sig.inputs()) placeholders.insert(tensor_name(info.name(), where).first);
    for (const auto& [node_name, nd] : nodes) {
      if (nd->op() != "StatefulPartitionedCall" && nd->op() != "PartitionedCall") continue;
      for (const std::string& in : nd->input())
        if (placeholders.count(tensor_name(in, where).first)) call = nd;
      if (call) break;
    }
  }
  if (!call) throw InvalidArgumentError(where + " has no outputs");
  auto f = call->attr().find("f");
  if (f == call->attr().end() || f->second.value_case() != tensorflow::AttrValue::kFunc)
    throw InvalidArgumentError(where + ": the call node has no function attr 'f'");
  const std::string& function = f->second.func().name();
  // The call's inputs: placeholders (the signature's inputs) and variable handles.
  std::map<std::string, std::string> input_key;  // placeholder node -> signature input key
  for (const auto& [key, info] : sig.inputs()) input_key[tensor_name(info.name(), where).first] = key;
  auto cf = std::make_shared<detail::ConcreteImpl>();
  cf->name = name;
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
  // Keras exports capture some constants (a Normalization layer's mean and variance) as
  // call inputs fed by Const nodes of the outer graph: the function's argument becomes that
  // constant. Parallel to dtypes; undefined for a signature input.
  std::vector<Tensor> captured;
  ResourceBindings resources;
  std::vector<int> bound;
  if (auto it = mg.object_graph_def().concrete_functions().find(function);
      it != mg.object_graph_def().concrete_functions().end())
    bound.assign(it->second.bound_inputs().begin(), it->second.bound_inputs().end());
  size_t next_bound = 0;
  for (const std::string& in : call->input()) {
    if (!in.empty() && in[0] == '^') continue;
    const tensorflow::NodeDef& nd = node_named(tensor_name(in, where).first);
    // Captures (variables and constants) take the object graph's bound inputs in order.
    const bool is_capture = nd.op() == "VarHandleOp" || nd.op() == "Const";
    if (is_capture && next_bound >= bound.size())
      throw InvalidArgumentError(where + ": the call captures more objects than the object graph binds");
    if (nd.op() == "VarHandleOp") {
      resources.push_back(variables.get(bound[next_bound++], &nd, where));
      continue;
    }
    if (nd.op() == "Const") {
      ++next_bound;
      auto value = nd.attr().find("value");
      if (value == nd.attr().end() || value->second.value_case() != tensorflow::AttrValue::kTensor)
        throw InvalidArgumentError(where + ": the Const node '" + nd.name() + "' has no tensor value");
      const Tensor t = tensor_from_proto(value->second.tensor(), where + " constant '" + nd.name() + "'");
      dtypes.push_back(t.dtype());
      shapes.push_back(t.shape());
      captured.push_back(t);
      continue;
    }
    auto key = input_key.find(nd.name());
    if (nd.op() != "Placeholder" || key == input_key.end())
      throw UnimplementedError(where + ": the call's input '" + in + "' is neither a signature input nor a variable");
    const tensorflow::TensorInfo& info = sig.inputs().at(key->second);
    const std::string iwhere = where + " input '" + key->second + "'";
    const DType dtype = dtype_from_proto(info.dtype(), iwhere);
    const TensorShape shape = shape_from_proto(info.tensor_shape(), iwhere);
    dtypes.push_back(dtype);
    shapes.push_back(shape);
    captured.emplace_back();
    add_input(*cf, TensorSpec{shape, dtype, key->second});
  }
  if (cf->inputs.size() != static_cast<size_t>(sig.inputs_size()))
    throw UnimplementedError(where + ": some of its inputs do not reach the function call");
  if (next_bound != bound.size())
    throw InvalidArgumentError(where + ": the object graph binds " + std::to_string(bound.size()) +
                               " captures, the call passes " + std::to_string(next_bound));
  check_ops(mg.graph_def().library(), function, where);
  cf->graph = import_function(mg.graph_def().library(), function, dtypes, shapes, {}, budget, resources);
  bind_captured_constants(*cf->graph, captured);
  follow_keyword_order(mg.object_graph_def(), function, *cf);
  std::vector<graph::Output> all = cf->graph->outputs;
  cf->graph->outputs.clear();
  for (const auto& [key, index] : outputs) {
    if (index < 0 || index >= static_cast<int>(all.size()))
      throw InvalidArgumentError(where + ": output '" + key + "' is output " + std::to_string(index) +
                                 " of a function with " + std::to_string(all.size()));
    add_output(*cf, all[index], key);
  }
  cf->compile(detail::default_optimizer_options());
  return cf;
}

// One trace of a saved tf.function: its library function, called with the TensorSpecs of its
// input structure (in TensorFlow's flattening order) and then the variables it captures.
std::shared_ptr<detail::ConcreteImpl> load_trace(const tensorflow::MetaGraphDef& mg, const std::string& name,
                                                 const tensorflow::SavedConcreteFunction& saved, Variables& variables,
                                                 NodeBudget& budget) {
  const std::string where = "function '" + name + "'";
  const std::vector<TensorSpec> specs = io::flat_tensor_specs(saved.canonicalized_input_signature(), where);
  ResourceBindings resources;
  for (int id : saved.bound_inputs()) {
    const auto& nodes = mg.object_graph_def().nodes();
    if (id < 0 || id >= nodes.size() || !nodes.Get(id).has_variable())
      throw UnimplementedError(where + " captures object " + std::to_string(id) +
                               ", which is not a variable (kiln restores captured variables only)");
    resources.push_back(variables.get(id, nullptr, where));
  }
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
  auto cf = std::make_shared<detail::ConcreteImpl>();
  cf->name = name;
  for (const TensorSpec& s : specs) {
    dtypes.push_back(s.dtype);
    shapes.push_back(s.shape);
    add_input(*cf, s);
  }
  check_ops(mg.graph_def().library(), name, where);
  cf->graph = import_function(mg.graph_def().library(), name, dtypes, shapes, {}, budget, resources);
  std::vector<graph::Output> all = cf->graph->outputs;
  cf->graph->outputs.clear();
  for (size_t i = 0; i < all.size(); ++i) add_output(*cf, all[i], "output_" + std::to_string(i));
  cf->compile(detail::default_optimizer_options());
  return cf;
}

// The object graph for LoadedModel::objects(), loading every tf.function's traces on the way.
void load_objects(const tensorflow::MetaGraphDef& mg, Variables& variables, NodeBudget& budget,
                  detail::LoadedModelImpl& model) {
  const tensorflow::SavedObjectGraph& graph = mg.object_graph_def();
  nlohmann::json nodes = nlohmann::json::array();
  for (int id = 0; id < graph.nodes_size(); ++id) {
    const tensorflow::SavedObject& o = graph.nodes(id);
    const std::string where = "object " + std::to_string(id);
    nlohmann::json n = {{"children", nlohmann::json::array()}};
    for (const auto& c : o.children()) n["children"].push_back(nlohmann::json::array({c.local_name(), c.node_id()}));
    if (o.has_user_object()) {
      n["kind"] = o.user_object().identifier() == "signature_map" ? "signatures" : "object";
      n["identifier"] = o.user_object().identifier();
    } else if (o.has_variable()) {
      n["kind"] = "variable";
      try {
        n["variable"] = variables.get(id, nullptr, where)->resource_name();
        n["name"] = o.variable().name();  // the Python variable's name when it was saved
        n["trainable"] = o.variable().trainable();
      } catch (const Error&) {
        n["kind"] = "other";  // declared but not saved (TensorFlow's non-restored slots)
      }
    } else if (o.has_function()) {
      n["kind"] = "function";
      nlohmann::json args = nlohmann::json::array(), defaults = nullptr;
      const auto spec = io::structure_to_json(o.function().function_spec().fullargspec(), where);
      if (spec.contains("named_tuple"))
        for (const auto& pair : spec["named_tuple"][1]) {
          if (pair[0] == "args" && pair[1].contains("list"))
            for (const auto& a : pair[1]["list"])
              if (a.contains("string")) args.push_back(a["string"]);
          if (pair[0] == "defaults") defaults = pair[1];
        }
      if (o.function().function_spec().is_method() && !args.empty()) args.erase(args.begin());  // self
      n["args"] = args;
      n["defaults"] = defaults;
      n["traces"] = nlohmann::json::array();
      for (const std::string& name : o.function().concrete_functions()) {
        auto saved = graph.concrete_functions().find(name);
        if (saved == graph.concrete_functions().end())
          throw InvalidArgumentError(where + ": function '" + name +
                                     "' is not in the object graph's concrete functions");
        n["traces"].push_back({{"function", name},
                               {"inputs", io::structure_to_json(saved->second.canonicalized_input_signature(), where)},
                               {"outputs", io::structure_to_json(saved->second.output_signature(), where)}});
        if (model.functions.count(name) || model.function_errors.count(name)) continue;
        try {
          model.functions[name] = load_trace(mg, name, saved->second, variables, budget);
        } catch (const UnimplementedError& e) {
          model.function_errors[name] = e.what();  // raised when it is called: the rest still loads
        }
      }
    } else {
      n["kind"] = "other";
    }
    nodes.push_back(std::move(n));
  }
  // Names in a hostile file need not be UTF-8: such bytes become U+FFFD rather than an error.
  model.objects = nlohmann::json{{"nodes", nodes}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Every node id the object graph holds names one of its nodes (TensorFlow's C API once
// indexed them unchecked).
void check_object_graph(const tensorflow::SavedObjectGraph& g, const std::string& dir) {
  const int n = g.nodes_size();
  auto check = [&](int64_t id, const std::string& what) {
    if (id < 0 || id >= n)
      throw InvalidArgumentError(dir + ": the object graph's " + what + " names node " + std::to_string(id) +
                                 "; it has " + std::to_string(n) + " nodes");
  };
  for (int i = 0; i < n; ++i)
    for (const auto& child : g.nodes(i).children())
      check(child.node_id(), "node " + std::to_string(i) + " child '" + child.local_name() + "'");
  for (const auto& [name, f] : g.concrete_functions())
    for (int id : f.bound_inputs()) check(id, "function '" + name + "' bound input");
}

}  // namespace

bool is_tf_saved_model(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/saved_model.pb", ec);
}

namespace {

// saved_model.pb parsed: the one meta graph TensorFlow 2 writes.
tensorflow::SavedModel parse_saved_model(const std::string& bytes, const std::string& dir) {
  tensorflow::SavedModel sm;
  if (bytes.size() > kMaxProtoBytes || !sm.ParseFromString(bytes))
    throw DataLossError(dir + "/saved_model.pb is not a valid SavedModel");
  if (sm.meta_graphs_size() != 1)
    throw UnimplementedError(dir + ": kiln reads SavedModels with one meta graph; this one has " +
                             std::to_string(sm.meta_graphs_size()));
  return sm;
}

LoadedModel load_model(const std::string& saved_model_pb, const std::string& dir,
                       std::function<CheckpointReader()> open_checkpoint, const LoadOptions& options) {
  const tensorflow::SavedModel sm = parse_saved_model(saved_model_pb, dir);
  const tensorflow::MetaGraphDef& mg = sm.meta_graphs(0);
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& nd : mg.graph_def().node())
    if (!nodes.emplace(nd.name(), &nd).second)
      throw InvalidArgumentError(dir + ": the graph has two nodes named '" + nd.name() + "'");
  check_object_graph(mg.object_graph_def(), dir);
  auto model = std::make_shared<detail::LoadedModelImpl>();
  // The model's limits: its variables are charged to its budget as its calls' tensors are.
  if (options.memory_limit_bytes > 0) model->limits.shared_memory = MemoryBudget(options.memory_limit_bytes);
  model->limits.timeout = options.call_timeout;
  std::optional<RunLimitsScope> loading;
  if (model->limits.shared_memory) loading.emplace(RunLimits{.shared_memory = model->limits.shared_memory});
  Variables variables(std::move(open_checkpoint), mg.object_graph_def());
  NodeBudget budget{.max_nodes = options.max_nodes};
  std::vector<std::string> names;
  for (const auto& kv : mg.signature_def()) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name.rfind("__", 0) == 0) continue;  // __saved_model_init_op and the like: not callable
    model->signatures.emplace(name, load_signature(mg, name, mg.signature_def().at(name), nodes, variables, budget));
  }
  load_objects(mg, variables, budget, *model);
  model->variables = variables.by_name();
  return LoadedModel(model);
}

}  // namespace

SavedModelInfo inspect_tf_saved_model(const std::string& dir) {
  const tensorflow::SavedModel sm = parse_saved_model(read_file(dir + "/saved_model.pb", kMaxProtoBytes), dir);
  const tensorflow::MetaGraphDef& mg = sm.meta_graphs(0);
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& nd : mg.graph_def().node()) nodes.emplace(nd.name(), &nd);
  SavedModelInfo info;
  std::vector<std::string> names;
  for (const auto& kv : mg.signature_def()) names.push_back(kv.first);
  std::sort(names.begin(), names.end());
  auto specs = [&](const google::protobuf::Map<std::string, tensorflow::TensorInfo>& m, const std::string& where) {
    std::vector<TensorSpec> out;
    for (const auto& [key, t] : m) {
      DType dtype{};
      const bool known = kiln_dtype_of(t.dtype(), &dtype);
      out.push_back(TensorSpec{
          .shape = known ? shape_from_proto(t.tensor_shape(), where) : TensorShape(), .dtype = dtype, .name = key});
    }
    std::sort(out.begin(), out.end(), [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
    return out;
  };
  for (const std::string& name : names) {
    if (name.rfind("__", 0) == 0) continue;
    const tensorflow::SignatureDef& sig = mg.signature_def().at(name);
    const std::string where = "signature '" + name + "'";
    SavedModelInfo::Signature s{
        .name = name, .inputs = specs(sig.inputs(), where), .outputs = specs(sig.outputs(), where)};
    std::set<std::string> functions;  // what its outputs' call nodes call
    for (const auto& [key, t] : sig.outputs()) {
      auto it = nodes.find(tensor_name(t.name(), where).first);
      if (it == nodes.end()) continue;
      auto f = it->second->attr().find("f");
      if (f != it->second->attr().end() && f->second.value_case() == tensorflow::AttrValue::kFunc)
        functions.insert(f->second.func().name());
    }
    std::map<std::string, std::set<std::string>> missing;
    for (const std::string& f : functions)
      for (auto& [op, in] : missing_ops(mg.graph_def().library(), f)) missing[op].insert(in.begin(), in.end());
    s.missing_ops = missing_list(missing);
    info.signatures.push_back(std::move(s));
  }
  return info;
}

LoadedModel load_tf_saved_model(const std::string& dir, const LoadOptions& options) {
  return load_model(
      read_file(dir + "/saved_model.pb", kMaxProtoBytes), dir,
      [dir] { return CheckpointReader(dir + "/variables/variables"); }, options);
}

LoadedModel load_from_files(const std::map<std::string, std::string>& files, const LoadOptions& options) {
  auto file = [&](const std::string& name) -> const std::string& {
    auto it = files.find(name);
    if (it == files.end()) throw NotFoundError("the saved model has no " + name);
    return it->second;
  };
  return load_model(
      file(kSavedModelFile), "(in memory)",
      [&] { return CheckpointReader::from_bytes(file(kVariablesIndexFile), file(kVariablesDataFile)); }, options);
}

}  // namespace kiln::io
