// The internal side of kiln::data: a dataset stage is a DatasetImpl (immutable, shared by
// every dataset built on it) that makes IteratorImpls (one pass, one consumer).
#pragma once
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "kiln/data.h"

namespace kiln::data::detail {

using Element = std::vector<Tensor>;

class IteratorImpl {
 public:
  virtual ~IteratorImpl() = default;
  // The next element; false at the end. Once it returned false (or threw) the caller does
  // not call again, except where a stage says so.
  virtual bool next(Element* out) = 0;
};

class DatasetImpl : public std::enable_shared_from_this<DatasetImpl> {
 public:
  DatasetImpl(const char* kind, std::vector<TensorSpec> spec, int64_t cardinality)
      : kind_(kind), spec_(std::move(spec)), cardinality_(cardinality) {}
  virtual ~DatasetImpl() = default;
  const char* kind() const { return kind_; }
  const std::vector<TensorSpec>& element_spec() const { return spec_; }
  int64_t cardinality() const { return cardinality_; }
  virtual std::unique_ptr<IteratorImpl> make_iterator() const = 0;
  // A source whose elements are the rows of tensors it holds (from_tensor_slices) says so,
  // and gives batch a run of them at once: each component's rows [begin, end) as one tensor
  // (begin < end <= cardinality). Batch stacks the elements of any other input.
  virtual bool holds_rows() const { return false; }
  virtual void rows(int64_t begin, int64_t end, Element* out) const { (void)begin, (void)end, (void)out; }

 private:
  const char* kind_;
  std::vector<TensorSpec> spec_;
  int64_t cardinality_;
};

using DatasetPtr = std::shared_ptr<const DatasetImpl>;

inline const DatasetPtr& impl_of(const Dataset& d) { return d.impl(); }

// For the stages that run their input on another thread: the next element, with an error
// caught into *error (then false), to be rethrown on the consumer's thread in its place.
inline bool next_or_error(IteratorImpl& input, Element* out, std::exception_ptr* error) {
  try {
    return input.next(out);
  } catch (...) {
    *error = std::current_exception();
    return false;
  }
}

// tf.data.Options.threading of the pipeline whose iterators this thread is making: set by
// with_threading's iterator while it makes its input's; a stage that makes an input iterator
// later (repeat, concatenate) re-enters the one it was made under. 0: not set.
struct Threading {
  int private_threadpool_size = 0;
  int max_intra_op_parallelism = 0;
  bool serial_kernels() const { return max_intra_op_parallelism == 1; }
};
const Threading& current_threading();
class ThreadingScope {
 public:
  explicit ThreadingScope(const Threading& t);
  ~ThreadingScope();
  ThreadingScope(const ThreadingScope&) = delete;
  ThreadingScope& operator=(const ThreadingScope&) = delete;

 private:
  Threading saved_;
};

// "component 1" style messages share these.
std::string shape_text(const TensorShape& s);
// The spec both a and b satisfy: dims that differ become -1, ranks that differ unknown.
TensorShape most_specific_common(const TensorShape& a, const TensorShape& b);
// Checks a produced element against a stage's spec (count, dtypes, compatible shapes).
void check_element(const Element& e, const std::vector<TensorSpec>& spec, const char* what);

}  // namespace kiln::data::detail

namespace kiln::data {
// The names every stage's file uses.
using detail::DatasetImpl;
using detail::DatasetPtr;
using detail::Element;
using detail::IteratorImpl;
}  // namespace kiln::data
