// TensorFlow's checkpoint format (TensorBundle), both ways: <prefix>.index, a table of
// entries (dtype, shape, place, checksum) and <prefix>.data-00000-of-00001, the tensors'
// bytes. TensorFlow reads what write_checkpoint writes (tf.train.load_checkpoint); a
// CheckpointReader reads what TensorFlow writes (tf.train.Checkpoint, tf.raw_ops.SaveV2, the
// variables/ of a SavedModel), treating the files as hostile: every size, offset and checksum
// is checked, and nothing is trusted to bound an allocation.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// Writes the tensors under their names (unique, any bytes but empty) as one shard. The data
// file is written first and the index last, each to a temporary name renamed into place, so
// an index that exists is complete. Creates the prefix's directory if needed.
void write_checkpoint(const std::string& prefix, const std::vector<std::pair<std::string, Tensor>>& tensors);

class CheckpointReader {
 public:
  // Reads and checks the index (NotFoundError without it, DataLossError if malformed).
  explicit CheckpointReader(const std::string& prefix);
  // The same checks over a one-shard checkpoint's two files already in memory.
  static CheckpointReader from_bytes(const std::string& index, std::string data);

  std::vector<std::string> tensor_names() const;  // sorted bytewise
  bool has_tensor(const std::string& name) const;
  // TensorFlow's name of the entry's dtype ("float32", "string", "half", ...).
  std::string dtype_name(const std::string& name) const;
  std::vector<int64_t> shape(const std::string& name) const;

  // The values, checksum-verified. NotFoundError for an unknown name; UnimplementedError
  // for a dtype kiln lacks (string entries: get_strings).
  Tensor get_tensor(const std::string& name) const;
  // A string tensor's elements, flattened in row-major order.
  std::vector<std::string> get_strings(const std::string& name) const;

 private:
  CheckpointReader(const std::string& prefix, const std::string& index, std::shared_ptr<const std::string> data);
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// One object of an object-based checkpoint's graph (TensorFlow's TrackableObjectGraph; node 0
// is the root): its children by local name, and the values saved for it (a variable's
// "VARIABLE_VALUE", with its checkpoint key).
struct CheckpointObject {
  struct Child {
    int node = 0;
    std::string name;
  };
  struct Value {
    std::string name;
    std::string full_name;
    std::string checkpoint_key;
  };
  std::vector<Child> children;
  std::vector<Value> values;
};

// write_checkpoint plus the object graph, serialized under "_CHECKPOINTABLE_OBJECT_GRAPH" as
// tf.train.Checkpoint writes it, so TensorFlow's Checkpoint.restore reads it back. Child and
// value references are checked (InvalidArgumentError).
void write_object_checkpoint(const std::string& prefix, const std::vector<CheckpointObject>& objects,
                             const std::vector<std::pair<std::string, Tensor>>& tensors);

// The object graph a checkpoint holds: NotFoundError for a checkpoint without one (written
// by name, like tf.compat.v1's Saver), DataLossError for a malformed one.
std::vector<CheckpointObject> read_object_graph(const CheckpointReader& reader);

}  // namespace kiln
