#include "io/graph_import.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "core/shape_fit.h"
#include "io/limits.h"
#include "io/proto_values.h"
#include "ops/op_list.h"

namespace kiln::io {
namespace {

using graph::Graph;
using graph::Node;
using graph::Output;

// A parsed input reference: an argument ("x"), a node output ("n:output:0") or "^n".
struct Ref {
  std::string node;
  std::string arg;  // the output arg of "node:arg:index"
  int index = 0;
  bool is_arg = false;
  bool control = false;
};

class Importer {
 public:
  Importer(const tensorflow::FunctionDefLibrary& library, const VariableMap& variables, NodeBudget& budget)
      : variables_(variables), budget_(budget) {
    for (const auto& f : library.function()) {
      if (!functions_.emplace(f.signature().name(), &f).second)
        throw InvalidArgumentError("the function library defines '" + f.signature().name() + "' twice");
    }
  }

  // Fills `g` (empty) with function `name` called with inputs of these dtypes and shapes.
  void build(const std::string& name, Graph& g, const std::vector<DType>* dtypes,
             const std::vector<TensorShape>& shapes, int depth, const ResourceBindings& resources = {});

 private:
  const VariableMap& variables_;
  NodeBudget& budget_;
  std::unordered_map<std::string, const tensorflow::FunctionDef*> functions_;
  // Bodies already built, by function name and argument dtypes and shapes.
  std::unordered_map<std::string, Graph*> built_;
  std::vector<std::string> stack_;  // functions being built, to reject recursion

  struct Scope {
    const std::string& fname;
    Graph& g;
    std::unordered_map<std::string, Output> args;
    std::unordered_map<std::string, int> index;  // node name -> node_def position
    std::vector<Node*> nodes;                    // by node_def position; null for handles
    std::unordered_map<int, std::shared_ptr<ops::VariableState>> handles;
    int depth;
    std::string prefix = {};  // of node names, for the bodies of inlined calls
    // DT_RESOURCE arguments: the variables they are bound to.
    std::unordered_map<std::string, std::shared_ptr<ops::VariableState>> arg_handles = {};
    // (Stateful)PartitionedCall nodes, inlined: their outputs, by node_def position.
    std::unordered_map<int, std::vector<Output>> call_outputs = {};
    // While nodes with variables among their loop variables, by node_def position: for each
    // of TensorFlow's outputs, kiln's output index, or -(k + 1) for the k-th variable handle.
    std::unordered_map<int, std::vector<int>> output_index = {};
    std::unordered_map<int, std::vector<std::shared_ptr<ops::VariableState>>> output_handles = {};
  };
  // A function's DT_RESOURCE outputs: (output position, the variable it returns).
  using ResourceRets = std::vector<std::pair<int, std::shared_ptr<ops::VariableState>>>;
  std::unordered_map<const Graph*, ResourceRets> resource_rets_;

  // Adds the nodes of `fd` to s.g in dependency order and returns its outputs.
  // `resource_rets`: where DT_RESOURCE outputs go (a While body returns its variables); null:
  // such an output is refused.
  std::vector<Output> add_function_nodes(Scope& s, const tensorflow::FunctionDef& fd, const std::string& fwhere,
                                         ResourceRets* resource_rets = nullptr);
  // A call to a library function, inlined: its nodes join the caller's graph.
  void inline_call(Scope& s, const tensorflow::NodeDef& nd, int position, const std::string& where);

  Ref parse_ref(const Scope& s, const std::string& text, const std::string& where) const;
  // The variable a reference names (an argument, a VarHandleOp, a While's handle output), or null.
  static std::shared_ptr<ops::VariableState> handle_of(const Scope& s, const Ref& r);
  Output resolve(const Scope& s, const Ref& r, const std::string& where) const;
  void make_node(Scope& s, const tensorflow::NodeDef& nd, int position);
  Node* make_control_flow(Scope& s, const ops::OpDef& op, const tensorflow::NodeDef& nd, std::vector<Output> inputs,
                          ops::Attrs attrs, std::vector<Node*> control, const ResourceBindings& resources,
                          const std::vector<int>& resource_positions, const std::string& where);
  // Imports a body as a new library function of `g`; returns its outputs' dtypes/shapes.
  Graph* body(Scope& s, ops::FuncRef& ref, const std::vector<DType>& dtypes, const std::vector<TensorShape>& shapes,
              const ResourceBindings& resources = {});
};

Ref Importer::parse_ref(const Scope& s, const std::string& text, const std::string& where) const {
  Ref r;
  std::string t = text;
  if (!t.empty() && t[0] == '^') {
    r.control = true;
    t = t.substr(1);
  }
  const size_t a = t.find(':');
  if (a == std::string::npos) {
    r.node = t;
    r.is_arg = !r.control;
    if (r.is_arg && !s.args.count(t) && !s.arg_handles.count(t))
      throw InvalidArgumentError(where + ": input '" + text + "' is not an argument");
    if (r.control && !s.index.count(t))
      throw InvalidArgumentError(where + ": control input '" + text + "' names no node");
    return r;
  }
  const size_t b = t.find(':', a + 1);
  const std::string digits = b == std::string::npos ? "" : t.substr(b + 1);
  if (r.control || b == std::string::npos || b == a + 1 || digits.empty() || digits.size() > 6 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgumentError(where + ": malformed input '" + text + "' (expected node:output:index)");
  r.node = t.substr(0, a);
  r.arg = t.substr(a + 1, b - a - 1);
  r.index = std::stoi(digits);
  if (!s.index.count(r.node)) throw InvalidArgumentError(where + ": input '" + text + "' names no node");
  return r;
}

std::shared_ptr<ops::VariableState> Importer::handle_of(const Scope& s, const Ref& r) {
  if (r.is_arg) {
    auto it = s.arg_handles.find(r.node);
    return it == s.arg_handles.end() ? nullptr : it->second;
  }
  const int position = s.index.at(r.node);
  if (auto it = s.handles.find(position); it != s.handles.end()) return it->second;
  if (auto it = s.output_index.find(position); it != s.output_index.end() && r.index >= 0 &&
                                               r.index < static_cast<int>(it->second.size()) && it->second[r.index] < 0)
    return s.output_handles.at(position)[-(it->second[r.index] + 1)];
  return nullptr;
}

Output Importer::resolve(const Scope& s, const Ref& r, const std::string& where) const {
  if (r.is_arg) {
    if (s.arg_handles.count(r.node))
      throw InvalidArgumentError(where + ": '" + r.node + "' is a variable handle, not a tensor");
    return s.args.at(r.node);
  }
  const int position = s.index.at(r.node);
  if (auto call = s.call_outputs.find(position); call != s.call_outputs.end()) {
    if (r.index >= static_cast<int>(call->second.size()))
      throw InvalidArgumentError(where + ": the call '" + r.node + "' has " + std::to_string(call->second.size()) +
                                 " outputs; output " + std::to_string(r.index) + " does not exist");
    return call->second[r.index];
  }
  Node* n = s.nodes[position];
  if (!n) throw InvalidArgumentError(where + ": '" + r.node + "' is a variable handle, not a tensor");
  // Ops with several output args (SparseSoftmaxCrossEntropyWithLogits: loss, backprop) number
  // each arg's tensors from 0; kiln numbers all outputs.
  int index = r.index;
  if (auto it = s.output_index.find(position); it != s.output_index.end()) {  // a While with variables
    if (index < 0 || index >= static_cast<int>(it->second.size()))
      throw InvalidArgumentError(where + ": input '" + r.node + "' has " + std::to_string(it->second.size()) +
                                 " outputs; output " + std::to_string(index) + " does not exist");
    if (it->second[index] < 0)
      throw InvalidArgumentError(where + ": output " + std::to_string(index) + " of '" + r.node +
                                 "' is a variable handle, not a tensor");
    return Output{n, it->second[index]};
  }
  const auto& args = n->op->output_args;
  if (args.size() > 1) {
    const auto arg = std::find_if(args.begin(), args.end(), [&](const char* a) { return r.arg == a; });
    if (arg == args.end() || r.index != 0)
      throw InvalidArgumentError(where + ": input '" + r.node + ":" + r.arg + ":" + std::to_string(r.index) +
                                 "' names no output of " + n->op->name);
    index = static_cast<int>(arg - args.begin());
  }
  if (index >= n->num_outputs())
    throw InvalidArgumentError(where + ": input '" + r.node + "' has " + std::to_string(n->num_outputs()) +
                               " outputs; output " + std::to_string(index) + " does not exist");
  return Output{n, index};
}

void Importer::build(const std::string& name, Graph& g, const std::vector<DType>* dtypes,
                     const std::vector<TensorShape>& shapes, int depth, const ResourceBindings& resources) {
  auto it = functions_.find(name);
  if (it == functions_.end()) throw InvalidArgumentError("function '" + name + "' is not in the function library");
  if (depth > kMaxFunctionNesting)
    throw InvalidArgumentError("function '" + name + "' is nested more than " + std::to_string(kMaxFunctionNesting) +
                               " deep");
  for (const auto& f : stack_)
    if (f == name) throw InvalidArgumentError("function '" + name + "' calls itself (recursion is not supported)");
  stack_.push_back(name);
  const tensorflow::FunctionDef& fd = *it->second;
  const auto& sig = fd.signature();
  const std::string fwhere = "function '" + name + "'";
  size_t num_resources = 0;
  for (const auto& arg : sig.input_arg()) num_resources += arg.type() == tensorflow::DT_RESOURCE ? 1 : 0;
  const size_t num_tensors = static_cast<size_t>(sig.input_arg_size()) - num_resources;
  if (num_tensors != shapes.size() || num_resources != resources.size())
    throw InvalidArgumentError(fwhere + " takes " + std::to_string(num_tensors) + " tensor and " +
                               std::to_string(num_resources) + " resource arguments but is given " +
                               std::to_string(shapes.size()) + " and " + std::to_string(resources.size()));
  Scope s{name, g, {}, {}, {}, {}, depth};
  size_t next_resource = 0, next_tensor = 0;
  for (const auto& arg : sig.input_arg()) {
    const std::string where = fwhere + " argument '" + arg.name() + "'";
    if (!arg.type_attr().empty() || !arg.number_attr().empty() || !arg.type_list_attr().empty())
      throw InvalidArgumentError(where + ": polymorphic arguments are not supported");
    if (arg.name().empty() || s.args.count(arg.name()) || s.arg_handles.count(arg.name()))
      throw InvalidArgumentError(where + ": empty or duplicate name");
    if (arg.type() == tensorflow::DT_RESOURCE) {  // a captured variable, bound by the caller
      s.arg_handles.emplace(arg.name(), resources[next_resource++]);
      continue;
    }
    const DType d = dtype_from_proto(arg.type(), where);
    const size_t t = next_tensor++;
    if (dtypes && (*dtypes)[t] != d)
      throw InvalidArgumentError(where + " is " + std::string(dtype_name(d)) + " but the caller passes " +
                                 std::string(dtype_name((*dtypes)[t])));
    Node* ph = g.add_placeholder(d, shapes[t], arg.name(), arg.name());
    if (ph->name != arg.name()) throw InvalidArgumentError(where + ": the name is taken");
    g.inputs.push_back(ph);
    s.args.emplace(arg.name(), Output{ph, 0});
  }
  g.outputs = add_function_nodes(s, fd, fwhere, &resource_rets_[&g]);
  stack_.pop_back();
}

std::vector<Output> Importer::add_function_nodes(Scope& s, const tensorflow::FunctionDef& fd, const std::string& fwhere,
                                                 ResourceRets* resource_rets) {
  const auto& sig = fd.signature();
  const int n = fd.node_def_size();
  for (int i = 0; i < n; ++i) {
    const std::string& nm = fd.node_def(i).name();
    if (nm.empty() || nm.find_first_of(":^") != std::string::npos || s.args.count(nm) || s.arg_handles.count(nm) ||
        !s.index.emplace(nm, i).second)
      throw InvalidArgumentError(fwhere + ": node name '" + nm + "' is empty, malformed or not unique");
  }
  // Kahn's algorithm: producers first; whatever remains is on a cycle.
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    const std::string where = fwhere + " node '" + fd.node_def(i).name() + "'";
    for (const std::string& in : fd.node_def(i).input()) {
      const Ref r = parse_ref(s, in, where);
      if (r.is_arg) continue;
      users[s.index.at(r.node)].push_back(i);
      ++pending[i];
    }
  }
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (int u : users[order[k]])
      if (--pending[u] == 0) order.push_back(u);
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i] > 0) throw InvalidArgumentError(fwhere + ": node '" + fd.node_def(i).name() + "' is on a cycle");
  }
  s.nodes.assign(n, nullptr);
  for (int i : order) make_node(s, fd.node_def(i), i);
  std::vector<Output> outputs;
  int position = 0;
  for (const auto& arg : sig.output_arg()) {
    const std::string where = fwhere + " output '" + arg.name() + "'";
    auto r = fd.ret().find(arg.name());
    if (r == fd.ret().end()) throw InvalidArgumentError(where + " has no ret entry");
    const Ref ref = parse_ref(s, r->second, where);
    if (arg.type() == tensorflow::DT_RESOURCE) {
      auto handle = handle_of(s, ref);
      if (!handle) throw InvalidArgumentError(where + " is a resource but returns a tensor");
      if (!resource_rets) throw UnimplementedError(where + ": a function that returns a variable handle");
      resource_rets->emplace_back(position++, std::move(handle));
      continue;
    }
    ++position;
    const Output o = resolve(s, ref, where);
    if (o.node->out_dtypes[o.index] != dtype_from_proto(arg.type(), where))
      throw InvalidArgumentError(where + " is declared " +
                                 std::string(dtype_name(dtype_from_proto(arg.type(), where))) + " but returns " +
                                 std::string(dtype_name(o.node->out_dtypes[o.index])));
    outputs.push_back(o);
  }
  return outputs;
}

// TensorFlow calls a library function through (Stateful)PartitionedCall(args..., f). kiln
// inlines the callee: its nodes join this graph under "<call node>/", its tensor arguments
// are the call's inputs and its resource arguments the variables those inputs name.
void Importer::inline_call(Scope& s, const tensorflow::NodeDef& nd, int position, const std::string& where) {
  auto f = nd.attr().find("f");
  if (f == nd.attr().end() || f->second.value_case() != tensorflow::AttrValue::kFunc)
    throw InvalidArgumentError(where + " needs a function attr 'f'");
  const std::string& name = f->second.func().name();
  auto it = functions_.find(name);
  if (it == functions_.end()) throw InvalidArgumentError(where + ": function '" + name + "' is not in the library");
  if (s.depth + 1 > kMaxFunctionNesting)
    throw InvalidArgumentError(where + ": calls are nested more than " + std::to_string(kMaxFunctionNesting) + " deep");
  for (const auto& fn : stack_)
    if (fn == name) throw InvalidArgumentError("function '" + name + "' calls itself (recursion is not supported)");
  const tensorflow::FunctionDef& fd = *it->second;
  const auto& sig = fd.signature();
  std::vector<std::string> data_inputs;
  std::vector<Node*> control;
  for (const std::string& in : nd.input()) {
    const Ref r = parse_ref(s, in, where);
    if (!r.control) {
      data_inputs.push_back(in);
    } else if (Node* c = s.nodes[s.index.at(r.node)]) {
      control.push_back(c);
    }
  }
  if (static_cast<int>(data_inputs.size()) != sig.input_arg_size())
    throw InvalidArgumentError(where + " passes " + std::to_string(data_inputs.size()) + " inputs to '" + name +
                               "', which takes " + std::to_string(sig.input_arg_size()));
  stack_.push_back(name);
  Scope cs{name, s.g, {}, {}, {}, {}, s.depth + 1, s.prefix + nd.name() + "/"};
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const auto& arg = sig.input_arg(i);
    const std::string awhere = where + " argument '" + arg.name() + "'";
    if (!arg.type_attr().empty() || !arg.number_attr().empty() || !arg.type_list_attr().empty())
      throw InvalidArgumentError(awhere + ": polymorphic arguments are not supported");
    if (arg.name().empty() || cs.args.count(arg.name()) || cs.arg_handles.count(arg.name()))
      throw InvalidArgumentError(awhere + ": empty or duplicate name");
    const Ref r = parse_ref(s, data_inputs[i], where);
    std::shared_ptr<ops::VariableState> handle;
    if (r.is_arg && s.arg_handles.count(r.node)) handle = s.arg_handles.at(r.node);
    if (!r.is_arg && s.handles.count(s.index.at(r.node))) handle = s.handles.at(s.index.at(r.node));
    if (arg.type() == tensorflow::DT_RESOURCE) {
      if (!handle) throw InvalidArgumentError(awhere + " is a resource but the call passes a tensor");
      cs.arg_handles.emplace(arg.name(), handle);
      continue;
    }
    if (handle) throw InvalidArgumentError(awhere + " is a tensor but the call passes a variable handle");
    const Output o = resolve(s, r, where);
    if (o.node->out_dtypes[o.index] != dtype_from_proto(arg.type(), awhere))
      throw InvalidArgumentError(awhere + " is " + std::string(dtype_name(dtype_from_proto(arg.type(), awhere))) +
                                 " but the call passes " + std::string(dtype_name(o.node->out_dtypes[o.index])));
    // The call's control inputs order the callee's work after them: they go on an Identity.
    if (!control.empty()) {
      Node* id = s.g.add_node(ops::op::Identity(), cs.prefix + arg.name(), {o}, {}, control);
      cs.args.emplace(arg.name(), Output{id, 0});
    } else {
      cs.args.emplace(arg.name(), o);
    }
  }
  s.call_outputs[position] = add_function_nodes(cs, fd, "function '" + name + "' (called by " + where + ")");
  stack_.pop_back();
}

void Importer::make_node(Scope& s, const tensorflow::NodeDef& nd, int position) {
  const std::string where = "node '" + nd.name() + "' (" + nd.op() + ") in function '" + s.fname + "'";
  if (nd.op() == "StatefulPartitionedCall" || nd.op() == "PartitionedCall") return inline_call(s, nd, position, where);
  if (nd.op() == "VarHandleOp") {  // a variable: resolved here, no kiln node
    if (nd.input_size() != 0) throw InvalidArgumentError(where + " takes no inputs");
    auto sn = nd.attr().find("shared_name");
    if (sn == nd.attr().end() || sn->second.value_case() != tensorflow::AttrValue::kS)
      throw InvalidArgumentError(where + " needs a string attr shared_name");
    auto v = variables_.find(sn->second.s());
    if (v == variables_.end()) throw InvalidArgumentError(where + ": no saved variable named '" + sn->second.s() + "'");
    auto dt = nd.attr().find("dtype");
    if (dt != nd.attr().end() &&
        std::get<DType>(attr_from_proto(dt->second, AttrKind::kType, where)) != v->second->dtype())
      throw InvalidArgumentError(where + ": dtype differs from the saved variable's");
    auto sh = nd.attr().find("shape");
    if (sh != nd.attr().end() &&
        std::get<ops::ShapeAttr>(attr_from_proto(sh->second, AttrKind::kShape, where)).get() != v->second->shape())
      throw InvalidArgumentError(where + ": shape differs from the saved variable's");
    s.handles[position] = v->second;
    return;
  }
  if (++budget_.used > budget_.max_nodes)
    throw InvalidArgumentError("the model needs more than " + std::to_string(budget_.max_nodes) +
                               " nodes, the node budget of a load (LoadOptions::max_nodes); stopped at " + where);
  const ops::OpDef* op = ops::find_op(nd.op());
  if (!op || op->has(ops::kInternal) || op->has(ops::kNoKernel))
    throw InvalidArgumentError("Op type not registered '" + nd.op() + "' in kiln (" + where + ")");
  std::vector<Output> data;
  std::vector<Node*> control;
  std::vector<std::shared_ptr<ops::VariableState>> handles;  // variables lead the inputs, as in TensorFlow
  std::vector<int> handle_positions;                         // where they are among the inputs
  for (const std::string& in : nd.input()) {
    const Ref r = parse_ref(s, in, where);
    if (r.control) {
      if (Node* c = s.nodes[s.index.at(r.node)]) control.push_back(c);
      continue;
    }
    if (auto handle = handle_of(s, r)) {
      handle_positions.push_back(static_cast<int>(data.size() + handles.size()));
      // TensorFlow passes a branch's captured variables among the If/Case inputs; other ops
      // take their variables first.
      if (!data.empty() && !op->has(ops::kControlFlow))
        throw InvalidArgumentError(where + ": variable handles must come before its other inputs");
      handles.push_back(std::move(handle));
      continue;
    }
    data.push_back(resolve(s, r, where));
  }
  ops::Attrs attrs;
  std::unordered_set<std::string> known;
  size_t next_handle = 0;
  for (const ops::AttrSpec& spec : op->attr_specs) {
    const char* name = spec.name;
    const AttrKind kind = spec.kind;
    known.insert(name);
    if (kind == AttrKind::kResource) {
      if (next_handle == handles.size())
        throw InvalidArgumentError(where + " needs a variable handle (VarHandleOp) as input " +
                                   std::to_string(next_handle));
      attrs.push(ops::ResourceRef{handles[next_handle++]});
      continue;
    }
    auto a = nd.attr().find(name);
    if (a == nd.attr().end()) {
      if (spec.has_default()) {  // TensorFlow strips attrs that hold their default
        attrs.push(spec.default_value);
        continue;
      }
      if (name[0] != '_') throw InvalidArgumentError(where + ": NodeDef missing attr '" + name + "'");
      attrs.push(std::string());
      continue;
    }
    attrs.push(attr_from_proto(a->second, kind, where + " attr '" + name + "'"));
  }
  if (next_handle != handles.size() && !op->has(ops::kControlFlow))
    throw InvalidArgumentError(where + " takes " + std::to_string(next_handle) + " variable handle(s), got " +
                               std::to_string(handles.size()));
  // Attrs kiln derives on export (dtype attrs, control-flow signatures) are recomputed.
  if (op->type_attr) known.insert(op->type_attr);
  if (op->type_list_attr) known.insert(op->type_list_attr);
  for (const auto& [name, idx] : op->index_type_attrs) known.insert(name);
  if (op->has(ops::kControlFlow)) known.insert({"T", "Tcond", "Tin", "Tout", "output_shapes", "parallel_iterations"});
  for (const auto& [name, value] : nd.attr())
    if (!known.count(name) && name[0] != '_')
      throw InvalidArgumentError(where + ": NodeDef mentions attr '" + name + "' not in Op<name=" + op->name + ">");
  if (op->num_inputs >= 0 && static_cast<int>(data.size()) != op->num_inputs)
    throw InvalidArgumentError(where + " expects " + std::to_string(op->num_inputs) + " inputs, got " +
                               std::to_string(data.size()));
  Node* node = nullptr;
  try {
    if (op->has(ops::kControlFlow)) {
      node = make_control_flow(s, *op, nd, std::move(data), std::move(attrs), std::move(control), handles,
                               handle_positions, where);
      if (op->has(ops::kLoop) && !handles.empty()) {  // TensorFlow's output numbering counts the handles
        std::vector<int>& index = s.output_index[position];
        for (int i = 0, next_tensor = 0, next_handle = 0; i < node->num_outputs() + static_cast<int>(handles.size());
             ++i) {
          const bool is_handle =
              std::find(handle_positions.begin(), handle_positions.end(), i) != handle_positions.end();
          index.push_back(is_handle ? -(++next_handle) : next_tensor++);
        }
        s.output_handles[position] = handles;
      }
    } else {
      node = s.g.add_node(*op, s.prefix + nd.name(), std::move(data), std::move(attrs), std::move(control));
      // TensorFlow marks a tf.custom_gradient step so (SaveOptions experimental_custom_gradients).
      if (nd.attr().count("_gradient_op_type")) s.g.has_custom_gradient = true;
    }
  } catch (const std::bad_variant_access&) {
    throw InvalidArgumentError(where + ": an attr has the wrong type");
  } catch (const UnimplementedError& e) {
    throw UnimplementedError(where + ": " + e.what());  // a mode kiln lacks, not a malformed file
  } catch (const Error& e) {
    throw InvalidArgumentError(where + ": " + e.what());
  }
  if (node->name != s.prefix + nd.name()) throw InvalidArgumentError(where + ": the name is taken");
  for (const auto& shape : node->out_shapes) {
    if (shape.unknown_rank()) continue;
    if (shape.dims().size() > kMaxRank)
      throw InvalidArgumentError(where + ": output rank exceeds " + std::to_string(kMaxRank));
    uint64_t elements = 1;
    for (int64_t d : shape.dims())
      if (d > 0) {
        if (elements > kMaxElements / static_cast<uint64_t>(d))
          throw InvalidArgumentError(where + ": output is too large");
        elements *= static_cast<uint64_t>(d);
      }
  }
  s.nodes[position] = node;
}

Graph* Importer::body(Scope& s, ops::FuncRef& ref, const std::vector<DType>& dtypes,
                      const std::vector<TensorShape>& shapes, const ResourceBindings& resources) {
  std::string key = ref.name;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    key += '|';
    key += dtype_name(dtypes[i]);
    key += ops::shape_text(shapes[i]);
  }
  for (const auto& r : resources) key += "|&" + std::to_string(reinterpret_cast<uintptr_t>(r.get()));
  if (auto it = built_.find(key); it != built_.end()) {
    if (!it->second)
      throw InvalidArgumentError("function '" + ref.name + "' calls itself (recursion is not supported)");
    ref.name = it->second->function_name();
    return it->second;
  }
  built_[key] = nullptr;  // being built: a call back into it is recursion
  Graph* g = s.g.library().add(ref.name.empty() ? "f" : ref.name.substr(0, 128), nullptr);
  build(ref.name, *g, &dtypes, shapes, s.depth + 1, resources);
  built_[key] = g;
  ref.name = g->function_name();
  return g;
}

Node* Importer::make_control_flow(Scope& s, const ops::OpDef& op, const tensorflow::NodeDef& nd,
                                  std::vector<Output> inputs, ops::Attrs attrs, std::vector<Node*> control,
                                  const ResourceBindings& resources, const std::vector<int>& resource_positions,
                                  const std::string& where) {
  std::vector<DType> in_dtypes;
  std::vector<TensorShape> in_shapes;
  for (const Output& o : inputs) {
    in_dtypes.push_back(o.node->out_dtypes[o.index]);
    in_shapes.push_back(o.node->out_shapes[o.index]);
  }
  std::vector<DType> out_dtypes;
  std::vector<TensorShape> out_shapes;
  const std::string first_attr = op.attr_specs[0].name;
  if (first_attr == "cond") {  // While(vars...): cond, body
    // Variables among the loop variables are bound in cond and body, which must return each
    // one unchanged in its place; the loop itself carries only the tensors.
    std::vector<int> tensor_positions;  // TensorFlow's position of each tensor loop variable
    for (int i = 0; tensor_positions.size() < inputs.size(); ++i)
      if (std::find(resource_positions.begin(), resource_positions.end(), i) == resource_positions.end())
        tensor_positions.push_back(i);
    std::vector<TensorShape> invariants(inputs.size(), TensorShape::unknown());
    auto os = nd.attr().find("output_shapes");
    if (os != nd.attr().end() && os->second.list().shape_size() == static_cast<int>(inputs.size() + resources.size())) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        invariants[i] = shape_from_proto(os->second.list().shape(tensor_positions[i]), where);
        // TensorFlow's shape inference may know more than kiln's (it reads partial shapes out
        // of shape tensors: Fill(Pack(batch, 8)) is [?,8]): a less specific initial value is
        // accepted, and each value entering the loop is checked against the entry when it
        // runs (the body's feeds). Only a contradiction is refused here.
        if (!in_shapes[i].is_compatible_with(invariants[i]))
          throw InvalidArgumentError(where + ": loop variable " + std::to_string(i) +
                                     " does not fit its output_shapes entry");
      }
    }
    Graph* c = body(s, std::get<ops::FuncRef>(attrs[ops::attr_index(op, "cond")]), in_dtypes, invariants, resources);
    if (c->outputs.empty() || c->outputs[0].node->out_dtypes[c->outputs[0].index] != DType::Bool)
      throw InvalidArgumentError(where + ": the loop condition must return a bool tensor");
    Graph* b = body(s, std::get<ops::FuncRef>(attrs[ops::attr_index(op, "body")]), in_dtypes, invariants, resources);
    const ResourceRets& rets = resource_rets_[b];
    bool passes_through = rets.size() == resources.size();
    for (size_t k = 0; passes_through && k < rets.size(); ++k)
      passes_through = rets[k].first == resource_positions[k] && rets[k].second == resources[k];
    if (!passes_through)
      throw InvalidArgumentError(where + ": the loop body must return each variable handle unchanged, in its place");
    if (b->outputs.size() != inputs.size())
      throw InvalidArgumentError(where + ": the loop body returns " + std::to_string(b->outputs.size()) +
                                 " values for " + std::to_string(inputs.size()) + " loop variables");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Output& o = b->outputs[i];
      if (o.node->out_dtypes[o.index] != in_dtypes[i] ||
          !detail::fits_within(o.node->out_shapes[o.index], invariants[i]))
        throw InvalidArgumentError(where + ": loop variable " + std::to_string(i) + " (" +
                                   std::string(dtype_name(in_dtypes[i])) + " " + ops::shape_text(invariants[i]) +
                                   ") changes dtype or leaves its shape invariant in the body, which returns " +
                                   std::string(dtype_name(o.node->out_dtypes[o.index])) + " " +
                                   ops::shape_text(o.node->out_shapes[o.index]) + " from node '" + o.node->name + "'");
    }
    out_dtypes = in_dtypes;
    out_shapes = invariants;
  } else {  // If(cond, args...) / Case(index, args...)
    if (inputs.empty()) throw InvalidArgumentError(where + " needs a condition or branch index input");
    const bool is_case = first_attr == "branches";
    if (is_case && (in_dtypes[0] != DType::Int32 || in_shapes[0].rank() > 0))
      throw InvalidArgumentError(where + ": the branch index must be an int32 scalar");
    const std::vector<DType> arg_dtypes(in_dtypes.begin() + 1, in_dtypes.end());
    const std::vector<TensorShape> arg_shapes(in_shapes.begin() + 1, in_shapes.end());
    std::vector<ops::FuncRef*> refs;
    if (is_case) {
      auto& list = std::get<std::vector<ops::FuncRef>>(attrs[ops::attr_index(op, "branches")]);
      if (list.empty() || list.size() > 4096) throw InvalidArgumentError(where + " needs 1 to 4096 branches");
      for (auto& r : list) refs.push_back(&r);
    } else {
      refs = {&std::get<ops::FuncRef>(attrs[ops::attr_index(op, "then_branch")]),
              &std::get<ops::FuncRef>(attrs[ops::attr_index(op, "else_branch")])};
    }
    for (size_t k = 0; k < refs.size(); ++k) {
      Graph* b = body(s, *refs[k], arg_dtypes, arg_shapes, resources);
      if (k == 0) {
        for (const Output& o : b->outputs) {
          out_dtypes.push_back(o.node->out_dtypes[o.index]);
          out_shapes.push_back(o.node->out_shapes[o.index]);
        }
        continue;
      }
      if (b->outputs.size() != out_dtypes.size())
        throw InvalidArgumentError(where + ": branches return different numbers of outputs");
      for (size_t i = 0; i < out_dtypes.size(); ++i) {
        const Output& o = b->outputs[i];
        if (o.node->out_dtypes[o.index] != out_dtypes[i])
          throw InvalidArgumentError(where + ": branches return different dtypes for output " + std::to_string(i));
        out_shapes[i] = out_shapes[i].most_specific_common(o.node->out_shapes[o.index]);
      }
    }
  }
  return s.g.add_node_with_outputs(op, s.prefix + nd.name(), std::move(inputs), std::move(attrs), std::move(out_dtypes),
                                   std::move(out_shapes), std::move(control));
}

}  // namespace

std::unique_ptr<Graph> import_function(const tensorflow::FunctionDefLibrary& library, const std::string& name,
                                       const std::vector<DType>& input_dtypes,
                                       const std::vector<TensorShape>& input_shapes, const VariableMap& variables,
                                       NodeBudget& budget, const ResourceBindings& resources) {
  auto g = std::make_unique<Graph>();
  Importer(library, variables, budget).build(name, *g, &input_dtypes, input_shapes, 0, resources);
  return g;
}

}  // namespace kiln::io
