// The stages that reorder, cut and regroup elements without running a function.
#include <algorithm>
#include <mutex>

#include "data/dataset.h"
#include "data/rows.h"

namespace kiln::data {
namespace {

int64_t times(int64_t n, int64_t k) {
  if (n == 0 || k == 0) return 0;
  if (n == kInfiniteCardinality || k < 0) return kInfiniteCardinality;
  if (n == kUnknownCardinality) return kUnknownCardinality;
  return n > INT64_MAX / k ? kInfiniteCardinality : n * k;
}

class Repeat final : public DatasetImpl {
 public:
  Repeat(DatasetPtr input, int64_t count)
      : DatasetImpl("RepeatDataset", input->element_spec(), times(input->cardinality(), count)),
        input_(std::move(input)),
        count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      DatasetPtr input;
      int64_t left;  // passes still to start (< 0: forever)
      std::unique_ptr<IteratorImpl> current;
      bool produced = false;  // by the current pass
      detail::Threading options = detail::current_threading();
      bool next(Element* out) override {
        for (;;) {
          if (!current) {
            if (left == 0) return false;
            if (left > 0) --left;
            detail::ThreadingScope scope(options);
            current = input->make_iterator();
            produced = false;
          }
          if (current->next(out)) {
            produced = true;
            return true;
          }
          current.reset();
          // An empty pass ends the repeat (as TensorFlow's: an empty input repeated forever
          // is empty, not a busy loop).
          if (!produced) return false;
        }
      }
    };
    auto it = std::make_unique<It>();
    it->input = input_;
    it->left = count_;
    return it;
  }

 private:
  DatasetPtr input_;
  int64_t count_;
};

int64_t take_count(int64_t n, int64_t k) {
  if (k < 0) return n;
  if (n == kUnknownCardinality) return kUnknownCardinality;
  if (n == kInfiniteCardinality) return k;
  return std::min(n, k);
}

class Take final : public DatasetImpl {
 public:
  Take(DatasetPtr input, int64_t count)
      : DatasetImpl("TakeDataset", input->element_spec(), take_count(input->cardinality(), count)),
        input_(std::move(input)),
        count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::unique_ptr<IteratorImpl> input;
      int64_t left;
      bool next(Element* out) override {
        if (left == 0) return false;
        if (left > 0) --left;
        return input->next(out);
      }
    };
    auto it = std::make_unique<It>();
    it->input = input_->make_iterator();
    it->left = count_;
    return it;
  }

 private:
  DatasetPtr input_;
  int64_t count_;
};

int64_t skip_count(int64_t n, int64_t k) {
  if (n < 0) return n;
  if (k < 0) return 0;
  return std::max<int64_t>(n - k, 0);
}

class Skip final : public DatasetImpl {
 public:
  Skip(DatasetPtr input, int64_t count)
      : DatasetImpl("SkipDataset", input->element_spec(), skip_count(input->cardinality(), count)),
        input_(std::move(input)),
        count_(count) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::unique_ptr<IteratorImpl> input;
      int64_t to_skip;  // < 0: everything
      bool next(Element* out) override {
        while (to_skip != 0) {
          if (!input->next(out)) return false;
          out->clear();
          if (to_skip > 0) --to_skip;
        }
        return input->next(out);
      }
    };
    auto it = std::make_unique<It>();
    it->input = input_->make_iterator();
    it->to_skip = count_;
    return it;
  }

 private:
  DatasetPtr input_;
  int64_t count_;
};

std::vector<TensorSpec> common_spec(const DatasetImpl& a, const DatasetImpl& b) {
  const auto& sa = a.element_spec();
  const auto& sb = b.element_spec();
  if (sa.size() != sb.size())
    throw InvalidArgumentError("Incompatible dataset elements: " + std::to_string(sa.size()) + " and " +
                               std::to_string(sb.size()) + " components");
  std::vector<TensorSpec> spec;
  for (size_t i = 0; i < sa.size(); ++i) {
    if (sa[i].dtype != sb[i].dtype)
      throw InvalidArgumentError("Incompatible dataset elements: component " + std::to_string(i) + " is " +
                                 std::string(dtype_name(sa[i].dtype)) + " and " + std::string(dtype_name(sb[i].dtype)));
    spec.push_back({.shape = detail::most_specific_common(sa[i].shape, sb[i].shape), .dtype = sa[i].dtype});
  }
  return spec;
}

int64_t plus(int64_t a, int64_t b) {
  if (a == kInfiniteCardinality || b == kInfiniteCardinality) return kInfiniteCardinality;
  if (a == kUnknownCardinality || b == kUnknownCardinality) return kUnknownCardinality;
  return a + b;
}

class Concatenate final : public DatasetImpl {
 public:
  Concatenate(DatasetPtr a, DatasetPtr b)
      : DatasetImpl("ConcatenateDataset", common_spec(*a, *b), plus(a->cardinality(), b->cardinality())),
        a_(std::move(a)),
        b_(std::move(b)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::unique_ptr<IteratorImpl> current;
      DatasetPtr second;
      detail::Threading options = detail::current_threading();
      bool next(Element* out) override {
        for (;;) {
          if (!current) return false;
          if (current->next(out)) return true;
          out->clear();
          detail::ThreadingScope scope(options);
          current = second ? second->make_iterator() : nullptr;
          second = nullptr;
        }
      }
    };
    auto it = std::make_unique<It>();
    it->current = a_->make_iterator();
    it->second = b_;
    return it;
  }

 private:
  DatasetPtr a_, b_;
};

std::vector<TensorSpec> zipped_spec(const std::vector<DatasetPtr>& inputs) {
  std::vector<TensorSpec> spec;
  for (const auto& d : inputs) spec.insert(spec.end(), d->element_spec().begin(), d->element_spec().end());
  return spec;
}

int64_t shortest(const std::vector<DatasetPtr>& inputs) {
  int64_t n = kInfiniteCardinality;
  bool unknown = false;
  for (const auto& d : inputs) {
    const int64_t c = d->cardinality();
    if (c == kUnknownCardinality)
      unknown = true;
    else if (c >= 0)
      n = n < 0 ? c : std::min(n, c);
  }
  if (unknown) return n == 0 ? 0 : kUnknownCardinality;
  return n;
}

class Zip final : public DatasetImpl {
 public:
  explicit Zip(std::vector<DatasetPtr> inputs)
      : DatasetImpl("ZipDataset", zipped_spec(inputs), shortest(inputs)), inputs_(std::move(inputs)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::vector<std::unique_ptr<IteratorImpl>> inputs;
      bool next(Element* out) override {
        Element part;
        for (auto& in : inputs) {
          part.clear();
          if (!in->next(&part)) return false;
          out->insert(out->end(), part.begin(), part.end());
        }
        return true;
      }
    };
    auto it = std::make_unique<It>();
    for (const auto& d : inputs_) it->inputs.push_back(d->make_iterator());
    return it;
  }

 private:
  std::vector<DatasetPtr> inputs_;
};

std::vector<TensorSpec> batched_spec(const std::vector<TensorSpec>& spec, int64_t batch, bool drop_remainder) {
  std::vector<TensorSpec> out;
  for (const TensorSpec& s : spec) {
    Dims dims;
    dims.push_back(drop_remainder ? batch : -1);
    if (s.shape.unknown_rank()) {
      out.push_back({.shape = TensorShape::unknown(), .dtype = s.dtype});
      continue;
    }
    for (int64_t d : s.shape.dims()) dims.push_back(d);
    out.push_back({.shape = TensorShape(dims), .dtype = s.dtype});
  }
  return out;
}

int64_t batches(int64_t n, int64_t b, bool drop) {
  if (n < 0) return n;
  return drop ? n / b : (n + b - 1) / b;
}

// batch and padded_batch: gather up to `batch` elements, then stack each component.
class Batch final : public DatasetImpl {
 public:
  Batch(DatasetPtr input, int64_t batch, bool drop_remainder, std::vector<TensorShape> padded_shapes,
        std::vector<Tensor> padding)
      : DatasetImpl(padding.empty() ? "BatchDataset" : "PaddedBatchDataset",
                    padded_spec(input->element_spec(), padded_shapes, batch, drop_remainder),
                    batches(input->cardinality(), batch, drop_remainder)),
        input_(std::move(input)),
        batch_(batch),
        drop_remainder_(drop_remainder),
        padded_shapes_(std::move(padded_shapes)),
        padding_(std::move(padding)) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Batch* ds;
      std::shared_ptr<const DatasetImpl> keep;
      std::unique_ptr<IteratorImpl> input;
      bool ended = false;
      bool next(Element* out) override {
        if (ended) return false;
        std::vector<Element> rows;
        Element e;
        while (static_cast<int64_t>(rows.size()) < ds->batch_) {
          e.clear();
          if (!input->next(&e)) {
            ended = true;
            break;
          }
          rows.push_back(std::move(e));
          e = Element();
        }
        if (rows.empty() || (ds->drop_remainder_ && static_cast<int64_t>(rows.size()) < ds->batch_)) return false;
        ds->stack(rows, out);
        return true;
      }
    };
    if (padding_.empty() && input_->holds_rows()) return row_runs();
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    it->input = input_->make_iterator();
    return it;
  }

 private:
  // A batch of a source that holds its elements as rows: each component's run of rows at once.
  std::unique_ptr<IteratorImpl> row_runs() const {
    struct It final : IteratorImpl {
      const Batch* ds;
      std::shared_ptr<const DatasetImpl> keep;
      int64_t at = 0;
      bool next(Element* out) override {
        const int64_t total = ds->input_->cardinality();
        const int64_t end = at + std::min(total - at, ds->batch_);  // (at + batch_ may overflow)
        if (end <= at || (ds->drop_remainder_ && end - at < ds->batch_)) return false;
        ds->input_->rows(at, end, out);
        at = end;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    return it;
  }

  static std::vector<TensorSpec> padded_spec(const std::vector<TensorSpec>& spec,
                                             const std::vector<TensorShape>& padded, int64_t batch, bool drop) {
    if (padded.empty()) return batched_spec(spec, batch, drop);
    std::vector<TensorSpec> inner = spec;
    for (size_t i = 0; i < inner.size() && i < padded.size(); ++i) inner[i].shape = padded[i];
    return batched_spec(inner, batch, drop);
  }

  void stack(const std::vector<Element>& rows, Element* out) const {
    const size_t components = rows[0].size();
    std::vector<Tensor> column(rows.size());
    for (size_t c = 0; c < components; ++c) {
      for (size_t r = 0; r < rows.size(); ++r) column[r] = rows[r][c];
      if (padding_.empty()) {
        out->push_back(detail::stack_rows(column, static_cast<int>(c)));
        continue;
      }
      out->push_back(detail::stack_padded(column, padded_dims(column, c), padding_[c]));
    }
  }

  // The slot shape of component c: padded_shapes_[c] where known, else the largest row.
  std::vector<int64_t> padded_dims(const std::vector<Tensor>& column, size_t c) const {
    const TensorShape& want = padded_shapes_[c];
    const int rank = column[0].rank();
    if (!want.unknown_rank() && want.rank() != rank)
      throw InvalidArgumentError("padded_shapes[" + std::to_string(c) + "] has rank " + std::to_string(want.rank()) +
                                 " but the component has rank " + std::to_string(rank));
    std::vector<int64_t> dims(static_cast<size_t>(rank), 0);
    for (const Tensor& t : column) {
      if (t.rank() != rank)
        throw InvalidArgumentError("Cannot batch tensors of different ranks in component " + std::to_string(c));
      for (int d = 0; d < rank; ++d) dims[d] = std::max(dims[d], t.shape().dims()[d]);
    }
    if (!want.unknown_rank())
      for (int d = 0; d < rank; ++d) {
        const int64_t w = want.dims()[d];
        if (w < 0) continue;
        if (dims[d] > w)
          throw InvalidArgumentError("Attempted to pad to a smaller size than the input element. Component " +
                                     std::to_string(c) + ", dimension " + std::to_string(d) + ": padded size " +
                                     std::to_string(w) + ", element size " + std::to_string(dims[d]) + ".");
        dims[d] = w;
      }
    return dims;
  }

  DatasetPtr input_;
  int64_t batch_;
  bool drop_remainder_;
  std::vector<TensorShape> padded_shapes_;
  std::vector<Tensor> padding_;
};

std::vector<TensorSpec> unbatched_spec(const std::vector<TensorSpec>& spec) {
  std::vector<TensorSpec> out;
  for (const TensorSpec& s : spec) {
    if (!s.shape.unknown_rank() && s.shape.rank() == 0)
      throw InvalidArgumentError("Cannot unbatch an input with scalar components.");
    Dims dims;
    if (!s.shape.unknown_rank())
      for (size_t i = 1; i < s.shape.dims().size(); ++i) dims.push_back(s.shape.dims()[i]);
    out.push_back({.shape = s.shape.unknown_rank() ? TensorShape::unknown() : TensorShape(dims), .dtype = s.dtype});
  }
  return out;
}

class Unbatch final : public DatasetImpl {
 public:
  explicit Unbatch(DatasetPtr input)
      : DatasetImpl("UnbatchDataset", unbatched_spec(input->element_spec()), kUnknownCardinality),
        input_(std::move(input)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::unique_ptr<IteratorImpl> input;
      Element batch;
      int64_t row = 0, rows = 0;
      bool next(Element* out) override {
        while (row >= rows) {
          batch.clear();
          if (!input->next(&batch)) return false;
          row = 0;
          rows = -1;
          for (size_t c = 0; c < batch.size(); ++c) {
            if (batch[c].rank() < 1) throw InvalidArgumentError("Cannot unbatch an input with scalar components.");
            const int64_t n = batch[c].shape().dims()[0];
            if (rows >= 0 && n != rows)
              throw InvalidArgumentError(
                  "Input element must have the same batch size in each component. Component 0 "
                  "had size " +
                  std::to_string(rows) + " but component " + std::to_string(c) + " had size, " + std::to_string(n) +
                  ".");
            rows = n;
          }
          if (rows < 0) rows = 0;
        }
        for (const Tensor& t : batch) out->push_back(detail::row_of(t, row));
        ++row;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->input = input_->make_iterator();
    return it;
  }

 private:
  DatasetPtr input_;
};

// The first complete pass is recorded; once it finished, later iterators replay it.
class Cache final : public DatasetImpl {
 public:
  explicit Cache(DatasetPtr input)
      : DatasetImpl("CacheDataset", input->element_spec(), input->cardinality()), input_(std::move(input)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Cache* ds;
      std::shared_ptr<const DatasetImpl> keep;
      std::shared_ptr<const std::vector<Element>> replay;
      size_t at = 0;
      std::unique_ptr<IteratorImpl> input;
      std::vector<Element> recorded;
      bool next(Element* out) override {
        if (replay) {
          if (at >= replay->size()) return false;
          *out = (*replay)[at++];
          return true;
        }
        if (!input->next(out)) {
          std::lock_guard<std::mutex> lock(ds->mu_);
          if (!ds->done_) ds->done_ = std::make_shared<const std::vector<Element>>(std::move(recorded));
          return false;
        }
        recorded.push_back(*out);
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    {
      std::lock_guard<std::mutex> lock(mu_);
      it->replay = done_;
    }
    if (!it->replay) it->input = input_->make_iterator();
    return it;
  }

 private:
  DatasetPtr input_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const std::vector<Element>> done_;
};

}  // namespace

Dataset repeat(const Dataset& input, int64_t count) {
  return Dataset(std::make_shared<Repeat>(input.impl(), count < 0 ? -1 : count));
}
Dataset take(const Dataset& input, int64_t count) { return Dataset(std::make_shared<Take>(input.impl(), count)); }
Dataset skip(const Dataset& input, int64_t count) { return Dataset(std::make_shared<Skip>(input.impl(), count)); }
Dataset concatenate(const Dataset& a, const Dataset& b) {
  return Dataset(std::make_shared<Concatenate>(a.impl(), b.impl()));
}
Dataset zip(std::vector<Dataset> inputs) {
  if (inputs.empty()) throw InvalidArgumentError("zip needs at least one dataset");
  std::vector<DatasetPtr> impls;
  for (const Dataset& d : inputs) impls.push_back(d.impl());
  return Dataset(std::make_shared<Zip>(std::move(impls)));
}
Dataset batch(const Dataset& input, int64_t batch_size, bool drop_remainder) {
  if (batch_size <= 0) throw InvalidArgumentError("Batch size must be greater than zero.");
  return Dataset(std::make_shared<Batch>(input.impl(), batch_size, drop_remainder, std::vector<TensorShape>{},
                                         std::vector<Tensor>{}));
}
Dataset padded_batch(const Dataset& input, int64_t batch_size, std::vector<TensorShape> padded_shapes,
                     std::vector<Tensor> padding_values, bool drop_remainder) {
  if (batch_size <= 0) throw InvalidArgumentError("Batch size must be greater than zero.");
  const auto& spec = input.element_spec();
  if (padded_shapes.size() != spec.size() || padding_values.size() != spec.size())
    throw InvalidArgumentError("padded_batch needs one padded shape and one padding value per component");
  for (size_t i = 0; i < spec.size(); ++i) {
    if (padding_values[i].is_symbolic() || padding_values[i].rank() != 0)
      throw InvalidArgumentError("Padding value for component " + std::to_string(i) + " must be a scalar tensor");
    if (padding_values[i].dtype() != spec[i].dtype)
      throw InvalidArgumentError("Padding value for component " + std::to_string(i) + " has dtype " +
                                 std::string(dtype_name(padding_values[i].dtype())) + " but the component is " +
                                 std::string(dtype_name(spec[i].dtype)));
  }
  return Dataset(std::make_shared<Batch>(input.impl(), batch_size, drop_remainder, std::move(padded_shapes),
                                         std::move(padding_values)));
}
Dataset unbatch(const Dataset& input) { return Dataset(std::make_shared<Unbatch>(input.impl())); }
Dataset cache(const Dataset& input) { return Dataset(std::make_shared<Cache>(input.impl())); }

}  // namespace kiln::data
