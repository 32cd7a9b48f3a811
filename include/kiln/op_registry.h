// kiln: the ops kiln implements, described as TensorFlow's op registry describes its own
// (op name, attrs with TensorFlow's attr types and defaults). What a GraphDef or SavedModel
// may use; tests compare it with TensorFlow's registry.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kiln/shape.h"
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln {

struct OpAttrInfo {
  std::string name;
  std::string type;  // TensorFlow's attr type: "int", "float", "bool", "type", "list(int)", "string", ...
  // TensorFlow's text form of the default ("0", "false", "DT_INT32", "[1, 1, 1, 1]", "\"NHWC\"",
  // floats with 9 significant digits, shapes as "[2, -1]" or "<unknown>"); none when a
  // NodeDef must carry the attr.
  std::optional<std::string> default_value;
  std::string api_name;  // its name in TensorFlow's Python raw_ops (its api_def may rename it)
  // A type TensorFlow derives from the variable's value: execute_op sets it from the variable.
  bool from_variable = false;
};

// One input argument, by TensorFlow's name. A list argument takes several tensors: as many
// as its number attr says (set from the list's length by generated front ends), or the rest.
struct OpArgInfo {
  std::string name;
  bool list = false;
  std::string number_attr;  // empty: none
  std::string api_name;     // its name in TensorFlow's Python raw_ops (its api_def may rename it)
};

// What a gradient does for an op: computes one, passes none (TensorFlow's NotDifferentiable,
// as comparisons), or has none yet (a gradient that must pass through it is an error).
enum class OpGradient { kDefined, kNotDifferentiable, kMissing };

struct OpInfo {
  std::string name;
  std::vector<OpArgInfo> inputs;     // in order; inputs TensorFlow passes as resource handles are not listed
  std::vector<std::string> outputs;  // TensorFlow's output arg names (one for a list output)
  int num_outputs = 0;               // -1: decided by the inputs and attrs (a list output)
  std::vector<OpAttrInfo> attrs;     // the attrs kiln reads, in its order; "_" ones (annotations) left out
  std::vector<DType> dtypes;         // the dtypes it has kernels for (of its type attr, T)
  OpGradient gradient = OpGradient::kMissing;
  bool runnable_by_name = false;  // execute_op (kiln.raw_ops) can run it without a variable
  // TensorFlow's first input is a variable's resource handle, which kiln holds as an attr:
  // execute_op runs the op given the variable as the attr of this name ("resource", "var"),
  // raw_ops' argument. Empty: no variable.
  std::string variable_arg;
  bool stateful = false;  // never folded, merged or pruned
  bool tfjs = false;      // TensorFlow.js's graph models have it (export-tfjs may write it)
  bool internal = false;  // made by kiln's optimizer, never saved
};

// Every op, by name.
std::vector<OpInfo> registered_ops();

// An attr value for execute_op: TensorFlow's attr kinds ("int", "float", "bool", "type",
// "list(int)", "string", "shape", "tensor").
using OpAttrValue =
    std::variant<int64_t, double, bool, DType, std::vector<int64_t>, std::string, TensorShape, Tensor, Variable>;

// Runs a registered op by its TensorFlow name: eagerly, or as a node when a trace is active
// (tf.raw_ops' generic form). Attrs are by name; one not given takes its default. An int
// list stands for a shape and an int for a float. InvalidArgumentError for an op that
// cannot be run by name (unknown, optimizer-internal, fed or needing a variable or a
// function), an unknown or missing attr, a value of the wrong kind, or a wrong input count.
// An op that takes a variable gets it as the attr OpInfo::variable_arg names.
std::vector<Tensor> execute_op(const std::string& name, const std::vector<Tensor>& inputs,
                               const std::map<std::string, OpAttrValue>& attrs = {});

}  // namespace kiln
