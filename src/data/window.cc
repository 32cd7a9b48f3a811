// window: groups of `size` elements, each component of a group held as a dataset (in a
// scalar variant), as TensorFlow's WindowDataset gives them.
#include <deque>

#include "data/dataset.h"
#include "ops/dataset_object.h"

namespace kiln::data {
namespace {

// A finite dataset of values already computed (one window's component).
class Values final : public DatasetImpl {
 public:
  Values(TensorSpec spec, std::vector<Tensor> values)
      : DatasetImpl("WindowDataset", {spec}, static_cast<int64_t>(values.size())), values_(std::move(values)) {}
  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      DatasetPtr keep;
      const std::vector<Tensor>* values;
      size_t at = 0;
      bool next(Element* out) override {
        if (at >= values->size()) return false;
        out->push_back((*values)[at++]);
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->keep = shared_from_this();
    it->values = &values_;
    return it;
  }

 private:
  std::vector<Tensor> values_;
};

int64_t windows(int64_t n, int64_t size, int64_t shift, int64_t stride, bool drop) {
  if (n < 0) return n;
  const int64_t span = (size - 1) * stride + 1;
  if (drop) return n < span ? 0 : (n - span) / shift + 1;
  return (n + shift - 1) / shift;
}

class Window final : public DatasetImpl {
 public:
  Window(DatasetPtr input, int64_t size, int64_t shift, int64_t stride, bool drop)
      : DatasetImpl("WindowDataset",
                    std::vector<TensorSpec>(input->element_spec().size(),
                                            {.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Variant}),
                    windows(input->cardinality(), size, shift, stride, drop)),
        input_(std::move(input)),
        size_(size),
        shift_(shift),
        stride_(stride),
        drop_(drop) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct It final : IteratorImpl {
      const Window* ds;
      DatasetPtr keep;
      std::unique_ptr<IteratorImpl> input;
      std::deque<Element> buffer;  // elements from the current window's start on
      bool input_done = false;
      int64_t to_drop = 0;  // elements to skip before the next window starts (shift > span)
      bool next(Element* out) override {
        const int64_t span = (ds->size_ - 1) * ds->stride_ + 1;
        while (to_drop > 0 && !input_done) {
          Element e;
          if (!input->next(&e))
            input_done = true;
          else
            --to_drop;
        }
        while (!input_done && static_cast<int64_t>(buffer.size()) < span) {
          Element e;
          if (!input->next(&e)) {
            input_done = true;
            break;
          }
          buffer.push_back(std::move(e));
        }
        if (buffer.empty()) return false;
        if (ds->drop_ && static_cast<int64_t>(buffer.size()) < span) return false;
        const auto& spec = ds->input_->element_spec();
        for (size_t c = 0; c < spec.size(); ++c) {
          std::vector<Tensor> values;
          for (int64_t k = 0; k < static_cast<int64_t>(buffer.size()) && k < span; k += ds->stride_)
            values.push_back(buffer[static_cast<size_t>(k)][c]);
          out->push_back(as_variant(Dataset(std::make_shared<Values>(spec[c], std::move(values)))));
        }
        const int64_t drop = std::min<int64_t>(ds->shift_, static_cast<int64_t>(buffer.size()));
        buffer.erase(buffer.begin(), buffer.begin() + drop);
        to_drop = ds->shift_ - drop;
        return true;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    it->input = input_->make_iterator();
    return it;
  }

 private:
  DatasetPtr input_;
  int64_t size_, shift_, stride_;
  bool drop_;
};

}  // namespace

Dataset window(const Dataset& input, int64_t size, int64_t shift, int64_t stride, bool drop_remainder) {
  if (size <= 0)
    throw InvalidArgumentError("Window size must be greater than zero, but got " + std::to_string(size) + ".");
  if (shift <= 0)
    throw InvalidArgumentError("Window shift must be greater than zero, but got " + std::to_string(shift) + ".");
  if (stride <= 0)
    throw InvalidArgumentError("Window stride must be greater than zero, but got " + std::to_string(stride) + ".");
  return Dataset(std::make_shared<Window>(input.impl(), size, shift, stride, drop_remainder));
}

}  // namespace kiln::data
