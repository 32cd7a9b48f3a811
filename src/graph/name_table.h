// A graph's names as TensorFlow's names_in_use keeps them: every name given out (a node's,
// a scope's, a hint's first use), how many times it was asked for as a hint, and the node
// it names. Open addressing over one array of entries, so naming a node and copying a
// graph's names allocate nothing per name (short names stay inside their std::string).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::graph {

class Node;

class NameTable {
 public:
  struct Entry {
    uint64_t hash = 0;  // 0: an empty slot
    std::string name;
    int hint_uses = 0;
    Node* node = nullptr;
  };

  // The entry for `name`, made empty (no uses, no node) if it had none; `made` says which.
  // The pointer is valid until the next call that makes an entry.
  Entry* try_emplace(std::string_view name, bool* made) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    const uint64_t h = hash_of(name);
    size_t i = h & (slots_.size() - 1);
    for (; slots_[i].hash; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].hash == h && slots_[i].name == name) {
        *made = false;
        return &slots_[i];
      }
    slots_[i].hash = h;
    slots_[i].name = name;
    ++used_;
    *made = true;
    return &slots_[i];
  }
  Entry* find(std::string_view name) {
    if (slots_.empty()) return nullptr;
    const uint64_t h = hash_of(name);
    for (size_t i = h & (slots_.size() - 1); slots_[i].hash; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].hash == h && slots_[i].name == name) return &slots_[i];
    return nullptr;
  }
  const Entry* find(std::string_view name) const { return const_cast<NameTable*>(this)->find(name); }
  // Entries move when this changes.
  size_t capacity() const { return slots_.size(); }
  // Calls f(Entry&) for every entry.
  template <class F>
  void for_each(F&& f) {
    for (Entry& e : slots_)
      if (e.hash) f(e);
  }

 private:
  static uint64_t hash_of(std::string_view name) { return std::hash<std::string_view>()(name) | 1; }
  void grow() {
    std::vector<Entry> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Entry{});
    for (Entry& e : old) {
      if (!e.hash) continue;
      size_t i = e.hash & (slots_.size() - 1);
      while (slots_[i].hash) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = std::move(e);
    }
  }
  std::vector<Entry> slots_;  // a power of two of them, at most half used
  size_t used_ = 0;
};

}  // namespace kiln::graph
