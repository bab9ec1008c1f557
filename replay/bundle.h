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
#include <vector>

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

// A bundle set (`cronledger export` on an audit store): one bundle per source, each exactly as
// `export` writes it for that source's copy, in source order.
//
//   line 1    {"bundleSet":"cronledger","version":1,"sources":["replica-1","replica-2"]}
//   section   {"section":"replica-1"}   then that source's bundle, every line of it
//   last      {"setEnd":true,"sources":N,"sha256":HEX}
//
// `sha256` covers every byte before the last line. Each section keeps its own bundle's checksum,
// so a change inside a section is located by the section's own checks (ReadBundle, and the trail
// verification of a trail bundle); the set's checksum only says that something changed.
inline constexpr int kBundleSetVersion = 1;

struct BundleSection {
  std::string source;
  std::string bundle;  // the section's bundle, as ReadBundle reads it
};

std::string WriteBundleSet(const std::vector<BundleSection>& sections);
// Whether `text` starts like a bundle set (its first line names it), whole or not.
bool IsBundleSet(std::string_view text);

struct LoadedBundleSet {
  std::vector<BundleSection> sections;
  // False when the last line's checksum does not match the bytes before it (the sections are
  // still returned, for the checks that locate the change).
  bool checksum_matches = false;
  // Whether the sections are the sources line 1 names, in its order (false when a section was
  // removed, added or moved).
  bool sections_match_header = false;
};
// Splits a bundle set into its sections. Corruption naming the line when it is not one (no set
// header, a line outside any section, no last line, a section named twice); never throws.
Result<LoadedBundleSet> ReadBundleSet(std::string_view text);

std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace cronledger::replay
