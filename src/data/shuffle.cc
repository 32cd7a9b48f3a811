// shuffle: TensorFlow's algorithm (a buffer of buffer_size elements; each output is a
// uniformly chosen buffer slot, refilled from the input). The random stream is kiln's own,
// so a seeded order is repeatable within kiln but differs from TensorFlow's.
#include <atomic>
#include <random>

#include "data/dataset.h"

namespace kiln::data {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finalizer: distinct iterations, unrelated streams
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Shuffle final : public DatasetImpl {
 public:
  Shuffle(DatasetPtr input, int64_t buffer_size, uint64_t seed, bool reshuffle)
      : DatasetImpl("ShuffleDataset", input->element_spec(), input->cardinality()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        reshuffle_(reshuffle) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      std::unique_ptr<IteratorImpl> input;
      size_t capacity;
      std::mt19937_64 rng;
      std::vector<Element> buffer;
      bool input_done = false;
      bool next(Element* out) override {
        while (!input_done && buffer.size() < capacity) {
          Element e;
          if (!input->next(&e)) {
            input_done = true;
            break;
          }
          buffer.push_back(std::move(e));
        }
        if (buffer.empty()) return false;
        const size_t pick = std::uniform_int_distribution<size_t>(0, buffer.size() - 1)(rng);
        *out = std::move(buffer[pick]);
        buffer[pick] = std::move(buffer.back());
        buffer.pop_back();
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->input = input_->make_iterator();
    // A huge buffer_size (TensorFlow programs pass the dataset size or more) grows as it fills.
    it->capacity = static_cast<size_t>(buffer_size_);
    const uint64_t pass = reshuffle_ ? passes_.fetch_add(1, std::memory_order_relaxed) : 0;
    it->rng.seed(mix(seed_ ^ mix(pass)));
    return it;
  }

 private:
  DatasetPtr input_;
  int64_t buffer_size_;
  uint64_t seed_;
  bool reshuffle_;
  mutable std::atomic<uint64_t> passes_{0};
};

}  // namespace

Dataset shuffle(const Dataset& input, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration) {
  if (buffer_size <= 0) throw InvalidArgumentError("buffer_size must be greater than zero.");
  // Unseeded: a seed drawn once here, so reshuffle_each_iteration=false repeats one order.
  const uint64_t s = seed >= 0 ? static_cast<uint64_t>(seed)
                               : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return Dataset(std::make_shared<Shuffle>(input.impl(), buffer_size, s, reshuffle_each_iteration));
}

}  // namespace kiln::data
