// kiln::save: a SavedModel as TensorFlow 2 writes one, so tf.saved_model.load, saved_model_cli
// and TensorFlow Serving read it, and kiln::load reads it back through the same reader as a
// TensorFlow-written model (tf_saved_model.cc).
//
// Layout: saved_model.pb holds one MetaGraphDef ("serve") whose library has a function per
// signature (its tensor arguments, then each variable it uses as a DT_RESOURCE argument) and
// the If/While bodies they reach; the main graph calls each one from a StatefulPartitionedCall
// fed by Placeholders and VarHandleOps, which the signature_defs name. The object graph is
// root -> {variables..., "signatures" -> {name -> signature function}}, and each signature's
// SavedConcreteFunction binds its resource arguments to the variable nodes. variables/ is a
// TensorBundle whose object graph has the same node ids, each variable's value under
// "<child name>/.ATTRIBUTES/VARIABLE_VALUE".
//
// With SavedObjects (a tf.Module saved by the front end), the given tree comes first, node for
// node: plain objects, variables (their checkpoint keys are their paths from the root) and
// tf.functions, whose traces are library functions like the signatures', each with a
// SavedConcreteFunction holding its input and output structures, as TensorFlow writes them.
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "graph.pb.h"
#include "graph/graph_def.h"
#include "io/bundle.h"
#include "io/files.h"
#include "io/saved_model.h"
#include "io/structured_value.h"
#include "saved_model.pb.h"  // generated from src/io/proto/saved_model.proto

namespace kiln {
namespace {

constexpr const char* kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr const char* kValueSuffix = "/.ATTRIBUTES/VARIABLE_VALUE";

bool valid_signature_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

// A name made of letters, digits and '_' (object graph child names become checkpoint keys,
// where TensorFlow escapes '/' and '.'), starting with a letter.
std::string identifier(const std::string& s, const char* fallback) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty()) return fallback;
  if (!std::isalpha(static_cast<unsigned char>(out[0]))) out = fallback + ("_" + out);
  return out;
}

std::string unique(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

// A copy of the traced graph whose captured constants are Consts, so the function's only
// extra arguments are the variables.
std::unique_ptr<graph::Graph> standalone_graph(const detail::ConcreteImpl& cf) {
  auto g = cf.graph->clone();
  const size_t num_args = cf.inputs.size();
  std::map<std::pair<const graph::Node*, int>, graph::Output> replace;
  for (size_t k = 0; k < cf.captures.size(); ++k) {
    graph::Node* ph = g->inputs[num_args + k];
    graph::Node* c = g->add_const(cf.captures[k], ph->name + "_value");
    replace[{ph, 0}] = graph::Output{c, 0};
  }
  g->replace_uses(replace);
  g->inputs.resize(num_args);
  g->compact_order(true);
  return g;
}

void set_shape(const TensorShape& s, tensorflow::TensorShapeProto* p) {
  if (s.rank() < 0) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : s.dims()) p->add_dim()->set_size(d);
}

tensorflow::DataType proto_dtype(DType d) { return static_cast<tensorflow::DataType>(graph::dtype_to_proto(d)); }

void tensor_spec(const TensorSpec& s, tensorflow::StructuredValue* v) {
  auto* spec = v->mutable_tensor_spec_value();
  spec->set_name(s.name);
  set_shape(s.shape, spec->mutable_shape());
  spec->set_dtype(proto_dtype(s.dtype));
}

void user_object(tensorflow::SavedObject* o, const char* identifier) {
  auto* u = o->mutable_user_object();
  u->set_identifier(identifier);
  u->mutable_version()->set_producer(1);
  u->mutable_version()->set_min_consumer(1);
}

// TensorFlow calls a signature with its keyword arguments flattened as a dict, in sorted key
// order: the function's tensor arguments (its first ones) are put in that order (`order[i]`: the
// argument that goes i-th). The body names arguments, not positions, so only the signature's
// list and the shapes attr move.
void reorder_tensor_args(tensorflow::GraphDef& def, const std::string& function, const std::vector<size_t>& order) {
  for (auto& f : *def.mutable_library()->mutable_function()) {
    if (f.signature().name() != function) continue;
    auto* args = f.mutable_signature()->mutable_input_arg();
    auto* shapes = (*f.mutable_attr())["_input_shapes"].mutable_list()->mutable_shape();
    const auto old_args = *args;
    const auto old_shapes = *shapes;
    for (size_t i = 0; i < order.size(); ++i) {
      *args->Mutable(static_cast<int>(i)) = old_args.Get(static_cast<int>(order[i]));
      *shapes->Mutable(static_cast<int>(i)) = old_shapes.Get(static_cast<int>(order[i]));
    }
  }
}

// One trace of a saved tf.function: its library function and the variables it takes.
struct SavedTrace {
  std::string function;
  std::vector<const Resource*> variables = {};
  const nlohmann::json* inputs = nullptr;
  const nlohmann::json* outputs = nullptr;
};

// A name part of a checkpoint key, escaped as TensorFlow escapes it ('.' -> "..", '/' -> ".S").
std::string escaped(const std::string& name) {
  std::string out;
  for (char ch : name) out += ch == '.' ? ".." : ch == '/' ? ".S" : std::string(1, ch);
  return out;
}

// FunctionSpec.fullargspec: inspect.getfullargspec's named tuple for positional `args`.
// `defaults`: a structure (a tuple of the last arguments' defaults) or null.
void full_arg_spec(const nlohmann::json& args, const nlohmann::json& defaults, tensorflow::StructuredValue* out,
                   const std::string& where) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& a : args) names.push_back({{"string", a.get<std::string>()}});
  using J = nlohmann::json;
  auto pair = [](const char* key, J value) { return J::array({key, std::move(value)}); };
  const J fields = J::array({pair("args", {{"list", names}}), pair("varargs", nullptr), pair("varkw", nullptr),
                             pair("defaults", defaults), pair("kwonlyargs", {{"list", J::array()}}),
                             pair("kwonlydefaults", nullptr), pair("annotations", {{"dict", J::object()}})});
  J spec = J::object();
  spec["named_tuple"] = J::array({"FullArgSpec", fields});
  io::structure_from_json(spec, out, where);
}

struct SavedSignature {
  std::string name, function;
  std::vector<std::string> keywords = {};  // the inputs in the traced function's order
  std::vector<TensorSpec> inputs = {}, outputs = {};
  std::vector<const Resource*> variables = {};  // the function's trailing resource arguments
};

// A function node of the saver: file_prefix (a string) and one handle per variable in,
// the prefix out once `body` ran (its nodes are the control outputs).
struct SaverFunction {
  tensorflow::FunctionDef& f;
  tensorflow::NodeDef done;
  SaverFunction(tensorflow::GraphDef& def, const std::string& name, size_t num_variables)
      : f(*def.mutable_library()->add_function()) {
    tensorflow::OpDef& sig = *f.mutable_signature();
    sig.set_name(name);
    sig.set_is_stateful(true);
    auto* prefix = sig.add_input_arg();
    prefix->set_name("file_prefix");
    prefix->set_type(tensorflow::DT_STRING);
    for (size_t i = 0; i < num_variables; ++i) {
      auto* handle = sig.add_input_arg();
      handle->set_name(variable(i));
      handle->set_type(tensorflow::DT_RESOURCE);
    }
    done.set_name("Identity");
    done.set_op("Identity");
    done.add_input("file_prefix");
    (*done.mutable_attr())["T"].set_type(tensorflow::DT_STRING);
  }
  static std::string variable(size_t i) { return "variable_" + std::to_string(i); }
  tensorflow::NodeDef& node(const std::string& name, const char* op) {
    tensorflow::NodeDef& n = *f.add_node_def();
    n.set_name(name);
    n.set_op(op);
    return n;
  }
  // A string Const: a vector of `values`, or a scalar when `scalar` (one value).
  void strings(const std::string& name, const std::vector<std::string>& values, bool scalar = false) {
    tensorflow::NodeDef& c = node(name, "Const");
    (*c.mutable_attr())["dtype"].set_type(tensorflow::DT_STRING);
    auto& t = *(*c.mutable_attr())["value"].mutable_tensor();
    t.set_dtype(tensorflow::DT_STRING);
    if (!scalar) t.mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
    for (const std::string& v : values) t.add_string_val(v);
  }
  void effect(const std::string& node_name) {  // runs before the prefix is returned
    done.add_input("^" + node_name);
    f.mutable_signature()->add_control_output(node_name);
    (*f.mutable_control_ret())[node_name] = node_name;
  }
  void finish() {
    *f.add_node_def() = std::move(done);
    auto* out = f.mutable_signature()->add_output_arg();
    out->set_name("identity");
    out->set_type(tensorflow::DT_STRING);
    (*f.mutable_ret())["identity"] = "Identity:output:0";
  }
};

// What TensorFlow 1 loaders use (tf.compat.v1.saved_model.load, saved_model_cli run, TF
// Serving): a saver_def naming the call that restores every variable, fed the variables'
// path prefix, and the tensor that saves them (SaveV2 to one shard, with the object graph,
// as a TensorFlow 2 checkpoint). kiln's own loader never runs either: it reads the
// checkpoint itself.
void add_saver(tensorflow::MetaGraphDef& mg, const std::vector<std::pair<std::string, Tensor>>& values,
               const std::string& object_graph, const std::vector<std::string>& handles,
               std::set<std::string>& graph_names) {
  tensorflow::GraphDef& def = *mg.mutable_graph_def();
  std::vector<std::string> keys;
  for (const auto& kv : values) keys.push_back(kv.first);

  SaverFunction restore(def, "__inference__traced_restore_kiln", values.size());
  restore.strings("tensor_names", keys);
  restore.strings("shape_and_slices", std::vector<std::string>(values.size()));
  tensorflow::NodeDef& read = restore.node("RestoreV2", "RestoreV2");
  for (const char* in : {"file_prefix", "tensor_names:output:0", "shape_and_slices:output:0"}) read.add_input(in);
  auto& read_types = *(*read.mutable_attr())["dtypes"].mutable_list();
  for (size_t i = 0; i < values.size(); ++i) {
    const tensorflow::DataType dtype = proto_dtype(values[i].second.dtype());
    read_types.add_type(dtype);
    tensorflow::NodeDef& assign = restore.node("AssignVariableOp_" + std::to_string(i), "AssignVariableOp");
    assign.add_input(SaverFunction::variable(i));
    assign.add_input("RestoreV2:tensors:" + std::to_string(i));
    (*assign.mutable_attr())["dtype"].set_type(dtype);
    restore.effect(assign.name());
  }
  restore.finish();

  SaverFunction save(def, "__inference__traced_save_kiln", values.size());
  keys.push_back(kObjectGraphKey);
  save.strings("tensor_names", keys);
  save.strings("shape_and_slices", std::vector<std::string>(keys.size()));
  save.strings("object_graph", {object_graph}, /*scalar=*/true);
  tensorflow::NodeDef write;
  write.set_name("SaveV2");
  write.set_op("SaveV2");
  for (const char* in : {"file_prefix", "tensor_names:output:0", "shape_and_slices:output:0"}) write.add_input(in);
  auto& write_types = *(*write.mutable_attr())["dtypes"].mutable_list();
  for (size_t i = 0; i < values.size(); ++i) {
    const tensorflow::DataType dtype = proto_dtype(values[i].second.dtype());
    tensorflow::NodeDef& value = save.node("ReadVariableOp_" + std::to_string(i), "ReadVariableOp");
    value.add_input(SaverFunction::variable(i));
    (*value.mutable_attr())["dtype"].set_type(dtype);
    write.add_input(value.name() + ":value:0");
    write_types.add_type(dtype);
  }
  write.add_input("object_graph:output:0");
  write_types.add_type(tensorflow::DT_STRING);
  *save.f.add_node_def() = std::move(write);
  save.effect("SaveV2");
  save.finish();

  const std::string filename = unique("saver_filename", graph_names);
  tensorflow::NodeDef& ph = *def.add_node();
  ph.set_name(filename);
  ph.set_op("Placeholder");
  (*ph.mutable_attr())["dtype"].set_type(tensorflow::DT_STRING);
  (*ph.mutable_attr())["shape"].mutable_shape();
  auto call = [&](const SaverFunction& fn) {
    const std::string call_name = unique("StatefulPartitionedCall", graph_names);
    tensorflow::NodeDef& c = *def.add_node();
    c.set_name(call_name);
    c.set_op("StatefulPartitionedCall");
    c.add_input(filename);
    auto& ca = *c.mutable_attr();
    ca["Tin"].mutable_list()->add_type(tensorflow::DT_STRING);
    for (const std::string& h : handles) {
      c.add_input(h);
      ca["Tin"].mutable_list()->add_type(tensorflow::DT_RESOURCE);
    }
    ca["Tout"].mutable_list()->add_type(tensorflow::DT_STRING);
    ca["f"].mutable_func()->set_name(fn.f.signature().name());
    ca["config"].set_s("");
    ca["config_proto"].set_s("");
    ca["executor_type"].set_s("");
    return call_name;
  };
  tensorflow::SaverDef& saver = *mg.mutable_saver_def();
  saver.set_filename_tensor_name(filename + ":0");
  saver.set_save_tensor_name(call(save) + ":0");
  saver.set_restore_op_name(call(restore));
  saver.set_version(tensorflow::SaverDef::V2);
}

}  // namespace

void io::write_saved_model(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
                           const std::map<std::string, std::vector<std::string>>& output_names,
                           const ObjectsToSave* given) {
  try {
    write_saved_model_checked(dir, std::move(signatures), output_names, given);
  } catch (const nlohmann::json::exception& e) {  // an object graph of the wrong shape
    throw InvalidArgumentError(std::string("save: the object graph: ") + e.what());
  }
}

void io::write_saved_model_checked(const std::string& dir, std::map<std::string, ConcreteFunction> signatures,
                                   const std::map<std::string, std::vector<std::string>>& output_names,
                                   const ObjectsToSave* given) {
  for (const auto& [sig, names] : output_names)
    if (!signatures.count(sig))
      throw InvalidArgumentError("save: output names are given for '" + sig + "', which is not a signature");
  if (signatures.empty() && !given) throw InvalidArgumentError("save: no signatures to save");
  nlohmann::json tree = {{"nodes", {{{"kind", "object"}}}}};
  if (given) {
    tree = nlohmann::json::parse(given->graph, nullptr, /*allow_exceptions=*/false);
    if (!tree.is_object() || !tree.contains("nodes") || !tree["nodes"].is_array() || tree["nodes"].empty() ||
        !tree["nodes"][0].is_object() || tree["nodes"][0].value("kind", "") != "object")
      throw InvalidArgumentError("save: the object graph must be JSON {\"nodes\": [root object, ...]}");
  }
  const nlohmann::json& tree_nodes = tree["nodes"];
  tensorflow::SavedModel model;
  model.set_saved_model_schema_version(1);
  tensorflow::MetaGraphDef& mg = *model.add_meta_graphs();
  mg.mutable_meta_info_def()->add_tags("serve");
  tensorflow::GraphDef& def = *mg.mutable_graph_def();

  // The functions, each variable an argument.
  std::vector<SavedSignature> saved;
  int k = 0;
  for (const auto& [sig, cf] : signatures) {
    if (!valid_signature_name(sig))
      throw InvalidArgumentError("save: signature name '" + sig + "' must be 1-128 letters, digits, '_', '-' or '.'");
    if (!cf.impl()) throw InvalidArgumentError("save: signature '" + sig + "' is an empty ConcreteFunction");
    const detail::ConcreteImpl& impl = *cf.impl();
    SavedSignature s{.name = sig, .function = "__inference_" + sig + "_" + std::to_string(k)};
    graph::ExportOptions options;
    options.function_prefix = "s" + std::to_string(k) + "_";
    options.resource_args = &s.variables;
    graph::write_function_library(*standalone_graph(impl), s.function, &def, options);
    std::set<std::string> keys;
    for (const TensorSpec& in : impl.inputs) {
      if (!keys.insert(in.name).second)
        throw InvalidArgumentError("save: signature '" + sig + "' has two inputs named '" + in.name + "'");
      s.keywords.push_back(in.name);
      s.inputs.push_back(in);
    }
    std::vector<size_t> order(s.inputs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.keywords[a] < s.keywords[b]; });
    reorder_tensor_args(def, s.function, order);
    std::vector<TensorSpec> sorted;
    for (size_t i : order) sorted.push_back(s.inputs[i]);
    s.inputs = std::move(sorted);
    const auto named = output_names.find(sig);
    if (named != output_names.end()) {
      std::set<std::string> unique_names(named->second.begin(), named->second.end());
      if (named->second.size() != impl.outputs.size() || unique_names.size() != impl.outputs.size() ||
          unique_names.count(""))
        throw InvalidArgumentError("save: signature '" + sig + "' has " + std::to_string(impl.outputs.size()) +
                                   " outputs; its output names must be as many, unique and not empty");
    }
    for (size_t i = 0; i < impl.outputs.size(); ++i)
      s.outputs.push_back(
          TensorSpec{.shape = impl.outputs[i].shape,
                     .dtype = impl.outputs[i].dtype,
                     .name = named != output_names.end() ? named->second[i] : "output_" + std::to_string(i)});
    saved.push_back(std::move(s));
    ++k;
  }

  // The tf.functions' traces, by node of the tree.
  std::map<size_t, std::vector<SavedTrace>> traces;
  try {
    for (size_t node = 0; node < tree_nodes.size(); ++node) {
      const nlohmann::json& n = tree_nodes[node];
      if (n.value("kind", "") != "function") continue;
      std::string attr = "function";
      for (const auto& parent : tree_nodes)
        for (const auto& child : parent.value("children", nlohmann::json::array()))
          if (child.at(1).get<size_t>() == node) attr = identifier(child.at(0).get<std::string>(), "function");
      for (const auto& t : n.at("traces")) {
        const size_t index = t.at("function").get<size_t>();
        if (!given || index >= given->functions.size() || !given->functions[index].impl())
          throw InvalidArgumentError("save: a trace names function " + std::to_string(index) + ", which is not given");
        const detail::ConcreteImpl& impl = *given->functions[index].impl();
        SavedTrace trace{.function = "__inference_" + attr + "_" + std::to_string(k),
                         .inputs = &t.at("inputs"),
                         .outputs = &t.at("outputs")};
        graph::ExportOptions options;
        options.function_prefix = "s" + std::to_string(k) + "_";
        options.resource_args = &trace.variables;
        graph::write_function_library(*standalone_graph(impl), trace.function, &def, options);
        traces[node].push_back(std::move(trace));
        ++k;
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgumentError(std::string("save: the object graph: ") + e.what());
  }

  // The objects: root, the variables (in first-use order), the signature map, the signatures.
  tensorflow::SavedObjectGraph& objects = *mg.mutable_object_graph_def();
  tensorflow::TrackableObjectGraph checkpoint_graph;
  auto add_node = [&]() -> tensorflow::SavedObject* {
    checkpoint_graph.add_nodes();
    return objects.add_nodes();
  };
  auto add_child = [&](int parent, int child, const std::string& name) {
    for (auto* children : {objects.mutable_nodes(parent)->mutable_children(),
                           checkpoint_graph.mutable_nodes(parent)->mutable_children()}) {
      auto* ref = children->Add();
      ref->set_node_id(child);
      ref->set_local_name(name);
    }
  };
  // Child names taken under each object; the objects made for name prefixes ("dense/").
  std::map<int, std::set<std::string>> children{{0, {"signatures"}}};
  std::map<std::pair<int, std::string>, std::pair<int, std::string>> containers;  // (parent, part) -> (node, name)
  std::map<const Resource*, int> variable_node;
  std::map<const Resource*, std::string> handle_node;  // VarHandleOp in the main graph
  std::vector<const Resource*> variable_order;         // as their values are saved
  std::vector<std::pair<std::string, Tensor>> values;
  std::set<std::string> graph_names;
  // A variable's node (made by the caller at `id`), its checkpoint entry at `path` and its
  // handle in the main graph.
  auto fill_variable = [&](int id, const Resource* r, const std::string& path) {
    auto* v = objects.mutable_nodes(id)->mutable_variable();
    v->set_dtype(proto_dtype(r->dtype()));
    set_shape(r->shape(), v->mutable_shape());
    v->set_trainable(r->trainable);
    v->set_name(r->resource_name().empty() ? path : r->resource_name());
    auto* attr = checkpoint_graph.mutable_nodes(id)->add_attributes();
    attr->set_name("VARIABLE_VALUE");
    attr->set_full_name(v->name());
    attr->set_checkpoint_key(path + kValueSuffix);
    values.emplace_back(attr->checkpoint_key(), r->snapshot());
    variable_node[r] = id;
    variable_order.push_back(r);
    const std::string handle = unique(identifier(path, "variable"), graph_names);
    handle_node[r] = handle;
    tensorflow::NodeDef* h = def.add_node();
    h->set_name(handle);
    h->set_op("VarHandleOp");
    auto& a = *h->mutable_attr();
    a["dtype"].set_type(proto_dtype(r->dtype()));
    set_shape(r->shape(), a["shape"].mutable_shape());
    a["shared_name"].set_s(v->name());
    a["container"].set_s("");
  };

  // The given tree: node i of it is node i here (0 the root).
  std::vector<std::string> tree_paths(tree_nodes.size());
  std::vector<bool> reached(tree_nodes.size(), false);
  reached[0] = true;
  for (size_t node = 0; node < tree_nodes.size(); ++node) {
    const std::string kind = tree_nodes[node].value("kind", "");
    tensorflow::SavedObject* o = add_node();
    if (kind == "object") {
      // TensorFlow's identifiers for lists and dicts of trackables, which its loader rebuilds as such
      const std::string id = tree_nodes[node].value("identifier", "_generic_user_object");
      if (id != "_generic_user_object" && id != "trackable_list_wrapper" && id != "trackable_dict_wrapper")
        throw InvalidArgumentError("save: object " + std::to_string(node) + " has unknown identifier '" + id + "'");
      user_object(o, id.c_str());
    } else if (kind != "variable" && kind != "function")
      throw InvalidArgumentError("save: object " + std::to_string(node) + " has unknown kind '" + kind + "'");
  }
  for (size_t node = 0; node < tree_nodes.size(); ++node) {  // parents before children: paths
    if (!reached[node])
      throw InvalidArgumentError("save: object " + std::to_string(node) + " is not a child of an earlier object");
    for (const auto& child : tree_nodes[node].value("children", nlohmann::json::array())) {
      const std::string name = child.at(0).get<std::string>();
      const size_t id = child.at(1).get<size_t>();
      if (id >= tree_nodes.size() || id == 0)
        throw InvalidArgumentError("save: object " + std::to_string(node) + "'s child '" + name + "' is not an object");
      if (name.empty() || !children[static_cast<int>(node)].insert(name).second) continue;  // "signatures" is taken
      add_child(static_cast<int>(node), static_cast<int>(id), name);
      if (!reached[id]) {
        reached[id] = true;
        tree_paths[id] = (node ? tree_paths[node] + "/" : "") + escaped(name);
      }
    }
  }
  for (size_t node = 0; node < tree_nodes.size(); ++node) {
    if (tree_nodes[node].value("kind", "") != "variable") continue;
    const size_t index = tree_nodes[node].at("variable").get<size_t>();
    if (!given || index >= given->variables.size() || !given->variables[index])
      throw InvalidArgumentError("save: object " + std::to_string(node) + " names a variable that is not given");
    const Resource* r = given->variables[index];
    if (variable_node.count(r)) {  // one variable under two names: TensorFlow saves it once
      throw InvalidArgumentError("save: variable '" + r->resource_name() + "' is saved twice in the object graph");
    }
    fill_variable(static_cast<int>(node), r, tree_paths[node]);
  }

  // Variables the functions use that the tree lacks: at the paths their names give.
  std::vector<const std::vector<const Resource*>*> uses;
  for (const SavedSignature& s : saved) uses.push_back(&s.variables);
  for (const auto& [node, list] : traces)
    for (const SavedTrace& t : list) uses.push_back(&t.variables);
  for (const auto* used : uses)
    for (const Resource* r : *used) {
      if (variable_node.count(r)) continue;
      // "dense/kernel" is the child "kernel" of an object "dense", as a tf.Module saves it.
      std::vector<std::string> path;
      for (size_t start = 0;;) {
        const size_t slash = r->resource_name().find('/', start);
        path.push_back(r->resource_name().substr(start, slash == std::string::npos ? slash : slash - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
      }
      int parent = 0;
      std::string prefix;
      for (size_t i = 0; i + 1 < path.size(); ++i) {
        const std::string part = identifier(path[i], "object");
        auto it = containers.find({parent, part});
        if (it == containers.end()) {
          const std::string name = unique(part, children[parent]);
          const int node = objects.nodes_size();
          user_object(add_node(), "_generic_user_object");
          add_child(parent, node, name);
          it = containers.emplace(std::make_pair(parent, part), std::make_pair(node, name)).first;
        }
        parent = it->second.first;
        prefix += it->second.second + "/";
      }
      const std::string leaf = unique(identifier(path.back(), "variable"), children[parent]);
      const int id = objects.nodes_size();
      add_node();
      add_child(parent, id, leaf);
      fill_variable(id, r, prefix + leaf);
    }
  const int signature_map = objects.nodes_size();
  user_object(add_node(), "signature_map");
  add_child(0, signature_map, "signatures");

  for (const SavedSignature& s : saved) {
    const int id = objects.nodes_size();
    auto* bare = add_node()->mutable_bare_concrete_function();
    bare->set_concrete_function_name(s.function);
    for (const std::string& keyword : s.keywords) bare->add_argument_keywords(keyword);
    add_child(signature_map, id, s.name);

    tensorflow::SavedConcreteFunction& fn = (*objects.mutable_concrete_functions())[s.function];
    for (const Resource* r : s.variables) fn.add_bound_inputs(variable_node.at(r));
    auto* args = fn.mutable_canonicalized_input_signature()->mutable_tuple_value();
    args->add_values()->mutable_tuple_value();  // no positional arguments
    auto& kwargs = *args->add_values()->mutable_dict_value()->mutable_fields();
    for (const TensorSpec& in : s.inputs) tensor_spec(in, &kwargs[in.name]);
    auto& outs = *fn.mutable_output_signature()->mutable_dict_value()->mutable_fields();
    for (const TensorSpec& out : s.outputs) tensor_spec(out, &outs[out.name]);

    // The main graph: Placeholders and handles into a call of the function.
    tensorflow::SignatureDef& sd = (*mg.mutable_signature_def())[s.name];
    sd.set_method_name("tensorflow/serving/predict");
    const std::string call_name = unique("StatefulPartitionedCall", graph_names);
    tensorflow::NodeDef call;
    call.set_name(call_name);
    call.set_op("StatefulPartitionedCall");
    auto& ca = *call.mutable_attr();
    for (const TensorSpec& in : s.inputs) {
      const std::string ph_name = unique(identifier(s.name, "signature") + "_" + in.name, graph_names);
      tensorflow::NodeDef* ph = def.add_node();
      ph->set_name(ph_name);
      ph->set_op("Placeholder");
      (*ph->mutable_attr())["dtype"].set_type(proto_dtype(in.dtype));
      set_shape(in.shape, (*ph->mutable_attr())["shape"].mutable_shape());
      call.add_input(ph_name);
      ca["Tin"].mutable_list()->add_type(proto_dtype(in.dtype));
      tensorflow::TensorInfo& info = (*sd.mutable_inputs())[in.name];
      info.set_name(ph_name + ":0");
      info.set_dtype(proto_dtype(in.dtype));
      set_shape(in.shape, info.mutable_tensor_shape());
    }
    for (const Resource* r : s.variables) {
      call.add_input(handle_node.at(r));
      ca["Tin"].mutable_list()->add_type(tensorflow::DT_RESOURCE);
    }
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      const TensorSpec& out = s.outputs[i];
      ca["Tout"].mutable_list()->add_type(proto_dtype(out.dtype));
      tensorflow::TensorInfo& info = (*sd.mutable_outputs())[out.name];
      info.set_name(call_name + ":" + std::to_string(i));
      info.set_dtype(proto_dtype(out.dtype));
      set_shape(out.shape, info.mutable_tensor_shape());
    }
    ca["Tin"].mutable_list();
    ca["Tout"].mutable_list();
    ca["f"].mutable_func()->set_name(s.function);
    ca["config"].set_s("");
    ca["config_proto"].set_s("");
    ca["executor_type"].set_s("");
    *def.add_node() = std::move(call);
  }

  // The tf.functions: their traces and how a call binds to them.
  for (const auto& [node, list] : traces) {
    const std::string where = "save: function object " + std::to_string(node);
    auto* f = objects.mutable_nodes(static_cast<int>(node))->mutable_function();
    full_arg_spec(tree_nodes[node].value("args", nlohmann::json::array()),
                  tree_nodes[node].value("defaults", nlohmann::json()),
                  f->mutable_function_spec()->mutable_fullargspec(), where);
    f->mutable_function_spec()->mutable_input_signature()->mutable_none_value();
    for (const SavedTrace& t : list) {
      f->add_concrete_functions(t.function);
      tensorflow::SavedConcreteFunction& fn = (*objects.mutable_concrete_functions())[t.function];
      for (const Resource* r : t.variables) fn.add_bound_inputs(variable_node.at(r));
      io::structure_from_json(*t.inputs, fn.mutable_canonicalized_input_signature(), where);
      io::structure_from_json(*t.outputs, fn.mutable_output_signature(), where);
    }
  }

  if (!variable_order.empty()) {
    std::vector<std::string> handles;
    for (const Resource* r : variable_order) handles.push_back(handle_node.at(r));
    add_saver(mg, values, checkpoint_graph.SerializeAsString(), handles, graph_names);
  }

  const io::BundleFiles bundle = io::build_bundle(values, {{kObjectGraphKey, checkpoint_graph.SerializeAsString()}});
  io::AtomicDirWriter out(dir);
  out.make_dir("variables");
  out.write("variables/variables.index", bundle.index);
  out.write(io::bundle_data_file("variables/variables"), bundle.data);
  out.write("saved_model.pb", model.SerializeAsString());
  out.commit();
}

}  // namespace kiln
