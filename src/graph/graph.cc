#include "graph/graph.h"

#include <atomic>
#include <charconv>
#include <mutex>
#include <unordered_set>

#include "core/format.h"
#include "eager/execute.h"
#include "graph/shape_tensor.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::graph {

const ops::TensorImpl* Node::const_value() const {
  if (!op->has(ops::kConstValue)) return nullptr;
  return attrs.tensor(ops::kConstValueAttr).impl();
}

Tensor Node::output(int i) {
  const TensorShape& s = out_shapes[i];
  return Tensor(detail::make_symbolic(out_dtypes[i], s.dims(), s.unknown_rank(), this, i, graph->serial()));
}

ops::InputInfo input_info(const Output& o) {
  const TensorShape& s = o.node->out_shapes[o.index];
  return ops::InputInfo{o.node->out_dtypes[o.index], &s.dims(), s.unknown_rank(), o.node->const_value()};
}

size_t Graph::claim_name(const std::string& raw_hint, std::string* name) {
  for (const auto& s : scopes_) {
    *name += s;
    *name += '/';
  }
  *name += raw_hint;
  // A name not given out yet is the name; otherwise hint_N, counting on from the hint's
  // uses so far and skipping names already taken (TensorFlow's Graph.unique_name, which
  // also folds case; kiln keeps an imported graph's "Conv" and "conv" apart).
  bool made = false;
  NameTable::Entry* hint = names_.try_emplace(*name, &made);
  if (hint->hint_uses++ == 0 && !hint->node) return names_.slot_of(hint);
  int uses = hint->hint_uses;
  const size_t hint_slot = names_.slot_of(hint), capacity = names_.capacity();  // entries move as the table grows
  const size_t base = name->size();
  while (true) {
    // The candidate written in place after the hint: no string made per try.
    char digits[16];
    const auto end = std::to_chars(digits, digits + sizeof digits, uses - 1).ptr;
    name->resize(base);
    *name += '_';
    name->append(digits, end);
    NameTable::Entry* candidate = names_.try_emplace(*name, &made);
    if (made) {
      candidate->hint_uses = 1;
      const size_t slot = names_.slot_of(candidate);
      (names_.capacity() == capacity ? names_.slot(hint_slot) : *names_.find(std::string_view(*name).substr(0, base)))
          .hint_uses = uses;
      return slot;
    }
    ++uses;
  }
}

std::string Graph::unique_name(const std::string& hint) {
  std::string name;
  claim_name(hint, &name);
  return name;
}

void Graph::push_scope(const std::string& scope) { scopes_.push_back(unique_name(scope).substr(0)); }
void Graph::pop_scope() { scopes_.pop_back(); }

Node* Graph::find(const std::string& name) const {
  const NameTable::Entry* e = names_.find(name);
  return e ? e->node : nullptr;
}

Node* Graph::add_node(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs_in,
                      ops::Attrs attrs, std::vector<Node*> control_inputs) {
  attrs = ops::with_defaults(op, std::move(attrs));
  // Most ops have a few inputs: their infos on the stack, not one allocation per node.
  constexpr size_t kFewInputs = 8;
  ops::InputInfo few[kFewInputs];
  std::vector<ops::InputInfo> many;
  ops::InputInfo* infos = few;
  if (inputs_in.size() > kFewInputs) {
    many.resize(inputs_in.size());
    infos = many.data();
  }
  for (size_t i = 0; i < inputs_in.size(); ++i) infos[i] = input_info(inputs_in[i]);
  ops::InferContext ctx{op, infos, static_cast<int>(inputs_in.size()), attrs};
  ops::UnseenValueProbe probe;
  eager::infer_concrete(ctx);

  // Named only now: an op its shape function refuses takes no name.
  auto node = start_node(op, name_hint, std::move(inputs_in), std::move(attrs), std::move(control_inputs));
  for (int i = 0; i < ctx.num_outputs; ++i) {
    node->out_dtypes.push_back(ctx.out(i).dtype);
    node->out_shapes.push_back(std::move(ctx.out(i).shape));
  }
  // An output shaped by a shape built at run time (OpDef::shape_input): the dimensions the
  // graph's shape arithmetic already knows (shape_tensor.h), as TensorFlow's shape inference
  // finds them.
  const std::vector<Output>& ins = node->inputs;
  if (const int si = op.shape_input; si >= 0 && si < static_cast<int>(ins.size()) && !node->out_shapes.empty() &&
                                     !ins[si].node->const_value() && !node->out_shapes[0].is_fully_defined())
    if (const auto known = shape_from_shape_tensor(ins[si], ShapeRules::kShapeInference))
      refine_shape(node->out_shapes[0], *known);
  node->kernel_dtype = ctx.kernel_dtype;
  node->shape_needs_values = probe.saw_unseen_value();
  return finish_node(std::move(node));
}

Node* Graph::add_node_with_outputs(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs,
                                   ops::Attrs attrs, std::vector<DType> dtypes, std::vector<TensorShape> shapes,
                                   std::vector<Node*> control_inputs) {
  auto node =
      start_node(op, name_hint, std::move(inputs), ops::with_defaults(op, std::move(attrs)), std::move(control_inputs));
  node->out_dtypes = SmallVec<DType, 2>(dtypes.begin(), dtypes.end());
  node->out_shapes = std::move(shapes);
  return finish_node(std::move(node));
}

NodePtr Graph::start_node(const ops::OpDef& op, const std::string& name_hint, std::vector<Output> inputs,
                          ops::Attrs attrs, std::vector<Node*> control_inputs) {
  NodePtr node(new (arena_.allocate()) Node());
  claimed_slot_ = claim_name(name_hint, &node->name);
  claimed_capacity_ = names_.capacity();
  node->op = &op;
  node->attrs = std::move(attrs);
  node->inputs = std::move(inputs);
  node->control_inputs = std::move(control_inputs);
  return node;
}

Node* Graph::finish_node(NodePtr node) {
  node->id = static_cast<int>(nodes_.size());
  node->graph = this;
  node->stateful = node->op->is_stateful();
  Node* raw = node.get();
  // The entry start_node claimed, without hashing again, unless the table grew or another
  // node was named in between.
  NameTable::Entry* e = nullptr;
  if (claimed_capacity_ == names_.capacity()) {
    NameTable::Entry& claimed = names_.slot(claimed_slot_);
    if (claimed.hash && names_.name_of(claimed) == raw->name) e = &claimed;
  }
  (e ? e : names_.find(raw->name))->node = raw;
  nodes_.push_back(std::move(node));
  return raw;
}

namespace {
// Full-size arena chunks whose graphs died, for the next graphs (NodeArena says why): at most
// kPooledChunks (4 MB), so a large graph's memory goes back to the system.
constexpr size_t kPooledChunks = 32;
std::mutex g_chunks_mu;
std::vector<std::unique_ptr<NodeArena::Slot[]>>& pooled_chunks() {
  static auto* pool = new std::vector<std::unique_ptr<NodeArena::Slot[]>>();  // never destroyed: graphs may die at exit
  return *pool;
}
}  // namespace

void NodeArena::grow() {
  chunk_size_ = chunks_.empty() ? 8 : std::min(2 * chunk_size_, kFullChunk);
  used_ = 0;
  if (chunk_size_ == kFullChunk) {
    std::lock_guard<std::mutex> lock(g_chunks_mu);
    auto& pool = pooled_chunks();
    if (!pool.empty()) {
      chunks_.push_back(std::move(pool.back()));
      pool.pop_back();
      return;
    }
  }
  chunks_.push_back(std::make_unique_for_overwrite<Slot[]>(chunk_size_));
}

NodeArena::~NodeArena() {
  // Chunks grow 8, 16, 32, 64, 128, then 256 slots: the full-size ones are those after these.
  constexpr size_t kSmallChunks = 5;
  if (chunks_.size() <= kSmallChunks) return;
  std::lock_guard<std::mutex> lock(g_chunks_mu);
  auto& pool = pooled_chunks();
  while (chunks_.size() > kSmallChunks && pool.size() < kPooledChunks) {
    pool.push_back(std::move(chunks_.back()));
    chunks_.pop_back();
  }
}

namespace {
// The serials of the graphs that exist. Only cold paths ask (a tensor's name, a tensor from
// another graph), so a mutex serves.
std::mutex g_live_mu;
std::unordered_set<uint64_t>& live_graphs() {
  static auto* live = new std::unordered_set<uint64_t>();  // never destroyed: graphs may die at exit
  return *live;
}
uint64_t register_graph() {
  static std::atomic<uint64_t> next{1};
  const uint64_t serial = next.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g_live_mu);
  live_graphs().insert(serial);
  return serial;
}
}  // namespace

bool graph_alive(uint64_t serial) {
  std::lock_guard<std::mutex> lock(g_live_mu);
  return live_graphs().count(serial) != 0;
}

Graph::Graph()
    : library_owner_(std::make_shared<FunctionLibrary>()), library_(library_owner_.get()), serial_(register_graph()) {}

Graph::Graph(FunctionLibrary* library, Graph* parent, std::string name)
    : library_(library), parent_(parent), function_name_(std::move(name)), serial_(register_graph()) {}

Graph::~Graph() {
  std::lock_guard<std::mutex> lock(g_live_mu);
  live_graphs().erase(serial_);
}

Graph* Graph::new_function(const std::string& name_hint) { return library_->add(name_hint, this); }

bool Graph::is_ancestor_of(const Graph* g) const {
  for (const Graph* p = g ? g->parent_ : nullptr; p; p = p->parent_)
    if (p == this) return true;
  return false;
}

Node* Graph::add_const(const Tensor& value, const std::string& name_hint) {
  return add_node(ops::op::Const(), name_hint, {}, ops::Attrs{value.dtype(), value});
}

Node* Graph::add_placeholder(DType dtype, const TensorShape& shape, const std::string& name,
                             const std::string& user_specified_name) {
  return add_node(ops::op::Placeholder(), name, {}, ops::Attrs{dtype, shape, user_specified_name});
}

}  // namespace kiln::graph

namespace kiln::graph {

void Graph::copy_nodes_into(Graph& g) const {
  g.has_custom_gradient = has_custom_gradient;
  g.nodes_.reserve(g.nodes_.size() + nodes_.size());
  std::vector<Node*> map(nodes_.size());
  for (const auto& n : nodes_) {
    NodePtr c(new (g.arena_.allocate()) Node(*n));
    c->graph = &g;
    for (Output& in : c->inputs) in.node = map[in.node->id];
    for (Node*& ci : c->control_inputs) ci = map[ci->id];
    map[n->id] = c.get();
    g.nodes_.push_back(std::move(c));
  }
  for (const Node* in : inputs) g.inputs.push_back(map[in->id]);
  for (const Output& o : outputs) g.outputs.push_back(Output{map[o.node->id], o.index});
  // The names as they were (a pruned node's too, so that none is given out again), each
  // naming the copy of its node.
  g.names_ = names_;
  g.names_.for_each([&](NameTable::Entry& e) {
    if (e.node) e.node = map[e.node->id];
  });
}

std::unique_ptr<Graph> Graph::clone(std::shared_ptr<FunctionLibrary> library) const {
  if (!library) library = library_owner_;
  if (!library) throw InternalError("Graph::clone of a function body: clone its library instead");
  // (The body constructor: a root graph's own would make a library only to drop it.)
  std::unique_ptr<Graph> g(new Graph(library.get(), nullptr, function_name_));
  g->library_owner_ = std::move(library);
  copy_nodes_into(*g);
  return g;
}

std::unique_ptr<Graph> Graph::clone_body(FunctionLibrary* library) const {
  std::unique_ptr<Graph> g(new Graph(library, nullptr, function_name_));
  copy_nodes_into(*g);
  return g;
}

void Graph::replace_uses(const std::map<std::pair<const Node*, int>, Output>& repl) {
  if (repl.empty()) return;
  // Follows chains a -> b -> c to their ends. Each key's end is remembered, so a chain is
  // walked once however many inputs lead into it: linear in the replacements, not
  // quadratic (a 20,000-op Neg chain once took seconds). A walk longer than the map is a
  // cycle of replacements.
  std::map<std::pair<const Node*, int>, Output> end_of;
  std::vector<std::pair<const Node*, int>> path;
  // Most inputs come from nodes no key names: one flag per node answers them without a
  // search of the map (a pass's replacements against a graph of thousands of inputs).
  std::vector<char> keyed(nodes_.size(), 0);
  auto ours = [&](const Node* x) {
    return x->id >= 0 && static_cast<size_t>(x->id) < nodes_.size() && nodes_[x->id].get() == x;
  };
  for (const auto& entry : repl)
    if (ours(entry.first.first)) keyed[entry.first.first->id] = 1;
  auto fix = [&](Output& o) {
    path.clear();
    while (true) {
      if (ours(o.node) && !keyed[o.node->id]) break;
      const std::pair<const Node*, int> key{o.node, o.index};
      if (auto done = end_of.find(key); done != end_of.end()) {
        o = done->second;
        break;
      }
      auto it = repl.find(key);
      if (it == repl.end()) break;
      if (path.size() > repl.size())
        throw InternalError("replace_uses: the replacements of " + o.node->name + " form a cycle");
      path.push_back(key);
      o = it->second;
    }
    for (const auto& key : path) end_of.emplace(key, o);
  };
  for (auto& n : nodes_)
    for (Output& in : n->inputs) fix(in);
  for (Output& o : outputs) fix(o);
}

int Graph::compact_order(bool remove_dead) {
  const size_t n = nodes_.size();
  std::vector<char> live(n, remove_dead ? 0 : 1);
  std::vector<Node*> stack;
  auto mark = [&](Node* x) {
    if (!live[x->id]) {
      live[x->id] = 1;
      stack.push_back(x);
    }
  };
  for (const Output& o : outputs) mark(o.node);
  for (Node* in : inputs) mark(in);
  for (auto& x : nodes_)
    if (x->stateful) mark(x.get());
  while (!stack.empty()) {
    Node* x = stack.back();
    stack.pop_back();
    for (const Output& in : x->inputs) mark(in.node);
    for (Node* c : x->control_inputs) mark(c);
  }
  // Depth-first over live nodes in id order, each node after its inputs: a graph already in
  // order keeps it, and a node a rewrite appended moves just before its first user. O(n), no
  // allocation per node. Nothing moves until the order is known, so a cycle leaves the graph
  // as it was.
  enum : char { kNew, kOpen, kDone };
  std::vector<char> state(n, kNew);
  std::vector<int> order_ids;
  order_ids.reserve(n);
  struct Visit {
    int id, next;  // next: index over inputs, then control inputs
  };
  std::vector<Visit> path;
  for (size_t root = 0; root < n; ++root) {
    if (!live[root] || state[root] != kNew) continue;
    state[root] = kOpen;
    path.push_back({static_cast<int>(root), 0});
    while (!path.empty()) {
      const int id = path.back().id;
      const Node& x = *nodes_[id];
      const int k = path.back().next++;
      const int num_data = static_cast<int>(x.inputs.size());
      if (k == num_data + static_cast<int>(x.control_inputs.size())) {
        state[id] = kDone;
        order_ids.push_back(id);
        path.pop_back();
        continue;
      }
      const int dep = k < num_data ? x.inputs[k].node->id : x.control_inputs[k - num_data]->id;
      if (state[dep] == kNew) {
        state[dep] = kOpen;
        path.push_back({dep, 0});
      } else if (state[dep] == kOpen) {  // a rewrite made a cycle: say so, never drop nodes
        size_t on_cycle = 1;
        while (path[path.size() - on_cycle].id != dep) ++on_cycle;
        throw InternalError("compact_order: " + std::to_string(on_cycle) + " live nodes are on a cycle");
      }
    }
  }
  std::vector<NodePtr> order;
  order.reserve(order_ids.size());
  for (int id : order_ids) order.push_back(std::move(nodes_[id]));
  const int removed = static_cast<int>(n - order.size());
  for (auto& x : nodes_)
    if (x) names_.find(x->name)->node = nullptr;  // the dead (live nodes were moved out)
  nodes_ = std::move(order);
  for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i]->id = static_cast<int>(i);
  return removed;
}

}  // namespace kiln::graph
