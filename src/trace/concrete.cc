#include "trace/concrete.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "graph/library.h"
#include "optimize/pass.h"

namespace kiln {
namespace detail {

namespace {
[[noreturn]] void fail_arity(const ConcreteImpl& f, size_t num_args) {
  throw InvalidArgumentError(f.name + " expects " + std::to_string(f.inputs.size()) + " tensor arguments, got " +
                             std::to_string(num_args));
}
}  // namespace

std::vector<Tensor> ConcreteImpl::call(const Tensor* args, size_t num_args) const {
  if (num_args != inputs.size()) fail_arity(*this, num_args);
  std::vector<Tensor> results;
  if (captures.empty()) {
    plan->run_into(args, num_args, results);
    return results;
  }
  std::vector<Tensor> feeds(args, args + num_args);
  feeds.insert(feeds.end(), captures.begin(), captures.end());
  plan->run_into(feeds, results);
  return results;
}

std::vector<Tensor> ConcreteImpl::call(const Tensor* const* args, size_t num_args) const {
  if (num_args != inputs.size()) fail_arity(*this, num_args);
  std::vector<Tensor> results;
  if (captures.empty()) {
    plan->run_into(args, num_args, results);
    return results;
  }
  std::vector<const Tensor*> feeds(args, args + num_args);
  for (const Tensor& c : captures) feeds.push_back(&c);
  plan->run_into(feeds.data(), feeds.size(), results);
  return results;
}

namespace {
// The bodies of `library` that `root` calls, directly or through other bodies.
std::unordered_set<const graph::Graph*> called_bodies(const graph::Graph& root, const graph::FunctionLibrary& library) {
  std::unordered_set<const graph::Graph*> called;
  std::vector<const graph::Graph*> todo{&root};
  while (!todo.empty()) {
    const graph::Graph* g = todo.back();
    todo.pop_back();
    for (const auto& n : g->nodes())
      for (const ops::FuncRef* f : ops::func_refs(n->attrs))
        if (const graph::Graph* body = library.find(f->name); body && called.insert(body).second) todo.push_back(body);
  }
  return called;
}
}  // namespace

void ConcreteImpl::compile(const OptimizerOptions& options) {
  // Every body the graph calls is optimized (once) like the graph itself: loop bodies are
  // usually the hot part. The traced graph and its library stay as they were. The graph goes
  // first, and then the bodies by index: a pass may rewrite a loop's body into a new copy
  // (hoist_loop_products, hoist_concat_products), which it wants to see unfused and which is
  // then optimized in turn, while the original, called by nobody any more, is skipped.
  auto library = graph->library().clone();
  optimized = graph->clone(library);
  for (const auto& s : optimize::optimize(*optimized, options)) optimization_report.push_back(s.str());
  std::unordered_set<const graph::Graph*> called;
  int walked_at = -1;  // the library's size when `called` was found: a rewrite's copy grows it
  for (int i = 0; i < library->size(); ++i) {
    if (library->size() != walked_at) {
      called = called_bodies(*optimized, *library);
      walked_at = library->size();
    }
    graph::Graph& body = *library->bodies()[i];
    if (!called.count(&body)) continue;
    for (const auto& s : optimize::optimize(body, options))
      optimization_report.push_back(body.function_name() + ": " + s.str());
  }
  plan = std::make_unique<exec::Plan>(*optimized);
  for (const std::string& loop : plan->loops_by_rows())
    optimization_report.push_back("loop_rows: While '" + loop +
                                  "' runs as one loop per block of batch rows on the intra-op threads");
}

namespace {
void rebind(graph::Graph& g, const std::vector<const Resource*>& from,
            const std::vector<std::shared_ptr<Resource>>& to) {
  for (const auto& n : g.nodes())
    for (int k = 0; k < n->attrs.size(); ++k)
      if (auto* r = std::get_if<ops::ResourceRef>(&n->attrs[k]))
        for (size_t i = 0; i < from.size(); ++i)
          if (r->resource.get() == from[i]) {
            r->resource = to[i];
            break;
          }
}

// A copy of `g` and its library, every body rebound too.
std::unique_ptr<graph::Graph> rebound_clone(const graph::Graph& g, const std::vector<const Resource*>& from,
                                            const std::vector<std::shared_ptr<Resource>>& to) {
  auto library = g.library().clone();
  for (const auto& body : library->bodies()) rebind(*body, from, to);
  auto copy = g.clone(std::move(library));
  rebind(*copy, from, to);
  return copy;
}
}  // namespace

std::shared_ptr<ConcreteImpl> rebind_resources(const ConcreteImpl& cf, const std::vector<const Resource*>& from,
                                               const std::vector<std::shared_ptr<Resource>>& to) {
  if (from.size() != to.size()) throw InternalError("rebind_resources: from and to differ in length");
  if (!cf.graph || !cf.optimized) throw InternalError("rebind_resources: the function has no traced graph");
  auto out = std::make_shared<ConcreteImpl>();
  out->name = cf.name;
  out->signature = cf.signature;
  out->optimization_report = cf.optimization_report;
  out->captures = cf.captures;
  out->inputs = cf.inputs;
  out->outputs = cf.outputs;
  out->graph = rebound_clone(*cf.graph, from, to);
  out->optimized = rebound_clone(*cf.optimized, from, to);
  out->plan = std::make_unique<exec::Plan>(*out->optimized);
  return out;
}

namespace {
std::string spec_text(DType d, const TensorShape& s) {
  return std::string(dtype_name(d)) + " Tensor, shape=" + s.str();
}
}  // namespace

std::string ConcreteImpl::pretty_signature() const {
  std::string header, args;
  bool first = true;
  for (const ArgEntry& e : signature) {
    if (e.kind == ArgEntry::kTensorList) continue;
    if (!first) header += ", ";
    first = false;
    if (e.kind == ArgEntry::kValue) {
      header += e.name + "=" + e.value;
    } else {
      header += e.name;
      args += "    " + e.name + ": " + spec_text(e.dtype, e.shape) + "\n";
    }
  }
  std::string s = name + "(" + header + ")\n";
  if (!args.empty()) s += "  Args:\n" + args;
  s += "  Returns:\n";
  if (outputs.empty()) s += "    None\n";
  for (const TensorSpec& o : outputs) s += "    " + spec_text(o.dtype, o.shape) + "\n";
  return s;
}

}  // namespace detail

}  // namespace kiln
