#pragma once

// Incident bundles (`cronledger export`, `cronledger replay --bundle`; docs/replay.md "Bundles"):
// a self-describing, versioned JSON-lines file holding the records needed to replay a scope
// without the store.
//
//   line 1   {"bundle":"cronledger","version":1,"recordFormat":1,"schemaVersion":S,
//             "tzdata":"2025b","scope":{"since":T|null,"until":T|null,"cronJob":"ns/name"|null},
//             "inputs":N,"decisions":M}
//   inputs   {"input":SEQ,"type":"Tick","recordedAt":T,"rawPruned":false,"record":BASE64}
//   decisions{"decision":SEQ,"time":T,"cronJob":"ns/name","action":A,"record":BASE64}
//   last     {"end":true,"inputs":N,"decisions":M,"sha256":HEX}
//
// `record` is the ledger's versioned binary encoding (model/inputs.h; watch events with their raw
// object bytes); the other fields are for people and tools. `sha256` covers every byte before the
// last line. The inputs are: every ConfigChange; the objects of the selected CronJobs as the view
// held them just before the first replayed pass; every later watch event of those CronJobs up to
// the last replayed Tick; the replayed passes' Ticks, intents, outcomes and PassEnds; and, per
// CronJob, the last PassEnd before the window (it carries the accounting state the window starts
// from). The decisions are those of the replayed passes.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model/result.h"
#include "replay/engine.h"
#include "replay/source.h"

namespace cronledger::replay {

inline constexpr int kBundleVersion = 1;

struct BundleHeader {
  int version = kBundleVersion;
  int record_format = 0;   // model::kInputFormatV1
  int schema_version = 0;  // the store's schema version
  std::string tzdata;      // the tz database version the store's host had ("" when unknown)
  ReplayScope scope;
  uint64_t inputs = 0;
  uint64_t decisions = 0;
};

// Selects and writes the bundle of `scope`. `header` supplies schema_version and tzdata; the
// rest is filled in.
Result<std::string> ExportBundle(RecordSource& source, const ReplayScope& scope,
                                 BundleHeader header);

// Parses and checks a bundle (format, version, counts, checksum, every record's encoding).
// Corruption naming the line on any mismatch; never throws.
struct LoadedBundle {
  BundleHeader header;
  std::unique_ptr<MemorySource> source;
};
Result<LoadedBundle> ReadBundle(std::string_view text);

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace cronledger::replay
