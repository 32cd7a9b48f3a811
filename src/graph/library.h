// A graph's function library, TensorFlow's FunctionDefLibrary: named function bodies (If and
// Case branches, While cond and body). Control-flow attrs name their bodies (ops::FuncRef);
// nothing holds a pointer to another graph. A body exists once however many nodes call it,
// so every layer that walks bodies (optimizer, plan compiler, exporter, importer) handles
// each one once.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::graph {

class Graph;

class FunctionLibrary {
 public:
  FunctionLibrary();
  ~FunctionLibrary();
  FunctionLibrary(const FunctionLibrary&) = delete;
  FunctionLibrary& operator=(const FunctionLibrary&) = delete;

  // A new empty body named `hint_N` (N counts per hint). `parent` is the graph whose
  // tensors the body may capture while it is traced (null for imported bodies).
  Graph* add(const std::string& hint, Graph* parent);
  // A new empty body with exactly this name; InvalidArgumentError if the name is taken.
  Graph* add_named(const std::string& name);

  // A copy of body `name` under a new name (`name_N`), for a rewrite of one caller's body
  // that the body's other callers must not see. InternalError if there is no such body.
  Graph* add_copy(const std::string& name);

  // The body a FuncRef names. Every FuncRef in a graph names an entry of its library, so a
  // missing one is an InternalError.
  const Graph& get(const std::string& name) const;
  Graph& get(const std::string& name);
  const Graph* find(const std::string& name) const;

  // In the order they were added (callees may come before or after their callers).
  const std::vector<std::unique_ptr<Graph>>& bodies() const { return bodies_; }
  int size() const { return static_cast<int>(bodies_.size()); }
  // Nodes in all bodies together.
  int64_t total_nodes() const;

  // A deep copy: every body cloned into the new library under the same name, so the
  // FuncRefs of a graph cloned beside it resolve there (the optimizer rewrites the copy).
  std::shared_ptr<FunctionLibrary> clone() const;

 private:
  std::vector<std::unique_ptr<Graph>> bodies_;
  std::unordered_map<std::string, Graph*> by_name_;
  std::unordered_map<std::string, int> counts_;
  Graph* insert(std::unique_ptr<Graph> g);
};

}  // namespace kiln::graph
