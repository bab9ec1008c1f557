#pragma once

// Ingests a stream of Kubernetes watch documents (JSON lines or pretty-printed, see
// ingest/splitter.h) into the ledger. Documents are decoded with model::WatchDecoder; accepted
// events and quarantined rejections are committed in units of up to `batch_documents` documents,
// each unit in one atomic WriteBatch together with the source position after its last document. A
// later run with the same source resumes after the last committed document and duplicates
// nothing. Decoding overlaps with the commit of the previous unit.

#include <cstdint>
#include <functional>
#include <string>

#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::ingest {

struct StreamIngestOptions {
  // The source id positions are kept under, e.g. "file:/abs/path". Required.
  std::string source;
  // Prefix of quarantine positions ("<label>:<line>"). Default: the source id.
  std::string label;
  // Documents per unit of work. Default: 1024. Units that queue up while a commit runs are
  // committed together (still atomically, in order).
  size_t batch_documents = 1024;
  // Continue after the committed position of `source`. A regular file is checked to be the same
  // file (size and a hash of its first 4 KiB); other streams skip that many bytes. Default: true.
  bool resume = true;
  // Read size. Default: 1 MiB.
  size_t read_size = 1u << 20;
};

struct IngestProgress {
  uint64_t documents = 0;    // documents committed (events and rejections)
  uint64_t events = 0;       // watch events appended
  uint64_t quarantined = 0;  // rejections quarantined
  uint64_t offset = 0;       // committed source byte offset
  uint64_t line = 0;         // next line to read after the committed offset
  uint64_t first_seq = 0;    // input seqs of the last unit (0 when it had none)
  uint64_t last_seq = 0;
  uint64_t resumed_from = 0;  // the offset this run started at
};

// The committed position of a source, as stored in the ledger meta.
struct StreamPosition {
  uint64_t offset = 0;
  uint64_t line = 1;
  uint64_t prefix_hash = 0;  // FNV-1a of the first min(offset, 4096) bytes
  uint64_t prefix_len = 0;
};
std::string EncodeStreamPosition(const StreamPosition& p);
Result<StreamPosition> DecodeStreamPosition(std::string_view s);

// Reads `fd` to its end. `on_commit` (optional) is called after every committed unit, in order,
// with the running totals. Returns the totals; an error stops the ingest (committed units stay).
Result<IngestProgress> IngestStream(int fd, store::Ledger* ledger,
                                    const StreamIngestOptions& options,
                                    const std::function<void(const IngestProgress&)>& on_commit);

}  // namespace cronledger::ingest
