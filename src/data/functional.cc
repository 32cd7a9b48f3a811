// The stages that run a traced function per element: map (on the consumer's thread or on
// workers of its own), filter and take_while.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "core/parallel.h"
#include "data/dataset.h"

namespace kiln::data {
namespace {

// fn must take the input's components, in order, with matching dtypes.
void check_inputs(const ConcreteFunction& fn, const DatasetImpl& input, const char* stage) {
  const auto in = fn.input_specs();
  const auto& spec = input.element_spec();
  if (in.size() != spec.size())
    throw InvalidArgumentError(std::string(stage) + ": the function takes " + std::to_string(in.size()) +
                               " tensors but the dataset's elements have " + std::to_string(spec.size()) +
                               " components");
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].dtype != spec[i].dtype)
      throw InvalidArgumentError(std::string(stage) + ": the function's input " + std::to_string(i) + " is " +
                                 std::string(dtype_name(in[i].dtype)) + " but the component is " +
                                 std::string(dtype_name(spec[i].dtype)));
}

void check_predicate(const ConcreteFunction& fn, const char* stage) {
  const auto out = fn.output_specs();
  if (out.size() != 1 || out[0].dtype != DType::Bool || out[0].shape.unknown_rank() || out[0].shape.rank() != 0)
    throw InvalidArgumentError(std::string(stage) +
                               ": `predicate` return type must be convertible to a scalar boolean "
                               "tensor.");
}

class Map final : public DatasetImpl {
 public:
  Map(DatasetPtr input, ConcreteFunction fn, int threads, bool deterministic)
      : DatasetImpl(threads > 0 ? "ParallelMapDataset" : "MapDataset", fn.output_specs(), input->cardinality()),
        input_(std::move(input)),
        fn_(std::move(fn)),
        threads_(threads),
        deterministic_(deterministic) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override;

  const ConcreteFunction& fn() const { return fn_; }
  // No check of the result per element: the stage's spec is fn's output specs, which every
  // run of fn satisfies. serial: the pipeline's max_intra_op_parallelism is 1.
  Element apply(const Element& in, bool serial) const {
    if (!serial) return fn_(in);
    SerialKernelsScope one_thread;
    return fn_(in);
  }

 private:
  DatasetPtr input_;
  ConcreteFunction fn_;
  int threads_;
  bool deterministic_;
};

struct SerialMapIterator final : IteratorImpl {
  const Map* ds;
  DatasetPtr keep;
  std::unique_ptr<IteratorImpl> input;
  bool serial_kernels = false;
  bool next(Element* out) override {
    Element in;
    if (!input->next(&in)) return false;
    *out = ds->apply(in, serial_kernels);
    return true;
  }
};

// Workers pull inputs in order (one at a time: upstream stages have one consumer) and run
// the function concurrently; results queue in input order, at most `capacity` ahead of the
// consumer. Nondeterministic: the consumer takes any finished result.
class ParallelMapIterator final : public IteratorImpl {
 public:
  ParallelMapIterator(const Map* ds, DatasetPtr keep, std::unique_ptr<IteratorImpl> input, int threads,
                      bool deterministic, bool serial_kernels)
      : ds_(ds),
        keep_(std::move(keep)),
        input_(std::move(input)),
        threads_(threads),
        deterministic_(deterministic),
        serial_kernels_(serial_kernels),
        capacity_(static_cast<size_t>(2 * threads)) {}

  ~ParallelMapIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    for_workers_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  bool next(Element* out) override {
    if (workers_.empty())
      for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { work(); });
    std::shared_ptr<Slot> slot;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        auto found = slots_.end();
        if (deterministic_) {
          if (!slots_.empty() && slots_.front()->done) found = slots_.begin();
        } else {
          for (auto it = slots_.begin(); it != slots_.end(); ++it)
            if ((*it)->done) {
              found = it;
              break;
            }
        }
        if (found != slots_.end()) {
          slot = *found;
          slots_.erase(found);
          break;
        }
        if (slots_.empty() && input_done_) return false;
        for_consumer_.wait(lock);
      }
    }
    for_workers_.notify_one();
    if (slot->error) std::rethrow_exception(slot->error);
    *out = std::move(slot->out);
    return true;
  }

 private:
  struct Slot {
    bool done = false;  // guarded by mu_; out and error are written before it is set
    Element out;
    std::exception_ptr error;
  };

  void work() {
    for (;;) {
      std::shared_ptr<Slot> slot;
      Element in;
      {
        std::lock_guard<std::mutex> input_lock(input_mu_);
        {
          std::unique_lock<std::mutex> lock(mu_);
          for_workers_.wait(lock, [&] { return cancelled_ || input_done_ || slots_.size() < capacity_; });
          if (cancelled_ || input_done_) return;
        }
        std::exception_ptr error;
        const bool got = detail::next_or_error(*input_, &in, &error);
        std::lock_guard<std::mutex> lock(mu_);
        if (error || !got) {
          input_done_ = true;  // an upstream error ends the input after its element
          if (error) {
            slot = std::make_shared<Slot>();
            slot->error = error;
            slot->done = true;
            slots_.push_back(slot);
          }
          for_consumer_.notify_all();
          for_workers_.notify_all();
          return;
        }
        slot = std::make_shared<Slot>();
        slots_.push_back(slot);
      }
      try {
        slot->out = ds_->apply(in, serial_kernels_);
      } catch (...) {
        slot->error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        slot->done = true;
      }
      for_consumer_.notify_all();
    }
  }

  const Map* ds_;
  DatasetPtr keep_;
  std::unique_ptr<IteratorImpl> input_;
  const int threads_;
  const bool deterministic_;
  const bool serial_kernels_;
  const size_t capacity_;
  std::mutex input_mu_;  // one worker at a time pulls from input_
  std::mutex mu_;
  std::condition_variable for_consumer_, for_workers_;
  std::deque<std::shared_ptr<Slot>> slots_;
  bool input_done_ = false, cancelled_ = false;
  std::vector<std::thread> workers_;  // joined by the destructor, before any member dies
};

std::unique_ptr<IteratorImpl> Map::make_iterator() const {
  const detail::Threading& options = detail::current_threading();
  if (threads_ > 0) {
    const int threads =
        options.private_threadpool_size > 0 ? std::min(threads_, options.private_threadpool_size) : threads_;
    return std::make_unique<ParallelMapIterator>(this, shared_from_this(), input_->make_iterator(), threads,
                                                 deterministic_, options.serial_kernels());
  }
  auto it = std::make_unique<SerialMapIterator>();
  it->ds = this;
  it->keep = shared_from_this();
  it->serial_kernels = options.serial_kernels();
  it->input = input_->make_iterator();
  return it;
}

// filter (keep while true, skip while false) and take_while (stop at the first false).
class Predicate final : public DatasetImpl {
 public:
  Predicate(DatasetPtr input, ConcreteFunction fn, bool stop_at_false)
      : DatasetImpl(stop_at_false ? "TakeWhileDataset" : "FilterDataset", input->element_spec(), kUnknownCardinality),
        input_(std::move(input)),
        fn_(std::move(fn)),
        stop_at_false_(stop_at_false) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Predicate* ds;
      DatasetPtr keep;
      std::unique_ptr<IteratorImpl> input;
      bool serial_kernels = false;
      bool next(Element* out) override {
        for (;;) {
          out->clear();
          if (!input->next(out)) return false;
          std::optional<SerialKernelsScope> one_thread;
          if (serial_kernels) one_thread.emplace();
          std::vector<Tensor> r = ds->fn_(*out);
          if (r.at(0).item<bool>()) return true;
          if (ds->stop_at_false_) return false;
        }
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    it->serial_kernels = detail::current_threading().serial_kernels();
    it->input = input_->make_iterator();
    return it;
  }

 private:
  DatasetPtr input_;
  ConcreteFunction fn_;
  bool stop_at_false_;
};

}  // namespace

Dataset map(const Dataset& input, ConcreteFunction fn, int64_t num_parallel_calls, bool deterministic) {
  check_inputs(fn, *input.impl(), "map");
  if (num_parallel_calls < 0 && num_parallel_calls != kAutotune)
    throw InvalidArgumentError("num_parallel_calls must be positive or AUTOTUNE, got " +
                               std::to_string(num_parallel_calls));
  int threads = static_cast<int>(std::min<int64_t>(num_parallel_calls, 64));
  if (num_parallel_calls == kAutotune) threads = configured_threads();
  // One parallel call is the serial stage on a worker: TensorFlow's MapDataset without
  // num_parallel_calls runs on the consumer, which is what 1 buys here too.
  if (threads == 1) threads = 0;
  return Dataset(std::make_shared<Map>(input.impl(), std::move(fn), threads, deterministic));
}

Dataset filter(const Dataset& input, ConcreteFunction predicate) {
  check_inputs(predicate, *input.impl(), "filter");
  check_predicate(predicate, "filter");
  return Dataset(std::make_shared<Predicate>(input.impl(), std::move(predicate), false));
}

Dataset take_while(const Dataset& input, ConcreteFunction predicate) {
  check_inputs(predicate, *input.impl(), "take_while");
  check_predicate(predicate, "take_while");
  return Dataset(std::make_shared<Predicate>(input.impl(), std::move(predicate), true));
}

}  // namespace kiln::data
