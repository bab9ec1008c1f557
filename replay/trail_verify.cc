// Verifying a store or a trail bundle against a checkpoint (replay/trail.h).
#include <map>

#include "model/sha256.h"
#include "replay/trail.h"
#include "replay/trail_internal.h"

namespace cronledger::replay::trail {
namespace {

namespace st = store::trail;

// Names a stored record for a report: "input 17 (Tick prod/backup)".
std::string DescribeInput(uint64_t seq, std::string_view record) {
  std::string out = "input " + std::to_string(seq);
  auto in = model::DecodeInput(record);
  if (!in.ok()) return out + " (undecodable)";
  if (const auto* ev = std::get_if<model::WatchEvent>(&*in)) {
    return out + " (WatchEvent " + (ev->kind == model::ObjectKind::kCronJob ? "CronJob " : "Job ") +
           ev->namespace_ + "/" + ev->name + ")";
  }
  if (const auto* t = std::get_if<model::Tick>(&*in)) {
    return out + " (Tick " + t->namespace_ + "/" + t->name + ")";
  }
  static constexpr std::string_view kNames[] = {"WatchEvent",   "Tick",         "ActionOutcome",
                                                "ConfigChange", "ActionIntent", "PassEnd"};
  return out + " (" + std::string(kNames[in->index()]) + ")";
}

std::string DescribeDecision(uint64_t seq, std::string_view record) {
  std::string out = "decision " + std::to_string(seq);
  auto d = model::DecodeDecisionRecord(record);
  if (!d.ok()) return out + " (undecodable)";
  return out + " (" + std::string(model::DecisionActionName(d->action)) + " " +
         d->cron_job.namespace_ + "/" + d->cron_job.name + ")";
}

// Feeds `checker` the records of one log merged with their stored entries.
class StoreFeed {
 public:
  StoreFeed(store::Ledger& ledger, std::string_view log, ChainChecker* checker)
      : entries_(ledger, log), checker_(checker) {}

  // Entries before `seq` have no record; the entry at `seq` pairs with the record.
  Result<std::optional<st::TrailEntry>> Advance(uint64_t seq) {
    while (true) {
      CL_ASSIGN_OR_RETURN(auto next, entries_.Peek());
      if (next == nullptr || next->first > seq) return std::optional<st::TrailEntry>();
      entries_.Take();
      if (next->first == seq) return std::optional<st::TrailEntry>(next->second);
      checker_->Add({next->first, std::nullopt, next->second, "", nullptr});
    }
  }
  Status Drain() { return Advance(UINT64_MAX).status(); }

 private:
  EntryCursor entries_;
  ChainChecker* checker_;
};

Result<ChainVerdict> VerifyInputs(store::Ledger& ledger, const ChainHead& c) {
  ChainChecker checker(c);
  StoreFeed feed(ledger, st::kInputsLog, &checker);
  Status status;
  std::map<uint64_t, std::string> names;
  CL_RETURN_IF_ERROR(ledger.ScanStoredInputs(1, [&](const store::StoredInput& in) {
    auto claimed = feed.Advance(in.seq);
    if (!claimed.ok()) {
      status = claimed.status();
      return false;
    }
    RawKind kind = RawKind::kNone;
    Hash digest{};
    if (in.has_raw) {
      const auto d = model::Sha256::Hash(in.raw);
      std::copy(d.begin(), d.end(), digest.begin());
      kind = RawKind::kDigest;
    } else if (in.raw_pruned) {
      kind = RawKind::kPrunedUnknown;
      if (*claimed && (*claimed)->raw_digest) {
        kind = RawKind::kDigest;
        digest = *(*claimed)->raw_digest;
      }
    }
    checker.Add(
        {in.seq, InputLeaf(in.seq, in.recorded_at, in.record, kind, digest), *claimed, "",
         [&](uint64_t at) { return InputLeaf(at, in.recorded_at, in.record, kind, digest); }});
    if (checker.WantsName(in.seq)) names[in.seq] = DescribeInput(in.seq, in.record);
    return true;
  }));
  CL_RETURN_IF_ERROR(status);
  CL_RETURN_IF_ERROR(feed.Drain());
  return checker.Finish(names);
}

Result<ChainVerdict> VerifyDecisions(store::Ledger& ledger, const ChainHead& c) {
  ChainChecker checker(c);
  StoreFeed feed(ledger, st::kDecisionsLog, &checker);
  Status status;
  std::map<uint64_t, std::string> names;
  CL_RETURN_IF_ERROR(ledger.ScanDecisionBytes(1, [&](uint64_t seq, std::string_view bytes) {
    auto claimed = feed.Advance(seq);
    if (!claimed.ok()) {
      status = claimed.status();
      return false;
    }
    checker.Add({seq, DecisionLeaf(seq, bytes), *claimed, "",
                 [&](uint64_t at) { return DecisionLeaf(at, bytes); }});
    if (checker.WantsName(seq)) names[seq] = DescribeDecision(seq, bytes);
    return true;
  }));
  CL_RETURN_IF_ERROR(status);
  CL_RETURN_IF_ERROR(feed.Drain());
  return checker.Finish(names);
}

}  // namespace

EntryCursor::EntryCursor(store::Ledger& ledger, std::string_view log)
    : ledger_(ledger), log_(log), prefix_(st::EntryPrefix(st::kLocalSource, log)) {}

Result<const std::pair<uint64_t, st::TrailEntry>*> EntryCursor::Peek() {
  if (pos_ == page_.size() && !done_) CL_RETURN_IF_ERROR(Fill());
  return pos_ < page_.size() ? &page_[pos_] : nullptr;
}

Status EntryCursor::Fill() {
  page_.clear();
  pos_ = 0;
  Status status;
  CL_RETURN_IF_ERROR(ledger_.ScanTrail(prefix_, from_, [&](std::string_view k, std::string_view v) {
    uint64_t seq = 0;
    if (!st::SeqOfKey(k, prefix_, &seq)) {
      status = Status::Corruption("audit trail: malformed entry key");
      return false;
    }
    auto e = st::DecodeEntry(v);
    if (!e.ok()) {
      status = e.status().WithContext("audit trail entry " + std::to_string(seq));
      return false;
    }
    page_.emplace_back(seq, *e);
    return page_.size() < kPage;
  }));
  CL_RETURN_IF_ERROR(status);
  if (page_.size() < kPage) {
    done_ = true;
  } else {
    from_ = st::EntryKey(st::kLocalSource, log_, page_.back().first + 1);
  }
  return Status::Ok();
}

std::string RecordName(std::string_view log, uint64_t seq, std::string_view record) {
  return log == st::kInputsLog ? DescribeInput(seq, record) : DescribeDecision(seq, record);
}

Result<TrailVerdict> VerifyStore(store::Ledger& ledger, const Checkpoint& checkpoint) {
  CL_RETURN_IF_ERROR(RejectMergedCheckpoint(checkpoint));
  TrailVerdict out;
  for (const ChainHead& c : checkpoint.chains) {
    if (c.source != st::kLocalSource) {
      return Status::NotFound("the store holds no records of source \"" + c.source + "\"");
    }
    CL_ASSIGN_OR_RETURN(ChainVerdict v, c.log == st::kInputsLog ? VerifyInputs(ledger, c)
                                                                : VerifyDecisions(ledger, c));
    out.chains.push_back(std::move(v));
  }
  return out;
}

}  // namespace cronledger::replay::trail
