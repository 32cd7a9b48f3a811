#include "core/dtype_table.h"
#include "kiln/errors.h"

namespace kiln {

std::string_view dtype_name(DType d) {
  if (static_cast<int>(d) >= kNumDTypes) return "invalid";
  return detail::dtype_info(d).name;
}

bool is_floating(DType d) { return detail::dtype_info(d).floating; }
bool is_integer(DType d) { return detail::dtype_info(d).integer; }
bool is_complex(DType d) { return detail::dtype_info(d).complex; }

void detail::fail_has_no_values(DType d) {
  if (d == DType::String) throw InvalidArgumentError("a string tensor holds byte strings, not numbers");
  throw InvalidArgumentError("a variant tensor holds opaque objects (a TensorList), not values");
}

}  // namespace kiln
