// A dataflow graph: nodes (operations) with TensorFlow op and attr names, data inputs as
// node:index, control inputs, and per-output dtype and partial shape from each op's own
// shape function.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/inline_vec.h"
#include "core/sanitizers.h"
#include "graph/library.h"
#include "graph/name_table.h"
#include "ops/op_def.h"

namespace kiln::graph {

class Node;

struct Output {
  Node* node = nullptr;
  int index = 0;
  bool operator==(const Output& o) const { return node == o.node && index == o.index; }
};

class Node {
 public:
  int id = 0;  // position in the graph's node list; inputs always have smaller ids
  std::string name;
  const ops::OpDef* op = nullptr;
  ops::Attrs attrs;
  std::vector<Output> inputs;
  std::vector<Node*> control_inputs;
  // Inline for the usual one or two outputs: tracing and cloning a node allocate less.
  SmallVec<DType, 2> out_dtypes;
  InlineVec<TensorShape, 1> out_shapes;
  DType kernel_dtype = DType::Float32;  // the per-dtype kernel its shape function chose
  // Its shape function lacked an input's value (ops::UnseenValueProbe): its out_shapes are
  // not proof that value is valid, so plans re-run the shape function when it runs.
  bool shape_needs_values = false;
  bool stateful = false;  // runs on every call, in program order, never pruned or merged
  class Graph* graph = nullptr;

  int num_outputs() const { return static_cast<int>(out_dtypes.size()); }
  // Const nodes: the value (attr "value"); null otherwise.
  const ops::TensorImpl* const_value() const;
  // A symbolic Tensor for output i.
  Tensor output(int i);
};

// A graph's nodes live in its arena (below): their owning pointers destroy, never free.
// Under AddressSanitizer every node is its own allocation instead, so that a pointer kept
// to a pruned node is still reported.
struct NodeDestroyer {
  void operator()(Node* n) const {
#if KILN_ASAN
    delete n;
#else
    n->~Node();
#endif
  }
};
using NodePtr = std::unique_ptr<Node, NodeDestroyer>;

// Storage for one graph's nodes, in chunks that live as long as the graph: a traced op
// costs no allocation of its own for its node. A node that dies before its graph (pruned)
// keeps its slot until then. Full-size chunks (128 KB) go back to a small process-wide
// pool when the graph dies, for the next graph: taken fresh from the system each time (the
// C library maps, or trims and regrows, blocks that size), their pages faulted in anew on
// every trace, 7% of tracing's time.
class NodeArena {
 public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;
  ~NodeArena();
  void* allocate() {
#if KILN_ASAN
    return ::operator new(sizeof(Node));
#else
    if (used_ == chunk_size_) grow();
    return &chunks_.back()[used_++];
#endif
  }

  struct alignas(Node) Slot {
    unsigned char bytes[sizeof(Node)];
  };
  static constexpr size_t kFullChunk = 256;  // slots

 private:
  void grow();
  [[maybe_unused]] std::vector<std::unique_ptr<Slot[]>> chunks_;
  [[maybe_unused]] size_t chunk_size_ = 0, used_ = 0;  // (unused under ASan)
};

class Graph {
 public:
  // A root graph, owning a new, empty function library.
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // A number no other graph of this process has had; symbolic tensors keep it, so that one
  // that outlives its graph (it escaped a failed trace) is recognized (graph_alive) instead of
  // read through its dangling node.
  uint64_t serial() const { return serial_; }

  // Adds a node, inferring its outputs with the op's shape function (inputs whose producer
  // is a Const pass their value). Throws what the shape function throws.
  Node* add_node(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs, ops::Attrs attrs,
                 std::vector<Node*> control_inputs = {});
  // Adds a node whose outputs the caller knows (control flow: from its branches' outputs).
  Node* add_node_with_outputs(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs,
                              ops::Attrs attrs, std::vector<DType> dtypes, std::vector<TensorShape> shapes,
                              std::vector<Node*> control_inputs = {});

  // The function library (branches, loop bodies), shared by a root graph, its bodies and
  // its clones. A body knows its parent (the graph whose tensors it may capture while traced).
  Graph* new_function(const std::string& name_hint);
  FunctionLibrary& library() const { return *library_; }
  Graph* parent() const { return parent_; }
  const std::string& function_name() const { return function_name_; }
  bool is_ancestor_of(const Graph* g) const;
  // A Const node holding a concrete value.
  Node* add_const(const Tensor& value, const std::string& name_hint = "Const");
  // A Placeholder node.
  Node* add_placeholder(DType dtype, const TensorShape& shape, const std::string& name,
                        const std::string& user_specified_name);

  // "MatMul", then "MatMul_1", ... as TensorFlow uniquifies names.
  std::string unique_name(const std::string& hint);

  const std::vector<NodePtr>& nodes() const { return nodes_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Node* node(int id) const { return nodes_[id].get(); }
  Node* find(const std::string& name) const;

  // An IdentityN of it stands for a tf.custom_gradient step (kiln::record_custom_gradient
  // while tracing, or TensorFlow's _gradient_op_type attr): differentiating its ops one by one
  // (trace/replay.h) would not apply that gradient.
  bool has_custom_gradient = false;

  // The ordered list of inputs (placeholders) and outputs of a function graph.
  std::vector<Node*> inputs;
  std::vector<Output> outputs;

  // ---- rewriting (optimizer passes) ----
  // A root graph with a copy of this graph's nodes, inputs and outputs. It shares this
  // graph's library, or uses `library` (a FunctionLibrary::clone of it) when given.
  std::unique_ptr<Graph> clone(std::shared_ptr<FunctionLibrary> library = nullptr) const;
  // A copy of this body inside `library` (FunctionLibrary::clone).
  std::unique_ptr<Graph> clone_body(FunctionLibrary* library) const;
  // Redirects every use of each key output (node inputs and graph outputs) to its value.
  void replace_uses(const std::map<std::pair<const Node*, int>, Output>& replacements);
  // Renumbers nodes in a topological order (stable: ties keep their old order), first
  // removing, if asked, nodes that no output, stateful node or input needs. Returns how
  // many were removed.
  int compact_order(bool remove_dead);

  // Name scopes: names are prefixed with "scope/" while one is pushed.
  void push_scope(const std::string& scope);
  void pop_scope();

 private:
  NodeArena arena_;  // before nodes_: destroyed after them
  std::vector<NodePtr> nodes_;
  NameTable names_;
  size_t claimed_slot_ = 0, claimed_capacity_ = 0;  // the last name start_node claimed
  std::vector<std::string> scopes_;
  std::shared_ptr<FunctionLibrary> library_owner_;  // root graphs: keeps the library alive
  FunctionLibrary* library_ = nullptr;              // bodies live in (and die with) it
  Graph* parent_ = nullptr;
  std::string function_name_;
  uint64_t serial_ = 0;
  friend class FunctionLibrary;
  Graph(FunctionLibrary* library, Graph* parent, std::string name);  // a body
  // Appends to *name a name no other has, made from `hint` as unique_name; returns its slot
  // in names_.
  size_t claim_name(const std::string& raw_hint, std::string* name);
  // A node with its name, op, inputs and attrs (with their defaults already), its outputs
  // still to fill in; finish_node adds it.
  NodePtr start_node(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs, ops::Attrs attrs,
                     std::vector<Node*> control_inputs);
  Node* finish_node(NodePtr node);
  void copy_nodes_into(Graph& g) const;
};

// True while the graph numbered `serial` exists (Graph::serial).
bool graph_alive(uint64_t serial);

// An InputInfo describing a node output (value set when the producer is a Const).
ops::InputInfo input_info(const Output& o);

}  // namespace kiln::graph
