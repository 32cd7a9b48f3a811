// kiln::GraphScope: a graph built by hand, outside any traced function (TensorFlow's
// FuncGraph(...).as_default() with tf.compat.v1.placeholder). While a scope is alive on a
// thread, the ops that thread dispatches add nodes to the scope's graph instead of running;
// placeholder() makes the graph's symbolic inputs. Front ends use it to learn what a
// computation would produce (shapes, dtypes) without running it, as Keras's functional API
// does for every layer call. The graph is discarded with the scope; a tensor kept past it is
// refused by any op that receives it.
#pragma once
#include <memory>
#include <string>

#include "kiln/dtype.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"

namespace kiln {

class GraphScope {
 public:
  GraphScope();
  // Scopes end in reverse order of creation on the thread that made them.
  ~GraphScope();
  GraphScope(const GraphScope&) = delete;
  GraphScope& operator=(const GraphScope&) = delete;

  // A new input of the graph; unknown dims are -1 in `shape` (or an unknown-rank shape).
  Tensor placeholder(DType dtype, const TensorShape& shape, const std::string& name = "Placeholder");
  // Whether this scope's graph is the one ops on this thread are added to right now.
  bool innermost() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
