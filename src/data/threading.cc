// tf.data.Options.threading: a stage that makes its input's iterators under the options, so
// every stage below it reads them (current_threading) when its iterator is made.
#include "data/dataset.h"

namespace kiln::data {
namespace detail {
namespace {
thread_local Threading t_current;
}  // namespace

const Threading& current_threading() { return t_current; }
ThreadingScope::ThreadingScope(const Threading& t) : saved_(t_current) { t_current = t; }
ThreadingScope::~ThreadingScope() { t_current = saved_; }

}  // namespace detail

namespace {

class WithThreading final : public DatasetImpl {
 public:
  WithThreading(DatasetPtr input, detail::Threading options)
      : DatasetImpl(input->kind(), input->element_spec(), input->cardinality()),
        input_(std::move(input)),
        options_(options) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    detail::ThreadingScope scope(options_);
    return input_->make_iterator();  // the input's iterators keep the dataset alive
  }

 private:
  DatasetPtr input_;
  detail::Threading options_;
};

}  // namespace

Dataset with_threading(const Dataset& input, int private_threadpool_size, int max_intra_op_parallelism) {
  if (private_threadpool_size < 0)
    throw InvalidArgumentError("private_threadpool_size must be non-negative, got " +
                               std::to_string(private_threadpool_size));
  if (max_intra_op_parallelism < 0)
    throw InvalidArgumentError("max_intra_op_parallelism must be non-negative, got " +
                               std::to_string(max_intra_op_parallelism));
  return Dataset(std::make_shared<WithThreading>(
      input.impl(), detail::Threading{.private_threadpool_size = private_threadpool_size,
                                      .max_intra_op_parallelism = max_intra_op_parallelism}));
}

}  // namespace kiln::data
