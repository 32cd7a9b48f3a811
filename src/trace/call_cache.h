// A Function's call cache: call keys -> concrete functions, read without locks or reference
// counts. Readers look up inside a ReadSection (core/read_epoch.h) and may use what they
// find until it ends; writers (one at a time, under the Function's lock) publish a new index
// and retire the old one with the entries they removed.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kiln/detail/call_key.h"

namespace kiln::detail {

// A call key as the cache stores it (owned words), and as a lookup sees it (borrowed).
struct KeyView {
  const uint64_t* words;
  size_t size, hash;
};
struct StoredKey {
  std::vector<uint64_t> words;
  size_t hash;
};
struct KeyHash {
  using is_transparent = void;
  size_t operator()(const StoredKey& k) const { return k.hash; }
  size_t operator()(const KeyView& k) const { return k.hash; }
};
bool same_words(const uint64_t* a, size_t na, const uint64_t* b, size_t nb);
struct KeyEqual {
  using is_transparent = void;
  bool operator()(const StoredKey& a, const StoredKey& b) const {
    return same_words(a.words.data(), a.words.size(), b.words.data(), b.words.size());
  }
  bool operator()(const KeyView& a, const StoredKey& b) const {
    return same_words(a.words, a.size, b.words.data(), b.words.size());
  }
  bool operator()(const StoredKey& a, const KeyView& b) const {
    return same_words(a.words.data(), a.words.size(), b.words, b.size);
  }
};
inline KeyView view(const KeyBuilder& k) { return KeyView{k.data(), k.size(), k.hash()}; }
inline StoredKey stored(const KeyBuilder& k) {
  return StoredKey{std::vector<uint64_t>(k.data(), k.data() + k.size()), k.hash()};
}

class CallCache {
 public:
  CallCache();
  ~CallCache();
  CallCache(const CallCache&) = delete;
  CallCache& operator=(const CallCache&) = delete;

  // Readers, inside a ReadSection: the concrete function for `key`, or null. Marks the entry
  // used for the eviction sweep.
  const ConcreteImpl* find(const KeyView& key) const;

  // Writers, under the owner's exclusive lock.
  std::shared_ptr<ConcreteImpl> get(const KeyView& key) const;  // null on a miss
  size_t size() const { return entries_.size(); }
  void insert(const KeyBuilder& key, std::shared_ptr<ConcreteImpl> cf);
  // Keeps the map within `limit` keys: a clock sweep drops the keys not used since the
  // previous sweep (and clears the bits of the rest), then, if that was not enough, any keys
  // down to three quarters of the limit.
  void bound(size_t limit);
  void erase_for(const ConcreteImpl* cf);  // every key that leads to cf
  void clear();

 private:
  struct Entry {
    StoredKey key;
    std::shared_ptr<ConcreteImpl> cf;
    mutable std::atomic<bool> used{true};
  };
  // An open-addressing index over the entries, immutable once published.
  struct Index {
    size_t mask = 0;
    std::vector<const Entry*> slots;
  };
  struct Retired {
    uint64_t stamp;
    std::unique_ptr<const Index> index;
    std::vector<std::unique_ptr<Entry>> entries;
  };

  // Publishes an index over entries_ and retires the old one with `removed`.
  void publish(std::vector<std::unique_ptr<Entry>> removed);
  void reclaim();

  std::unordered_map<StoredKey, std::unique_ptr<Entry>, KeyHash, KeyEqual> entries_;
  std::atomic<const Index*> index_;
  std::vector<Retired> retired_;
};

}  // namespace kiln::detail
