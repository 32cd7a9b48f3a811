// What a graph's own shape arithmetic says about a shape tensor before it runs. A Reshape by
// a shape built while the graph runs (Shape(x), a slice of it, a Pack or ConcatV2 with the
// units) has dimensions known before it runs; TensorFlow's shape inference finds them
// (ShapeRefiner::ConstantPartialShape), and Graph::add_node does the same for a Reshape's
// shape, so a trace, an imported graph and the optimizer see what TensorFlow's trace sees.
// The optimizer knows more, as Grappler's shape refinement does: a GatherV2 of a shape (Keras's
// Tensordot on a sequence: [?, 128, 1024], where inference says [?, ?, 1024]) and Identity.
#pragma once
#include <optional>

#include "graph/graph.h"

namespace kiln::graph {

enum class ShapeRules {
  kShapeInference,  // what TensorFlow's shape inference evaluates (trace-time shapes match it)
  kOptimizer,       // that, plus GatherV2 and Identity of shape tensors (Grappler's refinement)
};

// The shape an int32/int64 vector output spells out, with -1 for each element not known
// before running (a literal -1 too); nullopt when not even its length is known.
std::optional<TensorShape> shape_from_shape_tensor(const Output& o, ShapeRules rules);

// Gives `now` the dimensions `more` knows and it does not. Returns false (and leaves `now`)
// when `more` knows nothing new or disagrees with it in rank or in a known dimension (the
// graph then fails at run time, as it would have).
bool refine_shape(TensorShape& now, const TensorShape& more);

}  // namespace kiln::graph
