// kiln::print: builds the KilnPrint op (text fixed now, tensors formatted when it runs).
#include "kiln/print.h"

#include <string>

#include "api/api_util.h"
#include "core/format.h"

namespace kiln::detail {

void print_pieces(const std::vector<PrintPiece>& pieces) {
  std::string tmpl;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i) tmpl += " ";
    if (pieces[i].is_tensor) {
      if (!pieces[i].tensor.defined()) throw InvalidArgumentError("print: empty Tensor [Op:KilnPrint]");
      tensors.push_back(pieces[i].tensor);
      tmpl += '\x01';  // a tensor goes here; the byte cannot clash with printable text
    } else {
      tmpl += pieces[i].text;
    }
  }
  trace::dispatch_list(ops::op::KilnPrint(), tensors,
                       ops::Attrs{tmpl, int64_t{3}, std::string("stderr"), std::string("\n")}, "KilnPrint");
}

}  // namespace kiln::detail

namespace kiln {
std::string print_string(const Tensor& t, int summarize) {
  const detail::TensorImpl& impl = detail::concrete(t);
  if (impl.symbolic)
    throw InvalidArgumentError("print_string needs a concrete tensor; " + t.str() +
                               " is symbolic (inside a traced function use kiln::print)");
  return detail::format_values_tf_print(impl, summarize);
}
}  // namespace kiln
