#include <kiln/kiln.h>
#include <iostream>
int main() { std::cout << kiln::constant(1.0) << "\n"; }
