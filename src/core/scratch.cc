#include "core/scratch.h"

#include <cstdlib>
#include <new>

#include "core/tls.h"
#include "kiln/errors.h"

namespace kiln::detail {
namespace {

struct Scratch {
  void* data[kScratchSlots] = {};
  size_t size[kScratchSlots] = {};
  ~Scratch() {
    for (void* p : data) std::free(p);
  }
};

// Frees the thread's scratch when the thread exits; 8 bytes of TLS.
struct ScratchOwner {
  Scratch* scratch = nullptr;
  ~ScratchOwner() { delete scratch; }
};
KILN_TLS thread_local ScratchOwner t_scratch;

}  // namespace

void* scratch_bytes(int slot, size_t bytes) {
  if (!t_scratch.scratch) t_scratch.scratch = new Scratch();
  Scratch& s = *t_scratch.scratch;
  if (s.size[slot] < bytes) {
    const size_t grown = std::max(bytes, s.size[slot] * 2);
    const size_t rounded = (grown + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw ResourceExhaustedError("OOM when allocating " + std::to_string(rounded) + " bytes of scratch");
    std::free(s.data[slot]);
    s.data[slot] = p;
    s.size[slot] = rounded;
  }
  return s.data[slot];
}

}  // namespace kiln::detail
