// Validated conversion of GraphDef values (dtypes, shapes, tensors, attrs) into kiln's.
// Every function throws InvalidArgumentError naming `where` instead of trusting the file.
#pragma once
#include <string>

#include "graph.pb.h"
#include "ops/op_def.h"

namespace kiln::io {

DType dtype_from_proto(int type, const std::string& where);
// The same without throwing: false for a DataType kiln lacks.
bool kiln_dtype_of(int type, DType* out);
ops::PartialShape shape_from_proto(const tensorflow::TensorShapeProto& p, const std::string& where);
TensorShape full_shape(const ops::PartialShape& s);
Tensor tensor_from_proto(const tensorflow::TensorProto& p, const std::string& where);

// What an attr of a given name holds. Attr names mean the same thing across kiln's ops
// (as across TensorFlow's), so one table describes them all; a test checks that every
// op's attr names are in it.
enum class AttrKind {
  kInt,
  kFloat,
  kBool,
  kType,
  kIntList,
  kString,
  kShape,
  kTensor,
  kFunc,
  kFuncList,
  kResource,
  kUnknown
};
AttrKind attr_kind(const std::string& name);
const char* attr_kind_name(AttrKind k);
// TensorFlow's default for an attr name kiln's ops use, for NodeDefs written with default
// attrs stripped (as TensorFlow's SavedModels are); false when the attr has no default.
bool attr_default(const std::string& name, ops::AttrValue* out);
// Converts a non-function, non-resource attr; function attrs get only their names here.
ops::AttrValue attr_from_proto(const tensorflow::AttrValue& p, AttrKind kind, const std::string& where);

}  // namespace kiln::io
