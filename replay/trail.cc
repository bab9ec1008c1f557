// The audit trail's chain and its incremental update (replay/trail.h).
#include "replay/trail.h"

#include <bit>
#include <cstring>

#include "model/sha256.h"
#include "replay/merkle.h"

namespace cronledger::replay::trail {
namespace {

namespace st = store::trail;

constexpr uint8_t kLeafPrefix = 0x00;
constexpr uint8_t kNodePrefix = 0x01;
constexpr uint8_t kGenesisPrefix = 0x02;
// Leaves hashed and written per WriteTrail batch.
constexpr size_t kUpdateBatch = 4096;

void PutBe64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

std::string_view View(const Hash& h) {
  return std::string_view(reinterpret_cast<const char*>(h.data()), h.size());
}

Hash Of(const model::Sha256::Digest& d) {
  Hash h;
  std::memcpy(h.data(), d.data(), h.size());
  return h;
}

std::string LeafHeader(std::string_view kind, uint64_t seq) {
  std::string m(1, static_cast<char>(kLeafPrefix));
  m.append(kTrailFormat).append("/").append(kind).push_back('\0');
  PutBe64(&m, seq);
  return m;
}

// Chains one log's new records: `scan(from_seq, add)` calls add(seq, entry) in seq order.
using AddFn = std::function<Status(uint64_t, const st::TrailEntry&)>;
using ScanFn = std::function<Status(uint64_t, const AddFn&)>;

// The Merkle tree's key of a chain, beside its state: "trail/SOURCE\0LOG\0t". Its value: a
// format byte (1), be64(leaf count), then the roots of the tree's perfect subtrees, largest first
// (one per set bit of the count). Written in the same batch as the chain's state.
std::string TreeKey(const std::string& source, std::string_view log) {
  return st::ChainPrefix(source, log) + "t";
}

std::string EncodeTree(const merkle::CompactRange& tree) {
  std::string out(1, '\x01');
  PutBe64(&out, tree.size());
  for (const Hash& h : tree.roots()) out.append(View(h));
  return out;
}

Result<merkle::CompactRange> DecodeTree(std::string_view bytes) {
  uint64_t size = 0;
  for (size_t i = 1; i < 9 && i < bytes.size(); ++i)
    size = (size << 8) | static_cast<uint8_t>(bytes[i]);
  const size_t roots = static_cast<size_t>(std::popcount(size));
  if (bytes.size() != 9 + roots * 32 || bytes[0] != '\x01') {
    return Status::Corruption("audit trail: malformed tree value");
  }
  std::vector<Hash> hashes(roots);
  for (size_t i = 0; i < roots; ++i) std::memcpy(hashes[i].data(), bytes.data() + 9 + i * 32, 32);
  return merkle::CompactRange(size, std::move(hashes));
}

// The Merkle tree of a chain's leaves so far: kept beside the state, or rebuilt once from the kept
// entries (and then stored) when there is none (a trail kept before the tree was) or it is of
// fewer leaves than the state (a release without the tree chained records since).
Result<merkle::CompactRange> TreeOf(store::Ledger& ledger, const std::string& source,
                                    std::string_view log, const st::TrailState& state,
                                    bool* rebuilt) {
  *rebuilt = false;
  auto stored = ledger.GetTrail(TreeKey(source, log));
  if (stored.ok()) {
    CL_ASSIGN_OR_RETURN(merkle::CompactRange tree, DecodeTree(*stored));
    if (tree.size() == state.records) return tree;
  } else if (!stored.status().IsNotFound()) {
    return stored.status();
  }
  merkle::CompactRange tree;
  if (state.records == 0) return tree;
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanTrail(st::EntryPrefix(source, log), "",
                                      [&](std::string_view, std::string_view value) {
                                        auto e = st::DecodeEntry(value);
                                        if (!e.ok()) status = e.status();
                                        if (e.ok()) tree.Append(e->leaf);
                                        return e.ok() && tree.size() < state.records;
                                      }));
  CL_RETURN_IF_ERROR(status);
  if (tree.size() != state.records) {
    return Status::Corruption("audit trail: " + std::string(log) + " keeps " +
                              std::to_string(tree.size()) + " entries for " +
                              std::to_string(state.records) + " records");
  }
  *rebuilt = true;
  return tree;
}

Result<ChainHead> UpdateChain(store::Ledger& ledger, std::string_view log,
                              const UpdateOptions& options, const ScanFn& scan) {
  const std::string source(st::kLocalSource);
  st::TrailState state;
  auto stored = ledger.GetTrail(st::StateKey(source, log));
  if (stored.ok()) {
    CL_ASSIGN_OR_RETURN(state, st::DecodeState(*stored));
  } else if (stored.status().IsNotFound()) {
    state.head = Genesis(source, log);
    state.mark_every = options.mark_every == 0 ? 1 : options.mark_every;
  } else {
    return stored.status();
  }
  ChainHead out;
  out.source = source;
  out.log = std::string(log);
  CL_RETURN_IF_ERROR(ledger.ScanTrail(st::MarkPrefix(source, log), "",
                                      [&](std::string_view, std::string_view value) {
                                        auto m = st::DecodeMark(value);
                                        if (m.ok()) out.marks.push_back(*m);
                                        return m.ok();
                                      }));
  if (out.marks.size() != state.records / state.mark_every) {
    return Status::Corruption("audit trail: " + std::string(log) + " has " +
                              std::to_string(out.marks.size()) + " marks for " +
                              std::to_string(state.records) + " records");
  }
  bool rebuilt = false;
  CL_ASSIGN_OR_RETURN(merkle::CompactRange tree, TreeOf(ledger, source, log, state, &rebuilt));
  std::vector<std::pair<std::string, std::string>> puts;
  auto flush = [&]() -> Status {
    if (puts.empty() || !options.persist) return Status::Ok();
    puts.emplace_back(st::StateKey(source, log), st::EncodeState(state));
    puts.emplace_back(TreeKey(source, log), EncodeTree(tree));
    Status s = ledger.WriteTrail(puts);
    puts.clear();
    return s;
  };
  CL_RETURN_IF_ERROR(scan(state.last_seq + 1, [&](uint64_t seq, const st::TrailEntry& e) {
    state.head = Chain(state.head, e.leaf);
    tree.Append(e.leaf);
    ++state.records;
    if (state.first_seq == 0) state.first_seq = seq;
    state.last_seq = seq;
    if (options.persist) puts.emplace_back(st::EntryKey(source, log, seq), st::EncodeEntry(e));
    if (state.records % state.mark_every == 0) {
      const st::TrailMark mark{seq, state.head};
      out.marks.push_back(mark);
      const uint64_t index = state.records / state.mark_every;
      if (options.persist) puts.emplace_back(st::MarkKey(source, log, index), st::EncodeMark(mark));
    }
    return puts.size() >= kUpdateBatch ? flush() : Status::Ok();
  }));
  CL_RETURN_IF_ERROR(flush());
  if (rebuilt && options.persist && state.records == tree.size()) {
    // A rebuilt tree is kept even when no record was new, so the rebuild happens once.
    CL_RETURN_IF_ERROR(ledger.WriteTrail({{TreeKey(source, log), EncodeTree(tree)}}));
  }
  out.first_seq = state.first_seq;
  out.last_seq = state.last_seq;
  out.records = state.records;
  out.head = state.head;
  out.tree_head = tree.Root();
  out.mark_every = state.mark_every;
  return out;
}

Status ScanInputEntries(store::Ledger& ledger, uint64_t from, const AddFn& add) {
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanStoredInputs(from, [&](const store::StoredInput& in) {
    st::TrailEntry e;
    RawKind kind = RawKind::kNone;
    Hash digest{};
    if (in.has_raw) {
      digest = Of(model::Sha256::Hash(in.raw));
      e.raw_digest = digest;
      kind = RawKind::kDigest;
    } else if (in.raw_pruned) {
      kind = RawKind::kPrunedUnknown;
    }
    e.leaf = InputLeaf(in.seq, in.recorded_at, in.record, kind, digest);
    status = add(in.seq, e);
    return status.ok();
  }));
  return status;
}

Status ScanDecisionEntries(store::Ledger& ledger, uint64_t from, const AddFn& add) {
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanDecisionBytes(from, [&](uint64_t seq, std::string_view bytes) {
    st::TrailEntry e;
    e.leaf = DecisionLeaf(seq, bytes);
    status = add(seq, e);
    return status.ok();
  }));
  return status;
}

model::Json ChainJson(const ChainHead& c) {
  model::Json marks = model::Json::array();
  for (const st::TrailMark& m : c.marks) marks.push_back({{"seq", m.seq}, {"head", Hex(m.head)}});
  model::Json j = {{"source", c.source},        {"log", c.log},
                   {"firstSeq", c.first_seq},   {"lastSeq", c.last_seq},
                   {"records", c.records},      {"head", Hex(c.head)},
                   {"markEvery", c.mark_every}, {"marks", std::move(marks)}};
  if (c.tree_head) j["treeHead"] = Hex(*c.tree_head);
  if (c.copy_of) j["copyOf"] = *c.copy_of;
  return j;
}

Result<Hash> HashField(const model::Json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_string()) {
    return Status::InvalidArgument(std::string("want \"") + name + "\" as 64 hex digits");
  }
  return ParseHex(j[name].get<std::string>());
}

Result<uint64_t> U64Field(const model::Json& j, const char* name) {
  if (!j.contains(name) || !j[name].is_number_unsigned()) {
    return Status::InvalidArgument(std::string("want \"") + name + "\" as a whole number");
  }
  return j[name].get<uint64_t>();
}

Result<ChainHead> ParseChain(const model::Json& j) {
  if (!j.is_object() || !model::MemberOr(j, "source").is_string() ||
      !model::MemberOr(j, "log").is_string()) {
    return Status::InvalidArgument("want an object with \"source\" and \"log\"");
  }
  ChainHead c;
  if (j.contains("copyOf")) {
    if (!j["copyOf"].is_string()) return Status::InvalidArgument("want \"copyOf\" as a source id");
    c.copy_of = j["copyOf"].get<std::string>();
  }
  c.source = j["source"].get<std::string>();
  c.log = j["log"].get<std::string>();
  if (c.log != st::kInputsLog && c.log != st::kDecisionsLog) {
    return Status::InvalidArgument("unknown log \"" + c.log + "\"");
  }
  CL_ASSIGN_OR_RETURN(c.first_seq, U64Field(j, "firstSeq"));
  CL_ASSIGN_OR_RETURN(c.last_seq, U64Field(j, "lastSeq"));
  CL_ASSIGN_OR_RETURN(c.records, U64Field(j, "records"));
  CL_ASSIGN_OR_RETURN(c.head, HashField(j, "head"));
  if (j.contains("treeHead")) {
    CL_ASSIGN_OR_RETURN(c.tree_head, HashField(j, "treeHead"));
  }
  CL_ASSIGN_OR_RETURN(c.mark_every, U64Field(j, "markEvery"));
  if (c.mark_every == 0) return Status::InvalidArgument("\"markEvery\" must be positive");
  const model::Json marks = model::MemberOr(j, "marks", model::Json::array());
  if (!marks.is_array() || marks.size() != c.records / c.mark_every) {
    return Status::InvalidArgument("want records/markEvery \"marks\"");
  }
  for (const model::Json& m : marks) {
    if (!m.is_object()) return Status::InvalidArgument("want marks as {seq, head}");
    st::TrailMark mark;
    CL_ASSIGN_OR_RETURN(mark.seq, U64Field(m, "seq"));
    CL_ASSIGN_OR_RETURN(mark.head, HashField(m, "head"));
    c.marks.push_back(mark);
  }
  return c;
}

}  // namespace

Result<Checkpoint> ParseCheckpointJson(std::string_view text);

Hash Genesis(std::string_view source, std::string_view log) {
  std::string m(1, static_cast<char>(kGenesisPrefix));
  m.append(kTrailFormat).push_back('\0');
  m.append(source).push_back('\0');
  m.append(log);
  return Of(model::Sha256::Hash(m));
}

Hash InputLeaf(uint64_t seq, Time recorded_at, std::string_view record, RawKind raw_kind,
               const Hash& raw_digest) {
  std::string m = LeafHeader("input", seq);
  PutBe64(&m, static_cast<uint64_t>(recorded_at.UnixNanosSaturated()));
  PutBe64(&m, record.size());
  m.append(record);
  m.push_back(static_cast<char>(raw_kind));
  if (raw_kind == RawKind::kDigest) m.append(View(raw_digest));
  return Of(model::Sha256::HashPadding(&m));
}

Hash DecisionLeaf(uint64_t seq, std::string_view record) {
  std::string m = LeafHeader("decision", seq);
  PutBe64(&m, record.size());
  m.append(record);
  return Of(model::Sha256::HashPadding(&m));
}

Hash Chain(const Hash& head, const Hash& leaf) {
  std::string m(1, static_cast<char>(kNodePrefix));
  m.append(View(head)).append(View(leaf));
  return Of(model::Sha256::HashPadding(&m));
}

std::string Hex(const Hash& h) {
  model::Sha256::Digest d;
  std::memcpy(d.data(), h.data(), d.size());
  return model::Sha256::Hex(d);
}

Result<Hash> ParseHex(std::string_view hex) {
  Hash h;
  if (hex.size() != 2 * h.size()) return Status::InvalidArgument("want 64 hex digits");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < h.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return Status::InvalidArgument("want 64 lower-case hex digits");
    h[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return h;
}

Result<Checkpoint> UpdateTrail(store::Ledger& ledger, const UpdateOptions& options, Time now) {
  Checkpoint c;
  c.taken_at = now;
  CL_ASSIGN_OR_RETURN(ChainHead inputs, UpdateChain(ledger, st::kInputsLog, options,
                                                    [&](uint64_t from, const AddFn& add) {
                                                      return ScanInputEntries(ledger, from, add);
                                                    }));
  CL_ASSIGN_OR_RETURN(
      ChainHead decisions,
      UpdateChain(ledger, st::kDecisionsLog, options, [&](uint64_t from, const AddFn& add) {
        return ScanDecisionEntries(ledger, from, add);
      }));
  c.chains.push_back(std::move(inputs));
  c.chains.push_back(std::move(decisions));
  return c;
}

Result<bool> HasTrail(store::Ledger& ledger) {
  auto s = ledger.GetTrail(st::StateKey(st::kLocalSource, st::kInputsLog));
  if (s.ok()) return true;
  if (s.status().IsNotFound()) return false;
  return s.status();
}

model::Json CheckpointJson(const Checkpoint& c) {
  model::Json items = model::Json::array();
  for (const ChainHead& h : c.chains) items.push_back(ChainJson(h));
  return {{"format", kTrailFormat},
          {"takenAt", FormatRfc3339Nano(c.taken_at)},
          {"items", std::move(items)}};
}

Result<Checkpoint> ParseCheckpoint(std::string_view text) {
  // nlohmann's typed accessors throw on a member of another type: turned into a Status here.
  try {
    return ParseCheckpointJson(text);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("checkpoint: ") + e.what());
  }
}

Result<Checkpoint> ParseCheckpointJson(std::string_view text) {
  auto j = model::ParseJson(text);
  if (!j.ok()) return Status::InvalidArgument("checkpoint: " + j.status().message());
  if (!j->is_object() || j->value("format", "") != kTrailFormat) {
    return Status::InvalidArgument(std::string("checkpoint: want \"format\": \"") +
                                   std::string(kTrailFormat) + "\"");
  }
  Checkpoint c;
  auto taken = ParseRfc3339(j->value("takenAt", ""));
  if (!taken.ok())
    return Status::InvalidArgument("checkpoint: \"takenAt\": " + taken.status().message());
  c.taken_at = *taken;
  const model::Json items = j->value("items", model::Json());
  if (!items.is_array() || items.empty()) {
    return Status::InvalidArgument("checkpoint: want \"items\" with one head per source and log");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    auto chain = ParseChain(items[i]);
    if (!chain.ok()) {
      return Status::InvalidArgument("checkpoint: items[" + std::to_string(i) +
                                     "]: " + chain.status().message());
    }
    c.chains.push_back(std::move(*chain));
  }
  return c;
}

}  // namespace cronledger::replay::trail
