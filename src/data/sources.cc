// The source stages: tensors in memory, a range of numbers, and a front end's callback.
#include "core/dtype_table.h"
#include "core/tensor_impl.h"
#include "data/dataset.h"
#include "data/rows.h"

namespace kiln::data {
namespace {

std::vector<TensorSpec> specs_of(const std::vector<Tensor>& components, bool drop_first) {
  std::vector<TensorSpec> spec;
  for (const Tensor& t : components) {
    TensorShape s = t.shape();
    Dims dims;
    for (size_t i = drop_first ? 1 : 0; i < s.dims().size(); ++i) dims.push_back(s.dims()[i]);
    spec.push_back({.shape = TensorShape(dims), .dtype = t.dtype()});
  }
  return spec;
}

class TensorSlices final : public DatasetImpl {
 public:
  TensorSlices(std::vector<Tensor> components, int64_t rows)
      : DatasetImpl("TensorSliceDataset", specs_of(components, true), rows), components_(std::move(components)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const TensorSlices* ds;
      std::shared_ptr<const DatasetImpl> keep;
      int64_t i = 0;
      bool next(Element* out) override {
        if (i >= ds->cardinality()) return false;
        for (const Tensor& c : ds->components_) out->push_back(detail::row_of(c, i));
        ++i;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    return it;
  }
  bool holds_rows() const override { return true; }
  void rows(int64_t begin, int64_t end, Element* out) const override {
    for (const Tensor& c : components_) out->push_back(detail::rows_of(c, begin, end));
  }

 private:
  std::vector<Tensor> components_;
};

class Tensors final : public DatasetImpl {
 public:
  explicit Tensors(std::vector<Tensor> components)
      : DatasetImpl("TensorDataset", specs_of(components, false), 1), components_(std::move(components)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::vector<Tensor> components;
      bool done = false;
      bool next(Element* out) override {
        if (done) return false;
        done = true;
        *out = components;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->components = components_;
    return it;
  }

 private:
  std::vector<Tensor> components_;
};

int64_t range_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0)
    return stop <= start ? 0 : static_cast<int64_t>((static_cast<__int128>(stop) - start + step - 1) / step);
  return stop >= start ? 0 : static_cast<int64_t>((static_cast<__int128>(start) - stop - step - 1) / -step);
}

class Range final : public DatasetImpl {
 public:
  Range(int64_t start, int64_t stop, int64_t step, DType dtype)
      : DatasetImpl("RangeDataset", {{.shape = TensorShape(std::vector<int64_t>{}), .dtype = dtype}},
                    range_length(start, stop, step)),
        start_(start),
        step_(step),
        dtype_(dtype) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      int64_t next_value, step, left;
      DType dtype;
      bool next(Element* out) override {
        if (left <= 0) return false;
        --left;
        kiln::detail::TensorImpl* v = kiln::detail::make_concrete(dtype, Dims{});
        out->push_back(kiln::detail::wrap(v));
        kiln::detail::visit_any_dtype(dtype, [&](auto t) {
          using T = decltype(t);
          if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
            *v->as<T>() = T(static_cast<float>(next_value));
          else
            *v->as<T>() = static_cast<T>(next_value);
        });
        next_value += step;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->next_value = start_;
    it->step = step_;
    it->left = cardinality();
    it->dtype = dtype_;
    return it;
  }

 private:
  int64_t start_, step_;
  DType dtype_;
};

class Callback final : public DatasetImpl {
 public:
  Callback(std::vector<TensorSpec> spec, std::function<Source()> make_source, int64_t cardinality)
      : DatasetImpl("GeneratorDataset", std::move(spec), cardinality), make_source_(std::move(make_source)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Callback* ds;
      std::shared_ptr<const DatasetImpl> keep;
      Source source;
      bool next(Element* out) override {
        if (!source) source = ds->make_source_();  // on first use: a front end's generator starts lazily
        if (!source(out)) return false;
        detail::check_element(*out, ds->element_spec(), "A generator");
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    return it;
  }

 private:
  std::function<Source()> make_source_;
};

}  // namespace

Dataset from_tensor_slices(std::vector<Tensor> components) {
  if (components.empty()) throw InvalidArgumentError("from_tensor_slices needs at least one component");
  int64_t rows = -1;
  for (const Tensor& t : components) {
    if (t.is_symbolic()) throw InvalidArgumentError("from_tensor_slices takes concrete tensors");
    if (t.rank() < 1) throw InvalidArgumentError("Unbatching a tensor is only supported for rank >= 1");
    const int64_t n = t.shape().dims()[0];
    if (rows >= 0 && n != rows)
      throw InvalidArgumentError("Dimensions " + std::to_string(rows) + " and " + std::to_string(n) +
                                 " are not compatible");
    rows = n;
  }
  return Dataset(std::make_shared<TensorSlices>(std::move(components), rows));
}

Dataset from_tensors(std::vector<Tensor> components) {
  for (const Tensor& t : components)
    if (t.is_symbolic()) throw InvalidArgumentError("from_tensors takes concrete tensors");
  return Dataset(std::make_shared<Tensors>(std::move(components)));
}

Dataset range(int64_t start, int64_t stop, int64_t step, DType dtype) {
  if (step == 0) throw InvalidArgumentError("step must be a non-zero integer.");
  if (!is_integer(dtype) && !is_floating(dtype))
    throw InvalidArgumentError("range's output_type must be an integer or floating dtype, got " +
                               std::string(dtype_name(dtype)));
  return Dataset(std::make_shared<Range>(start, stop, step, dtype));
}

Dataset from_callback(std::vector<TensorSpec> element_spec, std::function<Source()> make_source, int64_t cardinality) {
  if (cardinality < kUnknownCardinality)
    throw InvalidArgumentError("invalid cardinality " + std::to_string(cardinality));
  return Dataset(std::make_shared<Callback>(std::move(element_spec), std::move(make_source), cardinality));
}

}  // namespace kiln::data
