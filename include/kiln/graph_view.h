// kiln: a traced graph as a user inspects it (operations with their inputs, attrs and
// outputs) and as TensorFlow reads it (GraphDef, protobuf text or bytes).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace kiln {

// One operation of a traced graph, as a user inspects it.
struct Operation {
  std::string name;                          // "MatMul"
  std::string type;                          // TensorFlow op name: "MatMul"
  std::vector<std::string> inputs;           // "x:0", "MatMul:0"
  std::vector<std::string> control_inputs;   // node names
  std::map<std::string, std::string> attrs;  // attr name -> text
  std::vector<std::string> outputs;          // "MatMul:0 float32 (1, 1)"
};

class GraphView {
 public:
  std::vector<Operation> operations;
  const Operation* find(const std::string& name) const;
  size_t size() const { return operations.size(); }
};

// GraphDef: the protobuf GraphDef of a concrete function (wire-compatible with TensorFlow's).
class GraphDef {
 public:
  std::string str() const { return text_; }                 // protobuf text format, as TF prints it
  const std::string& serialized() const { return bytes_; }  // binary protobuf
  GraphDef(std::string text, std::string bytes) : text_(std::move(text)), bytes_(std::move(bytes)) {}

 private:
  std::string text_, bytes_;
};

}  // namespace kiln
