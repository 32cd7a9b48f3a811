// TensorFlow's StructuredValue (nested Python values: tuples, lists, dicts, named tuples,
// TensorSpecs, None and scalars), as the SavedModel's object graph holds a function's input and
// output structures, converted to and from JSON for the front ends:
//   null | {"tensor": {"name": s, "shape": [d, ...] or null, "dtype": "float32"}}
//   | {"tuple": [...]} | {"list": [...]} | {"dict": {key: ...}} | {"named_tuple": [name, [[key, ...], ...]]}
//   | {"int": n} | {"float": x} | {"string": s} | {"bool": b}
// A kind kiln does not model (a TypeSpec, a numpy value) reads as {"unsupported": "<field>"}.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "saved_model.pb.h"

namespace kiln::io {

// Throws InvalidArgumentError naming `where` for JSON that is not a structure.
void structure_from_json(const nlohmann::json& j, tensorflow::StructuredValue* out, const std::string& where);
// The file's structure; too deep a nesting or a bad dtype is InvalidArgumentError.
nlohmann::json structure_to_json(const tensorflow::StructuredValue& v, const std::string& where);
// Its TensorSpecs in TensorFlow's flattening order (sequences in order, dicts by sorted key):
// the tensor arguments of the function it describes.
std::vector<TensorSpec> flat_tensor_specs(const tensorflow::StructuredValue& v, const std::string& where);

}  // namespace kiln::io
