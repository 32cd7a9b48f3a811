// A program outside the kiln tree, built against the installed package. With a directory
// argument it also saves its function there, for the installed `kiln run` to serve.
#include <kiln/kiln.h>

#include <iostream>

int main(int argc, char** argv) {
  using namespace kiln;
  auto f = function([](Tensor x, Tensor y, Tensor b) { return matmul(x, y) + b; }, {.arg_names = {"x", "y", "b"}});
  const Tensor x = constant<float>({1, 2}, {1, 2}), y = constant<float>({2, 3}, {2, 1}), b = constant(4.0f);
  std::cout << f(x, y, b) << "\n";
  if (argc > 1) save(argv[1], f.get_concrete_function(x, y, b));
}
