#include "graph/library.h"

#include "graph/graph.h"
#include "kiln/errors.h"

namespace kiln::graph {

FunctionLibrary::FunctionLibrary() = default;
FunctionLibrary::~FunctionLibrary() = default;

Graph* FunctionLibrary::insert(std::unique_ptr<Graph> g) {
  Graph* raw = g.get();
  by_name_.emplace(raw->function_name(), raw);
  bodies_.push_back(std::move(g));
  return raw;
}

Graph* FunctionLibrary::add(const std::string& hint, Graph* parent) {
  int& n = counts_[hint];
  std::string name;
  do {
    name = hint + "_" + std::to_string(n++);
  } while (by_name_.count(name));
  return insert(std::unique_ptr<Graph>(new Graph(this, parent, name)));
}

Graph* FunctionLibrary::add_named(const std::string& name) {
  if (by_name_.count(name)) throw InvalidArgumentError("the function library already has a function '" + name + "'");
  return insert(std::unique_ptr<Graph>(new Graph(this, nullptr, name)));
}

Graph* FunctionLibrary::add_copy(const std::string& name) {
  const Graph& original = get(name);
  int& n = counts_[name];
  std::string copy_name;
  do {
    copy_name = name + "_" + std::to_string(n++);
  } while (by_name_.count(copy_name));
  std::unique_ptr<Graph> g(new Graph(this, nullptr, copy_name));
  original.copy_nodes_into(*g);
  return insert(std::move(g));
}

const Graph* FunctionLibrary::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const Graph& FunctionLibrary::get(const std::string& name) const {
  const Graph* g = find(name);
  if (!g) throw InternalError("function '" + name + "' is not in the graph's function library");
  return *g;
}

Graph& FunctionLibrary::get(const std::string& name) {
  return const_cast<Graph&>(static_cast<const FunctionLibrary&>(*this).get(name));
}

int64_t FunctionLibrary::total_nodes() const {
  int64_t n = 0;
  for (const auto& b : bodies_) n += b->num_nodes();
  return n;
}

std::shared_ptr<FunctionLibrary> FunctionLibrary::clone() const {
  auto lib = std::make_shared<FunctionLibrary>();
  lib->counts_ = counts_;
  for (const auto& b : bodies_) lib->insert(b->clone_body(lib.get()));
  return lib;
}

}  // namespace kiln::graph
