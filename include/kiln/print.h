// kiln::print: like tf.print, a runtime op. It prints on every call, eagerly or inside a
// traced function (where std::cout would print only while tracing).
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

namespace detail {
struct PrintPiece {
  bool is_tensor;
  Tensor tensor;
  std::string text;
};
template <class A>
PrintPiece print_piece(const A& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_same_v<D, Tensor>)
    return {true, a, ""};
  else if constexpr (std::is_same_v<D, bool>)
    return {false, Tensor(), a ? "True" : "False"};
  else if constexpr (std::is_arithmetic_v<D>)
    return {false, Tensor(), std::to_string(a)};
  else
    return {false, Tensor(), std::string(a)};
}
void print_pieces(const std::vector<PrintPiece>& pieces);
}  // namespace detail

// Tensors, numbers and strings, separated by spaces, one line to stderr.
template <class... Args>
void print(const Args&... args) {
  detail::print_pieces(std::vector<detail::PrintPiece>{detail::print_piece(args)...});
}

// A concrete tensor as print() writes it: numpy-like, at most `summarize` items at each end
// of every dimension ("[1 2 ... 9 10]").
std::string print_string(const Tensor& t, int summarize = 3);

}  // namespace kiln
