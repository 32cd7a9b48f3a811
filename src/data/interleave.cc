// interleave and flat_map: inner datasets made per input element (by a front end's function),
// visited in TensorFlow's order; with prefetch, each open one runs ahead on its own thread.
#include "data/dataset.h"

namespace kiln::data {
namespace {

class Interleave final : public DatasetImpl {
 public:
  Interleave(DatasetPtr input, DatasetMaker make, std::vector<TensorSpec> spec, int64_t cycle, int64_t block,
             int64_t prefetch)
      : DatasetImpl(cycle == 1 && block == 1 && prefetch == 0 ? "FlatMapDataset" : "InterleaveDataset", std::move(spec),
                    kUnknownCardinality),
        input_(std::move(input)),
        make_(std::move(make)),
        cycle_(static_cast<size_t>(cycle)),
        block_(block),
        prefetch_(prefetch) {}

  std::unique_ptr<IteratorImpl> make_iterator() const override {
    struct Slot {
      DatasetPtr dataset;  // kept while its iterator runs
      std::unique_ptr<IteratorImpl> it;
    };
    struct It final : IteratorImpl {
      const Interleave* ds;
      DatasetPtr keep;
      std::unique_ptr<IteratorImpl> input;
      std::vector<Slot> slots;
      size_t at = 0, open = 0;
      int64_t taken = 0;  // from the current slot in this turn
      bool input_done = false;
      void pass_turn() {
        taken = 0;
        at = (at + 1) % slots.size();
      }
      bool next(Element* out) override {
        while (!input_done || open > 0) {
          Slot& slot = slots[at];
          if (slot.it) {
            if (slot.it->next(out)) {
              ds->check(*out);
              if (++taken == ds->block_) pass_turn();
              return true;
            }
            out->clear();
            slot = Slot{.dataset = nullptr, .it = nullptr};
            --open;
            pass_turn();
            continue;
          }
          if (input_done) {
            pass_turn();
            continue;
          }
          Element element;
          if (!input->next(&element)) {
            input_done = true;
            continue;
          }
          Dataset inner = ds->make_(element);
          if (ds->prefetch_ > 0) inner = data::prefetch(inner, ds->prefetch_);
          slot.dataset = inner.impl();
          slot.it = slot.dataset->make_iterator();
          ++open;
        }
        return false;
      }
    };
    auto it = std::make_unique<It>();
    it->ds = this;
    it->keep = shared_from_this();
    it->slots.resize(cycle_);
    it->input = input_->make_iterator();
    return it;
  }

 private:
  // The inner datasets' shapes may differ from one another (the spec the front end found is
  // one of them); their components and dtypes may not.
  void check(const Element& e) const {
    const auto& spec = element_spec();
    bool same = e.size() == spec.size();
    for (size_t i = 0; same && i < e.size(); ++i) same = e[i].dtype() == spec[i].dtype;
    if (!same) {
      std::string got;
      for (const Tensor& t : e) got += std::string(got.empty() ? "" : ", ") + std::string(dtype_name(t.dtype()));
      throw InvalidArgumentError("interleave: a dataset made by `map_func` yields elements of (" + got +
                                 "); the first one made yields " + std::to_string(spec.size()) +
                                 " components of other dtypes");
    }
  }

  DatasetPtr input_;
  DatasetMaker make_;
  size_t cycle_;
  int64_t block_;
  int64_t prefetch_;
};

}  // namespace

Dataset interleave(const Dataset& input, DatasetMaker make_inner, std::vector<TensorSpec> element_spec,
                   int64_t cycle_length, int64_t block_length, int64_t prefetch) {
  if (cycle_length <= 0) throw InvalidArgumentError("cycle_length must be greater than zero.");
  if (block_length <= 0) throw InvalidArgumentError("block_length must be greater than zero.");
  if (prefetch < 0) throw InvalidArgumentError("interleave: prefetch must be non-negative");
  if (!make_inner) throw InvalidArgumentError("interleave: make_inner is empty");
  return Dataset(std::make_shared<Interleave>(input.impl(), std::move(make_inner), std::move(element_spec),
                                              cycle_length, block_length, prefetch));
}

}  // namespace kiln::data
