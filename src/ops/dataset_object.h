// The objects the dataset ops hold in variant tensors: a dataset (a recipe for element
// streams), an iterator over one (one stream, shared by every op and handle that holds it)
// and an optional element. The ops layer knows them through these interfaces; the data layer
// (src/data) implements Dataset and Stream.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// One pass over a dataset's elements. Not thread-safe: IteratorObject serializes callers.
struct ElementStream {
  virtual ~ElementStream() = default;
  virtual bool next(std::vector<Tensor>* out) = 0;
};

struct DatasetObject : detail::ObjectValue {
  virtual std::unique_ptr<ElementStream> open() const = 0;
  const char* type_name() const override { return "tensorflow::data::Dataset"; }
};

struct IteratorObject final : detail::ObjectValue {
  // A pass over `ds` (the iterator holds a reference to it, to start the pass again).
  explicit IteratorObject(const DatasetObject* ds) : dataset(ds), stream(ds->open()) {
    detail::object_retain(const_cast<DatasetObject*>(dataset));
  }
  ~IteratorObject() override {
    stream.reset();  // the stream's threads stop before the dataset they run may go
    detail::object_release(const_cast<DatasetObject*>(dataset));
  }
  IteratorObject(const IteratorObject&) = delete;
  IteratorObject& operator=(const IteratorObject&) = delete;
  const char* type_name() const override { return "tensorflow::data::Iterator"; }
  std::string summary() const override { return "Iterator"; }
  // The next element, false at the end (and ever after); an error also ends the stream.
  bool next(std::vector<Tensor>* out) {
    std::lock_guard<std::mutex> lock(mu);
    return next_locked(out);
  }
  // Elements handed out so far: the iterator's state as a checkpoint records it.
  int64_t position() {
    std::lock_guard<std::mutex> lock(mu);
    return handed_out;
  }
  // Back to `position` elements into a new pass over the dataset (by replaying them: the
  // state a checkpoint restores, exact for a pass that repeats itself).
  void restore(int64_t position) {
    std::lock_guard<std::mutex> lock(mu);
    stream = dataset->open();
    handed_out = 0;
    std::vector<Tensor> skipped;
    while (handed_out < position && next_locked(&skipped)) {
    }
  }

 private:
  bool next_locked(std::vector<Tensor>* out) {
    if (!stream) return false;
    out->clear();
    try {
      if (stream->next(out)) {
        ++handed_out;
        return true;
      }
    } catch (...) {
      stream.reset();
      throw;
    }
    stream.reset();  // stops the stream's threads now
    return false;
  }

  const DatasetObject* dataset;
  std::mutex mu;
  std::unique_ptr<ElementStream> stream;
  int64_t handed_out = 0;
};

struct OptionalObject final : detail::ObjectValue {
  bool has_value = false;
  std::vector<Tensor> value;
  const char* type_name() const override { return "tensorflow::data::OptionalVariant"; }
  std::string summary() const override { return has_value ? "Optional(value)" : "Optional(None)"; }
};

// A new scalar variant tensor owning `object` (one reference, the caller's, passes to it).
inline Tensor variant_holding(detail::ObjectValue* object) {
  Tensor t = detail::wrap(detail::make_concrete(DType::Variant, Dims{}));
  detail::impl_of(t)->as<detail::ObjectValue*>()[0] = object;
  return t;
}

// The object a scalar variant tensor holds, if it is a T; null otherwise.
template <class T>
T* object_in(const detail::TensorImpl& t) {
  if (t.dtype != DType::Variant || !t.dims.empty()) return nullptr;
  return dynamic_cast<T*>(const_cast<detail::ObjectValue*>(t.as<detail::ObjectValue*>()[0]));
}

}  // namespace kiln::ops
