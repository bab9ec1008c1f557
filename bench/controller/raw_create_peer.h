#pragma once

// The floor peer of controller_bench (docs/controller.md "Scale"): the records a create must have
// durable before its Job is created (docs/design.md rules 1 and 3: the Tick and the create intent,
// and the createJob decision; the audit index follows behind the commit), copied byte for byte
// from the ledger the controller wrote in the measured window, then written again as raw RocksDB
// WriteBatches into a fresh database with the same column families and options: large batches, 2
// writer threads, one fsync per batch, nothing else (no view fold, no passes, no API). What our
// ledger and controller would be at best on this disk and these cores.

#include <cstdint>
#include <string>
#include <vector>

#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::bench {

struct RawRecord {
  std::string cf;  // column family name
  std::string key;
  std::string value;
};

struct CapturedCreates {
  std::vector<RawRecord> records;
  uint64_t creates = 0;  // createJob decisions among them
  uint64_t bytes = 0;    // key + value bytes
  uint64_t max_seq = 0;  // the largest seq a key ends with (rounds shift keys past it)
};

// Reads, from the ledger at `ledger_dir` (closed), the input records with the given seqs and the
// decision records with the given seqs.
Result<CapturedCreates> ReadCreateRecords(const std::string& ledger_dir,
                                          const std::vector<uint64_t>& input_seqs,
                                          const std::vector<uint64_t>& decision_seqs);

struct RawPeerOptions {
  std::string dir;              // fresh; created with store::Ledger::Open(ledger), then reopened
  store::LedgerOptions ledger;  // the controller's ledger options (path is replaced by dir)
  size_t creates_per_batch = 4096;  // one WriteBatch, one fsync
  int threads = 2;
  // Rounds over the captured records (keys shifted past the previous round's seqs, values
  // unchanged) until both hold, or max_creates are written.
  double min_seconds = 5;
  uint64_t min_creates = 100'000;
  uint64_t max_creates = 1'000'000;
};

struct RawPeerResult {
  uint64_t creates = 0;
  uint64_t batches = 0;
  uint64_t bytes = 0;
  double seconds = 0;      // wall time of the writes
  double cpu_seconds = 0;  // the process's CPU meanwhile (RocksDB's own threads included)
};

Result<RawPeerResult> RunRawPeer(const RawPeerOptions& options, const CapturedCreates& captured);

}  // namespace cronledger::bench
