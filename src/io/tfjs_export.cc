// export_tfjs: a saved signature as a TensorFlow.js GraphModel (model.json + one weight
// shard). The GraphDef is written as kiln writes it, then adapted to what tfjs 4.x reads:
// variables frozen to Consts, every Const's value moved to the weights manifest under a
// name unique across the graph and its functions, control inputs dropped, each function
// output routed through its own Identity. Graphs tfjs cannot run are refused by node.
#include <google/protobuf/util/json_util.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype_table.h"
#include "core/tensor_impl.h"
#include "graph.pb.h"
#include "graph/graph_def.h"
#include "io/files.h"
#include "io/proto_values.h"
#include "io/saved_model.h"

namespace kiln {
namespace {

using NodeList = google::protobuf::RepeatedPtrField<tensorflow::NodeDef>;

// Whether TensorFlow.js 4.x implements an op: the kTfjs trait of its row.
bool tfjs_has_op(const std::string& op) {
  const ops::OpDef* def = ops::find_op(op);
  return def && def->has(ops::kTfjs);
}

tensorflow::DataType proto_dtype(DType d) { return static_cast<tensorflow::DataType>(graph::dtype_to_proto(d)); }

const char* tfjs_dtype(DType d) { return detail::dtype_info(d).tfjs_name; }

[[noreturn]] void refuse(const std::string& scope, const tensorflow::NodeDef& n, const std::string& why) {
  throw UnimplementedError("export_tfjs: node '" + n.name() + "' (" + n.op() + ")" +
                           (scope.empty() ? "" : " in function '" + scope + "'") + ": " + why);
}

void check_type(int t, const std::string& scope, const tensorflow::NodeDef& n) {
  if (t == tensorflow::DT_DOUBLE || t == tensorflow::DT_INT64)
    refuse(scope, n,
           std::string("uses ") + (t == tensorflow::DT_DOUBLE ? "float64" : "int64") +
               "; TensorFlow.js has no 64-bit types (cast to float32/int32 first)");
}

void check_attr_types(const std::string& scope, const tensorflow::NodeDef& n) {
  for (const auto& [name, a] : n.attr()) {
    if (a.value_case() == tensorflow::AttrValue::kType) check_type(a.type(), scope, n);
    if (a.value_case() == tensorflow::AttrValue::kTensor) check_type(a.tensor().dtype(), scope, n);
    if (a.value_case() == tensorflow::AttrValue::kList)
      for (int t : a.list().type()) check_type(t, scope, n);
  }
}

void check_arg_type(const tensorflow::OpDef::ArgDef& a, const std::string& function) {
  if (a.type() == tensorflow::DT_DOUBLE || a.type() == tensorflow::DT_INT64)
    throw UnimplementedError("export_tfjs: argument '" + a.name() + "' of function '" + function +
                             "' is 64-bit; TensorFlow.js has no 64-bit types (cast to float32/int32 first)");
}

std::string node_part(const std::string& input) { return input.substr(0, input.find(':')); }

class TfjsWriter {
 public:
  TfjsWriter(tensorflow::GraphDef& def, const std::map<std::string, Tensor>& vars) : def_(def), vars_(vars) {
    for (const auto& n : def_.node())
      if (n.op() != "Const") used_.insert(n.name());
    for (const auto& f : def_.library().function()) {
      for (const auto& a : f.signature().input_arg()) used_.insert(a.name());
      for (const auto& n : f.node_def())
        if (n.op() != "Const") used_.insert(n.name());
    }
  }

  void run() {
    adapt(def_.mutable_node(), "", nullptr);
    for (auto& f : *def_.mutable_library()->mutable_function()) {
      for (const auto& a : f.signature().input_arg()) check_arg_type(a, f.signature().name());
      for (const auto& a : f.signature().output_arg()) check_arg_type(a, f.signature().name());
      adapt(f.mutable_node_def(), f.signature().name(), f.mutable_ret());
      route_outputs(f);
    }
  }

  nlohmann::json weights = nlohmann::json::array();
  std::string data;

 private:
  tensorflow::GraphDef& def_;
  const std::map<std::string, Tensor>& vars_;
  std::unordered_set<std::string> used_;  // node and weight names across all scopes

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

  // Moves a value into the weights under `name`; the node keeps only dtype and shape.
  void add_weight(tensorflow::NodeDef& n, const std::string& scope, const Tensor& value) {
    const auto& impl = detail::concrete(value);
    const char* dt = tfjs_dtype(impl.dtype);
    if (!dt) refuse(scope, n, "holds a 64-bit value; TensorFlow.js has no 64-bit types");
    weights.push_back(
        {{"name", n.name()}, {"shape", std::vector<int64_t>(impl.dims.begin(), impl.dims.end())}, {"dtype", dt}});
    data.append(static_cast<const char*>(impl.data), impl.nbytes());
    auto& attrs = *n.mutable_attr();
    tensorflow::AttrValue v;
    v.mutable_tensor()->set_dtype(static_cast<tensorflow::DataType>(attrs["dtype"].type()));
    for (int64_t d : impl.dims) v.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(d);
    attrs["value"] = v;
  }

  void adapt(NodeList* nodes, const std::string& scope, google::protobuf::Map<std::string, std::string>* ret) {
    std::unordered_map<std::string, std::string> handles;  // VarHandleOp name -> variable
    std::unordered_map<std::string, std::string> renamed;
    NodeList kept;
    for (auto& n : *nodes) {
      if (n.op() == "VarHandleOp") {
        handles[n.name()] = n.attr().at("shared_name").s();
        continue;
      }
      // Any op given a variable other than a read writes it (assignments, optimizer updates).
      if (n.op() != "ReadVariableOp")
        for (const auto& in : n.input())
          if (handles.count(node_part(in)))
            refuse(scope, n,
                   "writes a variable; TensorFlow.js graph models have no variables (export a function that only reads "
                   "them)");
      if (!tfjs_has_op(n.op()) && n.op() != "ReadVariableOp") refuse(scope, n, "TensorFlow.js has no such op");
      check_attr_types(scope, n);
      // Control inputs would be read as data inputs by tfjs; stateful order no longer matters
      // once variables are frozen.
      google::protobuf::RepeatedPtrField<std::string> inputs;
      for (const auto& in : n.input())
        if (in.empty() || in[0] != '^') *inputs.Add() = in;
      n.mutable_input()->Swap(&inputs);
      Tensor value;
      if (n.op() == "ReadVariableOp") {  // frozen: a Const holding the variable's value
        value = vars_.at(handles.at(node_part(n.input(0))));
        n.set_op("Const");
        n.clear_input();
        n.mutable_attr()->clear();
        (*n.mutable_attr())["dtype"].set_type(proto_dtype(value.dtype()));
      } else if (n.op() == "Const") {
        value = io::tensor_from_proto(n.attr().at("value").tensor(), "node '" + n.name() + "'");
      }
      if (value.defined()) {
        // Weight names are one namespace across the graph and every function, and no
        // other node may carry one.
        const std::string name = fresh(scope.empty() ? n.name() : scope + "/" + n.name());
        renamed[n.name()] = name;
        n.set_name(name);
        add_weight(n, scope, value);
      }
      *kept.Add() = std::move(n);
    }
    nodes->Swap(&kept);
    auto rename = [&](std::string& in) {
      auto it = renamed.find(node_part(in));
      if (it != renamed.end()) in = it->second + in.substr(node_part(in).size());
    };
    for (auto& n : *nodes)
      for (auto& in : *n.mutable_input()) rename(in);
    if (ret)
      for (auto& [k, v] : *ret) rename(v);
  }

  // tfjs takes a function's outputs by node: two outputs of one node would both get the
  // last one. Each output gets an Identity of its own.
  void route_outputs(tensorflow::FunctionDef& f) {
    for (const auto& arg : f.signature().output_arg()) {
      std::string& src = (*f.mutable_ret())[arg.name()];
      tensorflow::NodeDef* id = f.add_node_def();
      id->set_name(fresh(arg.name() + "_ret"));
      id->set_op("Identity");
      id->add_input(src);
      (*id->mutable_attr())["T"].set_type(arg.type());
      src = id->name() + ":output:0";
    }
  }
};

}  // namespace

void io::write_tfjs(const detail::ConcreteImpl& impl, const std::map<std::string, Tensor>& vars,
                    const std::string& out_dir) {
  tensorflow::GraphDef def;
  graph::write_graph_def(*impl.graph, &def);
  TfjsWriter writer(def, vars);
  writer.run();

  std::string topology;
  google::protobuf::util::JsonPrintOptions options;  // lowerCamelCase names, enums by name
  if (!google::protobuf::util::MessageToJsonString(def, &topology, options).ok())
    throw InternalError("export_tfjs: cannot print the GraphDef as JSON");
  using nlohmann::json;
  auto tensor_info = [](const std::string& name, DType d, const TensorShape& shape) {
    json dims = json::array();
    for (int64_t x : shape.dims()) dims.push_back({{"size", std::to_string(x)}});
    json t = {{"name", name}, {"dtype", tensorflow::DataType_Name(proto_dtype(d))}};
    t["tensorShape"] = shape.rank() < 0 ? json{{"unknownRank", true}} : json{{"dim", dims}};
    return t;
  };
  json inputs = json::object(), outputs = json::object();
  for (size_t i = 0; i < impl.inputs.size(); ++i)
    inputs[impl.inputs[i].name] =
        tensor_info(impl.graph->inputs[i]->name + ":0", impl.inputs[i].dtype, impl.inputs[i].shape);
  for (size_t i = 0; i < impl.outputs.size(); ++i) {
    const graph::Output& o = impl.graph->outputs[i];
    outputs["output_" + std::to_string(i)] =
        tensor_info(o.node->name + ":" + std::to_string(o.index), impl.outputs[i].dtype, impl.outputs[i].shape);
  }
  const std::string shard = "group1-shard1of1.bin";
  json manifest = json::array({{{"paths", json::array({shard})}, {"weights", writer.weights}}});
  json out = {{"format", "graph-model"},           {"generatedBy", "kiln"},
              {"convertedBy", "kiln export-tfjs"}, {"modelTopology", json::parse(topology)},
              {"weightsManifest", manifest},       {"signature", {{"inputs", inputs}, {"outputs", outputs}}}};
  io::AtomicDirWriter dir(out_dir);
  dir.write("model.json", out.dump());
  dir.write(shard, writer.data);
  dir.commit();
}

}  // namespace kiln
