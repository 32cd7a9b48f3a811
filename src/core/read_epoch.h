// Lock-free readers with deferred frees (epoch-based reclamation): a reader marks itself
// with the epoch it entered in and reads shared structures without locks or reference
// counts; a writer that unlinks a structure stamps it with the current epoch and frees it
// only once every reader that might still see it has left. The read side costs two plain
// stores: the store-load ordering a reader needs is paid by the writer, with one
// membarrier(2) that makes every running thread of the process execute a full barrier (as
// liburcu and folly do). Where the kernel lacks it, a reader's entry is an exchange.
#pragma once
#include <cstdint>

namespace kiln::detail {

// While one lives on this thread, whatever was reachable when the outermost one began stays
// allocated. Sections nest; they may span long work (a graph run).
class ReadSection {
 public:
  ReadSection();
  ~ReadSection();
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;
};

// Called by a writer after it has unlinked something with a seq_cst store or exchange (a
// reader loads what it reads with a seq_cst load): the stamp to free it by.
uint64_t retire_stamp();

// Everything retired with a stamp below this may be freed: no read section that could have
// seen it remains. One barrier and one scan of the readers, however many stamps it judges.
uint64_t oldest_reader_epoch();

}  // namespace kiln::detail
