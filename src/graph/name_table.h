// A graph's names as TensorFlow's names_in_use keeps them: every name given out (a node's,
// a scope's, a hint's first use), how many times it was asked for as a hint, and the node
// it names. Open addressing over an array of small entries, the names in a vector beside
// it: naming a node and copying a graph's names allocate nothing per name (short names stay
// inside their std::string).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::graph {

class Node;

class NameTable {
 public:
  struct Entry {
    uint64_t hash = 0;  // 0: an empty slot
    uint32_t name = 0;  // index into names_
    int hint_uses = 0;
    Node* node = nullptr;
  };

  // The entry for `name`, made empty (no uses, no node) if it had none; `made` says which.
  // The pointer is valid until the next call that makes an entry.
  Entry* try_emplace(std::string_view name, bool* made) {
    if (2 * (names_.size() + 1) > slots_.size()) grow();
    const uint64_t h = hash_of(name);
    size_t i = h & (slots_.size() - 1);
    for (; slots_[i].hash; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].hash == h && names_[slots_[i].name] == name) {
        *made = false;
        return &slots_[i];
      }
    slots_[i].hash = h;
    slots_[i].name = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    *made = true;
    return &slots_[i];
  }
  Entry* find(std::string_view name) {
    if (slots_.empty()) return nullptr;
    const uint64_t h = hash_of(name);
    for (size_t i = h & (slots_.size() - 1); slots_[i].hash; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].hash == h && names_[slots_[i].name] == name) return &slots_[i];
    return nullptr;
  }
  const Entry* find(std::string_view name) const { return const_cast<NameTable*>(this)->find(name); }
  // Entries move when this changes.
  size_t capacity() const { return slots_.size(); }
  // An entry's place, for looking it up again without hashing while the capacity is the same.
  size_t slot_of(const Entry* e) const { return static_cast<size_t>(e - slots_.data()); }
  Entry& slot(size_t i) { return slots_[i]; }
  std::string_view name_of(const Entry& e) const { return names_[e.name]; }
  // Calls f(Entry&) for every entry.
  template <class F>
  void for_each(F&& f) {
    for (Entry& e : slots_)
      if (e.hash) f(e);
  }

 private:
  // Never 0 (an empty slot's mark). Not `| 1`: the low bits pick the slot, and a hash
  // always odd would start every probe on an odd slot, half the table, in long runs.
  // Eight bytes at a time, each word multiplied in and its high half folded down, so the low
  // bits depend on every byte: a node name is a few words, and std::hash's general-purpose
  // byte loop was a third of naming a node (tracing names every op it records).
  static uint64_t hash_of(std::string_view name) {
    constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
    uint64_t h = name.size() * kMul;
    size_t i = 0;
    for (; i + 8 <= name.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, name.data() + i, 8);
      h = (h ^ w) * kMul;
      h ^= h >> 32;
    }
    uint64_t w = 0;
    std::memcpy(&w, name.data() + i, name.size() - i);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    return h ? h : 1;
  }
  void grow() {
    std::vector<Entry> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Entry{});
    for (const Entry& e : old) {
      if (!e.hash) continue;
      size_t i = e.hash & (slots_.size() - 1);
      while (slots_[i].hash) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = e;
    }
  }
  // The slots hold 24-byte entries and the names live apart, in the order given out: a
  // table at most half full stays small (a large graph's grew by hundreds of kilobytes of
  // fresh pages at a time when each slot held its string), and growing moves no strings.
  std::vector<Entry> slots_;  // a power of two of them, at most half used
  std::vector<std::string> names_;
};

}  // namespace kiln::graph
