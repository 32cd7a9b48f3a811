// A stateful object a graph refers to by handle (today: variables). Ops hold it in an attr.
#pragma once
#include <memory>
#include <string>

namespace kiln {

struct Resource {
  virtual ~Resource() = default;
  virtual std::string resource_name() const = 0;
};

}  // namespace kiln
