// prefetch: a thread of the iterator's own runs the input ahead of the consumer, up to
// buffer_size elements; an error is delivered in its place in the sequence.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "data/dataset.h"

namespace kiln::data {
namespace {

// What kAutotune buys: enough to hide a consumer's hiccup, little memory (TensorFlow tunes
// this at run time; a fixed few is what its tuner settles on for steady pipelines).
constexpr int64_t kAutotunePrefetch = 4;

class PrefetchIterator final : public IteratorImpl {
 public:
  PrefetchIterator(DatasetPtr keep, std::unique_ptr<IteratorImpl> input, size_t capacity)
      : keep_(std::move(keep)), input_(std::move(input)), capacity_(capacity) {}
  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    for_producer_.notify_all();
    if (producer_.joinable()) producer_.join();
  }

  bool next(Element* out) override {
    if (!producer_.joinable()) producer_ = std::thread([this] { produce(); });
    std::unique_lock<std::mutex> lock(mu_);
    for_consumer_.wait(lock, [&] { return !queue_.empty() || ended_; });
    if (queue_.empty()) {
      if (error_) {
        std::exception_ptr e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
      }
      return false;
    }
    *out = std::move(queue_.front());
    queue_.pop_front();
    // A waiting producer is woken once the buffer is down to its low-water mark, not for every
    // element taken: a consumer slower than the pipeline (a training step) then pays one wake-up
    // per few elements, and the producer refills in a burst.
    const bool wake = producer_waiting_ && queue_.size() <= low_water();
    lock.unlock();
    if (wake) for_producer_.notify_one();
    return true;
  }

 private:
  void produce() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (!cancelled_ && queue_.size() >= capacity_) {
          producer_waiting_ = true;
          for_producer_.wait(lock, [&] { return cancelled_ || queue_.size() <= low_water(); });
          producer_waiting_ = false;
        }
        if (cancelled_) return;
      }
      Element e;
      std::exception_ptr error;
      const bool got = detail::next_or_error(*input_, &e, &error);
      std::lock_guard<std::mutex> lock(mu_);
      if (!got) {
        error_ = error;
        ended_ = true;
        for_consumer_.notify_all();
        return;
      }
      queue_.push_back(std::move(e));
      for_consumer_.notify_all();
    }
  }

  size_t low_water() const { return capacity_ / 2; }

  DatasetPtr keep_;
  std::unique_ptr<IteratorImpl> input_;
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable for_consumer_, for_producer_;
  std::deque<Element> queue_;
  bool ended_ = false, cancelled_ = false;
  bool producer_waiting_ = false;  // guarded by mu_: the producer sleeps until low_water()
  std::exception_ptr error_;
  std::thread producer_;  // joined by the destructor, before any member dies
};

class Prefetch final : public DatasetImpl {
 public:
  Prefetch(DatasetPtr input, int64_t buffer_size)
      : DatasetImpl("PrefetchDataset", input->element_spec(), input->cardinality()),
        input_(std::move(input)),
        buffer_size_(buffer_size) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    return std::make_unique<PrefetchIterator>(shared_from_this(), input_->make_iterator(),
                                              static_cast<size_t>(buffer_size_));
  }

 private:
  DatasetPtr input_;
  int64_t buffer_size_;
};

}  // namespace

Dataset prefetch(const Dataset& input, int64_t buffer_size) {
  if (buffer_size == kAutotune) buffer_size = kAutotunePrefetch;
  if (buffer_size < 0) throw InvalidArgumentError("buffer_size must be positive or AUTOTUNE.");
  if (buffer_size == 0) return input;  // TensorFlow: prefetch(0) does nothing
  return Dataset(std::make_shared<Prefetch>(input.impl(), buffer_size));
}

}  // namespace kiln::data
