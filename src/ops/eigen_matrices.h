// Eigen's dense decompositions (LU, Cholesky, QR, SVD, self-adjoint eigensolver) for the
// linalg op families, and the row-major matrix types their kernels map tensors' memory with.
// Included by those families only: the decompositions are heavy headers.
#pragma once

#include "kernels/eigen_core.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's AVX-512 headers: see eigen_core.h
#endif
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace kiln::ops {

// One matrix of a batch, row-major as kiln's tensors are.
template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

}  // namespace kiln::ops
