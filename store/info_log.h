#pragma once

// RocksDB's diagnostic log ("LOG" in the ledger directory), written with stdio instead of
// RocksDB's own log writer. RocksDB's writer asserts (and so aborts the process, in Debian's
// build) when it is used again after a failed write, which is exactly what happens when the disk
// fills up: the write path reports the full disk as an error, then RocksDB logs that error. This
// one drops what it cannot write; the ledger's errors are reported by the write path.
#include <rocksdb/env.h>

#include <cstddef>
#include <memory>
#include <string>

namespace cronledger::store {

// A logger appending to `path`; at `max_bytes` the file is moved to `path + ".old"` (replacing
// the previous one) and a new one started.
std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& path, size_t max_bytes);

}  // namespace cronledger::store
