// Validated conversion of GraphDef values (dtypes, shapes, tensors, attrs) into kiln's.
// Every function throws InvalidArgumentError naming `where` instead of trusting the file.
#pragma once
#include <string>

#include "graph.pb.h"
#include "ops/op_def.h"

namespace kiln::io {

// The dtype of a graph's tensor (a node's output, a function's argument): any kiln has,
// Variant included.
DType dtype_from_proto(int type, const std::string& where);
// The dtype of stored data (a checkpoint entry, a signature's tensor): false for a DataType
// kiln lacks and for DT_VARIANT, whose elements are objects no file may hand kiln as bytes.
// (Strings are values: files hold their bytes.)
bool kiln_dtype_of(int type, DType* out);
TensorShape shape_from_proto(const tensorflow::TensorShapeProto& p, const std::string& where);
Tensor tensor_from_proto(const tensorflow::TensorProto& p, const std::string& where);

using ops::attr_kind_name;
using ops::AttrKind;  // declared with each op's attrs (ops::AttrSpec)
// Converts a non-function, non-resource attr; function attrs get only their names here.
ops::AttrValue attr_from_proto(const tensorflow::AttrValue& p, AttrKind kind, const std::string& where);

}  // namespace kiln::io
