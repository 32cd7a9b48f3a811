// A program outside the kiln tree, built against the installed package.
#include <kiln/kiln.h>

#include <iostream>

int main() {
  using namespace kiln;
  auto f = function([](Tensor x, Tensor y, Tensor b) { return matmul(x, y) + b; });
  std::cout << f(constant<float>({1, 2}, {1, 2}), constant<float>({2, 3}, {2, 1}), constant(4.0f)) << "\n";
}
