// LevelDB's sorted string table, the container of TensorFlow's checkpoint index
// (<prefix>.index): sorted key/value pairs in checksummed blocks, an index block, a footer.
// Written without compression, as TensorFlow writes it; read as hostile input.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kiln::io {

using TableEntries = std::vector<std::pair<std::string, std::string>>;

// The table's bytes. Keys must be strictly increasing (bytewise); InvalidArgumentError if not.
std::string build_table(const TableEntries& sorted_entries);

// Every entry, in key order. DataLossError for anything malformed: a bad footer or magic, a
// block outside the file, a checksum mismatch, compressed blocks (TensorFlow never writes
// them), keys out of order, more than max_entries entries, a key longer than
// kMaxTableKeyBytes, or keys spelling out more than kMaxTableKeyTotalBytes in all (io/limits.h).
TableEntries read_table(const std::string& bytes, size_t max_entries);

}  // namespace kiln::io
