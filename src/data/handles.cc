// A Dataset as the variant value the dataset ops hold (ops/dataset_object.h), and eager
// pulls from an iterator handle.
#include "core/tensor_impl.h"
#include "data/dataset.h"
#include "ops/dataset_object.h"

namespace kiln::data {
namespace {

struct Stream final : ops::ElementStream {
  explicit Stream(std::unique_ptr<IteratorImpl> i) : it(std::move(i)) {}
  bool next(std::vector<Tensor>* out) override { return it->next(out); }
  std::unique_ptr<IteratorImpl> it;
};

struct DatasetHolder final : ops::DatasetObject {
  explicit DatasetHolder(DatasetPtr d) : ds(std::move(d)) {}
  std::unique_ptr<ops::ElementStream> open() const override { return std::make_unique<Stream>(ds->make_iterator()); }
  std::string summary() const override { return ds->kind(); }
  DatasetPtr ds;
};

}  // namespace

Tensor as_variant(const Dataset& dataset) { return ops::variant_holding(new DatasetHolder(dataset.impl())); }

Dataset from_variant(const Tensor& variant) {
  if (variant.is_symbolic()) throw InvalidArgumentError("from_variant takes a concrete variant tensor");
  auto* holder = ops::object_in<DatasetHolder>(kiln::detail::concrete(variant));
  if (!holder) throw InvalidArgumentError("from_variant: the tensor does not hold a dataset");
  return Dataset(holder->ds);
}

namespace {
ops::IteratorObject& iterator_of(const Tensor& iterator, const char* what) {
  ops::IteratorObject* it = ops::object_in<ops::IteratorObject>(kiln::detail::concrete(iterator));
  if (!it)
    throw InvalidArgumentError(std::string(what) + ": the tensor is not an iterator (a scalar variant holding one)");
  return *it;
}
}  // namespace

bool iterator_next(const Tensor& iterator, std::vector<Tensor>* element) {
  return iterator_of(iterator, "iterator_next").next(element);
}

int64_t iterator_position(const Tensor& iterator) { return iterator_of(iterator, "iterator_position").position(); }

void iterator_restore(const Tensor& iterator, int64_t position) {
  if (position < 0)
    throw InvalidArgumentError("iterator_restore: a position is non-negative, got " + std::to_string(position));
  iterator_of(iterator, "iterator_restore").restore(position);
}

}  // namespace kiln::data
