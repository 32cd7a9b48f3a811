// What a kiln::Variable holds: a shared handle to its state (the resource its ops name).
#pragma once
#include <memory>

#include "ops/variable_state.h"

namespace kiln::detail {
struct VariableHandle {
  std::shared_ptr<ops::VariableState> state;
};
}  // namespace kiln::detail
