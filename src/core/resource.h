// A stateful object a graph refers to by handle (today: variables). Ops hold it in an attr;
// savers and exporters describe it through this interface, without knowing its class.
#pragma once
#include <memory>
#include <string>

#include "kiln/tensor.h"

namespace kiln {

struct Resource {
  virtual ~Resource() = default;
  virtual std::string resource_name() const = 0;
  // What it holds, as a GraphDef declares it (VarHandleOp's dtype and shape).
  virtual DType dtype() const = 0;
  virtual const TensorShape& shape() const = 0;
  // Its value now, immutable (later writes do not change it); throws if it has none yet.
  virtual Tensor snapshot() const = 0;

  // Whether a tape records its reads without being asked (TensorFlow's trainable); a
  // non-trainable resource is recorded only when watched explicitly.
  bool trainable = true;
};

}  // namespace kiln
