// Object-based checkpoints: the TrackableObjectGraph beside the tensors, both ways.
#include <string>

#include "kiln/checkpoint.h"
#include "saved_model.pb.h"  // generated from src/io/proto/saved_model.proto

namespace kiln {
namespace {

constexpr const char* kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr size_t kMaxObjectGraphBytes = size_t{256} << 20;

void check_references(const std::vector<CheckpointObject>& objects, bool reading) {
  const auto bad = [&](const std::string& what) {
    if (reading) throw DataLossError("checkpoint object graph: " + what);
    throw InvalidArgumentError("write_object_checkpoint: " + what);
  };
  if (objects.empty()) bad("no root object");
  for (size_t i = 0; i < objects.size(); ++i)
    for (const CheckpointObject::Child& c : objects[i].children)
      if (c.node < 0 || static_cast<size_t>(c.node) >= objects.size())
        bad("object " + std::to_string(i) + " has child '" + c.name + "' -> node " + std::to_string(c.node) + " of " +
            std::to_string(objects.size()));
}

}  // namespace

void write_object_checkpoint(const std::string& prefix, const std::vector<CheckpointObject>& objects,
                             const std::vector<std::pair<std::string, Tensor>>& tensors) {
  check_references(objects, false);
  tensorflow::TrackableObjectGraph graph;
  for (const CheckpointObject& o : objects) {
    auto* node = graph.add_nodes();
    for (const CheckpointObject::Child& c : o.children) {
      auto* ref = node->add_children();
      ref->set_node_id(c.node);
      ref->set_local_name(c.name);
    }
    for (const CheckpointObject::Value& v : o.values) {
      auto* attr = node->add_attributes();
      attr->set_name(v.name);
      attr->set_full_name(v.full_name);
      attr->set_checkpoint_key(v.checkpoint_key);
    }
  }
  std::vector<std::pair<std::string, Tensor>> all = tensors;
  all.emplace_back(kObjectGraphKey, constant(graph.SerializeAsString()));
  write_checkpoint(prefix, all);
}

std::vector<CheckpointObject> read_object_graph(const CheckpointReader& reader) {
  if (!reader.has_tensor(kObjectGraphKey))
    throw NotFoundError("The checkpoint has no object graph (" + std::string(kObjectGraphKey) +
                        "): it was written by name, not by tf.train.Checkpoint");
  const std::vector<std::string> bytes = reader.get_strings(kObjectGraphKey);
  if (bytes.size() != 1 || bytes[0].size() > kMaxObjectGraphBytes)
    throw DataLossError("checkpoint object graph: expected one serialized TrackableObjectGraph");
  tensorflow::TrackableObjectGraph graph;
  if (!graph.ParseFromString(bytes[0])) throw DataLossError("checkpoint object graph: not a TrackableObjectGraph");
  std::vector<CheckpointObject> objects;
  objects.reserve(graph.nodes_size());
  for (const auto& node : graph.nodes()) {
    CheckpointObject o;
    for (const auto& c : node.children()) o.children.push_back({.node = c.node_id(), .name = c.local_name()});
    for (const auto& a : node.attributes())
      o.values.push_back({.name = a.name(), .full_name = a.full_name(), .checkpoint_key = a.checkpoint_key()});
    objects.push_back(std::move(o));
  }
  check_references(objects, true);
  return objects;
}

}  // namespace kiln
