// Eigen's dense decompositions (LU, Cholesky, QR, SVD, self-adjoint eigensolver) for the
// linalg op families, the row-major matrix types their kernels map tensors' memory with, and
// the shape of their rows.
// Included by those families only: the decompositions are heavy headers.
#pragma once

#include <utility>
#include <vector>

#include "kernels/eigen_core.h"
#include "ops/op_def.h"

KILN_EIGEN_HEADERS_BEGIN
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
KILN_EIGEN_HEADERS_END

namespace kiln::ops {

// One matrix of a batch, row-major as kiln's tensors are.
template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

// The row of a pure float/double linalg op: its named inputs and outputs (TensorFlow's
// argument names), attrs, shape function, kernels and gradient (null: not differentiable).
inline OpDef linalg_row(const char* name, std::vector<ArgSpec> inputs, std::vector<const char*> outputs,
                        std::vector<AttrSpec> attrs, ShapeFn infer, std::array<KernelFn, kNumDTypes> kernels,
                        GradFn grad = nullptr) {
  const int num_inputs = static_cast<int>(inputs.size()), num_outputs = static_cast<int>(outputs.size());
  return {.name = name,
          .num_inputs = num_inputs,
          .num_outputs = num_outputs,
          .input_args = std::move(inputs),
          .traits = kPure,
          .attr_specs = std::move(attrs),
          .infer = infer,
          .kernels = kernels,
          .grad = grad,
          .output_args = std::move(outputs)};
}

}  // namespace kiln::ops
