// kiln::switch_case, the one control-flow builder that is not a template: eagerly it runs the
// chosen branch; while tracing, a Case node (trace/control_flow.cc builds it).
#include "kiln/control_flow.h"

namespace kiln {

Tensor switch_case(const Tensor& index, const std::vector<std::function<Tensor()>>& branches) {
  if (branches.empty()) throw InvalidArgumentError("switch_case needs at least one branch");
  if (!detail::tracing_active()) {
    int64_t i = index.item<int32_t>();
    if (i < 0 || i >= static_cast<int64_t>(branches.size())) i = static_cast<int64_t>(branches.size()) - 1;
    return branches[i]();
  }
  std::vector<detail::Branch> bs;
  for (const auto& b : branches) bs.push_back([&b] { return std::vector<Tensor>{b()}; });
  return detail::build_case(index, bs)[0];
}

}  // namespace kiln
