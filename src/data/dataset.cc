#include "data/dataset.h"

namespace kiln::data {

Iterator::Iterator(std::unique_ptr<detail::IteratorImpl> impl) : impl_(std::move(impl)) {}
Iterator::~Iterator() = default;
Iterator::Iterator(Iterator&&) noexcept = default;
Iterator& Iterator::operator=(Iterator&&) noexcept = default;

bool Iterator::next(std::vector<Tensor>* element) {
  if (!impl_) return false;
  element->clear();
  bool more = false;
  try {
    more = impl_->next(element);
  } catch (...) {
    impl_.reset();  // a stage that threw is not called again: the pass ends with the error
    throw;
  }
  if (!more) impl_.reset();  // stops the stages' threads now, not when the handle dies
  return more;
}

const std::vector<TensorSpec>& Dataset::element_spec() const { return impl_->element_spec(); }
int64_t Dataset::cardinality() const { return impl_->cardinality(); }
const char* Dataset::kind() const { return impl_->kind(); }
Iterator Dataset::make_iterator() const { return Iterator(impl_->make_iterator()); }

namespace detail {

std::string shape_text(const TensorShape& s) {
  if (s.unknown_rank()) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < s.dims().size(); ++i) {
    if (i) out += ",";
    out += s.dims()[i] < 0 ? "?" : std::to_string(s.dims()[i]);
  }
  return out + "]";
}

TensorShape most_specific_common(const TensorShape& a, const TensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank() || a.rank() != b.rank()) return TensorShape::unknown();
  Dims dims;
  for (int i = 0; i < a.rank(); ++i) dims.push_back(a.dims()[i] == b.dims()[i] ? a.dims()[i] : -1);
  return TensorShape(dims);
}

void check_element(const Element& e, const std::vector<TensorSpec>& spec, const char* what) {
  if (e.size() != spec.size())
    throw InvalidArgumentError(std::string(what) + " produced " + std::to_string(e.size()) +
                               " components; the dataset's element has " + std::to_string(spec.size()));
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].dtype() != spec[i].dtype)
      throw InvalidArgumentError(std::string(what) + " produced a " + std::string(dtype_name(e[i].dtype())) +
                                 " tensor for component " + std::to_string(i) + ", expected " +
                                 std::string(dtype_name(spec[i].dtype)));
    if (!spec[i].shape.is_compatible_with(e[i].shape()))
      throw InvalidArgumentError(std::string(what) + " produced a tensor of shape " + shape_text(e[i].shape()) +
                                 " for component " + std::to_string(i) + ", expected " + shape_text(spec[i].shape));
  }
}

}  // namespace detail
}  // namespace kiln::data
