// prune: non-strict execution made visible in the graph. Removes nodes that neither an
// output nor a stateful op needs (stateful ops and their order are kept).
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {
class Prune : public Pass {
 public:
  const char* name() const override { return "prune"; }
  bool run(graph::Graph& g, const PassContext&) override { return g.compact_order(true) > 0; }
};
}  // namespace

std::unique_ptr<Pass> make_prune() { return std::make_unique<Prune>(); }

}  // namespace kiln::optimize
