// Shadow-mode divergences: their storage, the one reader and the one JSON (audit/divergences.h).
#include "audit/divergences.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <variant>

namespace cronledger::audit {

const std::vector<std::string>& DivergenceKinds() {
  static const std::vector<std::string> kinds = {kMissedRun, kLateRun, kUnexpectedJob};
  return kinds;
}

Status CheckDivergenceKind(std::string_view kind) {
  const auto& kinds = DivergenceKinds();
  if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) return Status::Ok();
  return Status::InvalidArgument("unknown divergence kind \"" + std::string(kind) +
                                 "\" (MissedRun, LateRun or UnexpectedJob)");
}

model::ActionOutcome DivergenceRecord(Time time, const std::string& kind, const std::string& ns,
                                      const std::string& cron_job, const std::string& job,
                                      model::Json detail) {
  model::ActionOutcome o;
  o.time = time;
  o.decision_seq = 0;
  o.verb = kDivergenceVerb;
  o.kind = model::ObjectKind::kCronJob;
  o.namespace_ = ns;
  o.name = cron_job;
  o.result = kind;
  detail["job"] = job;
  o.payload = model::DumpJson(detail);
  return o;
}

namespace {

bool Matches(const model::ActionOutcome& o, const DivergenceQuery& q) {
  return (q.namespace_.empty() || o.namespace_ == q.namespace_) &&
         (q.cron_job.empty() || o.name == q.cron_job) && (q.kind.empty() || o.result == q.kind) &&
         (!q.since || !(o.time < *q.since)) && (!q.until || o.time < *q.until);
}

Divergence Decode(uint64_t seq, const model::ActionOutcome& o) {
  Divergence d{seq, o.time, o.result, o.namespace_, o.name, "", model::Json::object(), ""};
  Result<model::Json> detail = model::ParseJson(o.payload);
  if (!detail.ok()) {
    d.error = "detail does not decode: " + detail.status().message();
  } else if (!detail->is_object()) {
    d.error = "detail is not a JSON object";
  } else {
    d.detail = std::move(detail).value();
    if (auto it = d.detail.find("job"); it != d.detail.end() && it->is_string()) {
      d.job = it->get<std::string>();
    }
  }
  return d;
}

// The ledger stamps every input with its clock at commit (LogRecord::recorded_at), in seq order
// (retention relies on that order too), and a divergence is committed after the auditor read its
// time from the same clock, or later when an audit store merges or a store imports it. So the
// records of time T or later start at or after the first input stamped at or after T. The bound is
// moved back by this much for clock steps and for skew between the auditor's and the audit store's
// hosts.
constexpr Duration kRecordedAtSlack = std::chrono::hours(1);

// The first input seq stamped at or after `t` (a binary search of point reads); one past the last
// when there is none.
Result<uint64_t> FirstSeqRecordedAtOrAfter(store::Ledger& ledger, Time t) {
  CL_ASSIGN_OR_RETURN(store::LedgerMeta meta, ledger.Meta());
  uint64_t lo = 1, hi = meta.last_input_seq + 1;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    std::optional<store::LogRecord> at;  // the first record at or after mid (retention leaves gaps)
    CL_RETURN_IF_ERROR(ledger.ScanInputs(mid, false, [&](const store::LogRecord& rec) {
      at = rec;
      return false;
    }));
    if (!at || !(at->recorded_at < t)) {
      hi = mid;
    } else {
      lo = at->seq + 1;
    }
  }
  return lo;
}

}  // namespace

Result<std::vector<Divergence>> ListDivergences(store::Ledger& ledger, const DivergenceQuery& q) {
  if (!q.kind.empty()) CL_RETURN_IF_ERROR(CheckDivergenceKind(q.kind));
  if (q.since && q.until && !(*q.since < *q.until)) {
    return Status::InvalidArgument("since must be before until");
  }
  uint64_t from = q.after_seq + 1;
  if (q.since) {
    CL_ASSIGN_OR_RETURN(uint64_t first, FirstSeqRecordedAtOrAfter(
                                            ledger, q.since->Add(Duration(-kRecordedAtSlack))));
    from = std::max(from, first);
  }
  std::vector<Divergence> out;
  CL_RETURN_IF_ERROR(ledger.ScanInputs(from, false, [&](const store::LogRecord& rec) {
    const auto* o = std::get_if<model::ActionOutcome>(&rec.input);
    if (o == nullptr || o->verb != kDivergenceVerb || !Matches(*o, q)) return true;
    out.push_back(Decode(rec.seq, *o));
    return q.limit == 0 || out.size() < q.limit;
  }));
  return out;
}

model::Json DivergenceJson(const Divergence& d) {
  model::Json j = {{"seq", d.seq},          {"time", FormatRfc3339Nano(d.time)},
                   {"kind", d.kind},        {"namespace", d.namespace_},
                   {"cronJob", d.cron_job}, {"job", d.job},
                   {"detail", d.detail}};
  if (!d.error.empty()) j["error"] = d.error;
  return j;
}

}  // namespace cronledger::audit
