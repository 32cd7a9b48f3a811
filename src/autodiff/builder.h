// The GradBuilder that tapes hand to gradient functions: every op goes through dispatch(),
// so gradients run now when eager and become nodes of the graph being traced otherwise.
#pragma once
#include "ops/gradient.h"

namespace kiln::autodiff {

class Builder final : public ops::GradBuilder {
 public:
  std::vector<Tensor> emit(const ops::OpDef& op, const Tensor* const* in, int n, const ops::Attrs& attrs) override;
  Tensor constant(const Tensor& value) override;
  const ops::TensorImpl* value_of(const Tensor& t) override;
  void branch_gradient(ops::GradContext& c) override;
};

}  // namespace kiln::autodiff
