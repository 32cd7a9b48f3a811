#include "trace/call_cache.h"

#include <bit>

#include "core/read_epoch.h"

namespace kiln::detail {

bool same_words(const uint64_t* a, size_t na, const uint64_t* b, size_t nb) {
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i)  // keys are a few words: a loop beats a call to memcmp
    if (a[i] != b[i]) return false;
  return true;
}

CallCache::CallCache() : index_(new Index{.mask = 0, .slots = {nullptr}}) {}

CallCache::~CallCache() {
  // The owner is going away: no reader can be looking at this cache any more.
  delete index_.load(std::memory_order_relaxed);
}

const ConcreteImpl* CallCache::find(const KeyView& key) const {
  const Index* index = index_.load(std::memory_order_seq_cst);  // a plain load on x86; see read_epoch.h
  for (size_t i = key.hash & index->mask;; i = (i + 1) & index->mask) {
    const Entry* e = index->slots[i];
    if (!e) return nullptr;
    if (e->key.hash == key.hash && same_words(key.words, key.size, e->key.words.data(), e->key.words.size())) {
      if (!e->used.load(std::memory_order_relaxed)) e->used.store(true, std::memory_order_relaxed);
      return e->cf.get();
    }
  }
}

std::shared_ptr<ConcreteImpl> CallCache::get(const KeyView& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second->cf;
}

void CallCache::insert(const KeyBuilder& key, std::shared_ptr<ConcreteImpl> cf) {
  if (entries_.find(view(key)) != entries_.end()) return;
  auto e = std::make_unique<Entry>();
  e->key = stored(key);
  e->cf = std::move(cf);
  StoredKey k = e->key;
  entries_.emplace(std::move(k), std::move(e));
  publish({});
}

void CallCache::bound(size_t limit) {
  if (entries_.size() <= limit) return;
  std::vector<std::unique_ptr<Entry>> removed;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second->used.exchange(false, std::memory_order_relaxed)) {
      ++it;
      continue;
    }
    removed.push_back(std::move(it->second));
    it = entries_.erase(it);
  }
  for (auto it = entries_.begin(); entries_.size() > limit * 3 / 4 && it != entries_.end();) {
    removed.push_back(std::move(it->second));
    it = entries_.erase(it);
  }
  publish(std::move(removed));
}

void CallCache::erase_for(const ConcreteImpl* cf) {
  std::vector<std::unique_ptr<Entry>> removed;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second->cf.get() != cf) {
      ++it;
      continue;
    }
    removed.push_back(std::move(it->second));
    it = entries_.erase(it);
  }
  if (!removed.empty()) publish(std::move(removed));
}

void CallCache::clear() {
  std::vector<std::unique_ptr<Entry>> removed;
  for (auto& [key, e] : entries_) removed.push_back(std::move(e));
  entries_.clear();
  publish(std::move(removed));
}

void CallCache::publish(std::vector<std::unique_ptr<Entry>> removed) {
  // At most half full, so a probe ends at an empty slot soon.
  const size_t capacity = std::bit_ceil(std::max<size_t>(2 * entries_.size(), 2));
  auto index = std::make_unique<Index>();
  index->mask = capacity - 1;
  index->slots.assign(capacity, nullptr);
  for (const auto& [key, e] : entries_) {
    size_t i = key.hash & index->mask;
    while (index->slots[i]) i = (i + 1) & index->mask;
    index->slots[i] = e.get();
  }
  const Index* old = index_.exchange(index.release(), std::memory_order_seq_cst);
  retired_.push_back(
      Retired{.stamp = retire_stamp(), .index = std::unique_ptr<const Index>(old), .entries = std::move(removed)});
  reclaim();
}

void CallCache::reclaim() {
  if (retired_.empty()) return;
  const uint64_t oldest = oldest_reader_epoch();
  std::erase_if(retired_, [&](const Retired& r) { return r.stamp < oldest; });
}

}  // namespace kiln::detail
