// kiln: the ops kiln implements, described as TensorFlow's op registry describes its own
// (op name, attrs with TensorFlow's attr types and defaults). What a GraphDef or SavedModel
// may use; tests compare it with TensorFlow's registry.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct OpAttrInfo {
  std::string name;
  std::string type;  // TensorFlow's attr type: "int", "float", "bool", "type", "list(int)", "string", ...
  // TensorFlow's text form of the default ("0", "false", "DT_INT32", "[1, 1, 1, 1]", "\"NHWC\"",
  // floats with 9 significant digits, shapes as "[2, -1]" or "<unknown>"); none when a
  // NodeDef must carry the attr.
  std::optional<std::string> default_value;
};

struct OpInfo {
  std::string name;
  std::vector<OpAttrInfo> attrs;  // the attrs kiln reads, in its order; "_" ones (annotations) left out
  bool stateful = false;          // never folded, merged or pruned
  bool tfjs = false;              // TensorFlow.js's graph models have it (export-tfjs may write it)
  bool internal = false;          // made by kiln's optimizer, never saved
};

// Every op, by name.
std::vector<OpInfo> registered_ops();

}  // namespace kiln
