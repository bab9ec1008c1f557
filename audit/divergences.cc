// Shadow-mode divergences: their storage, the one reader and the one JSON (audit/divergences.h).
#include "audit/divergences.h"

#include <algorithm>
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

}  // namespace

Result<std::vector<Divergence>> ListDivergences(store::Ledger& ledger, const DivergenceQuery& q) {
  if (!q.kind.empty()) CL_RETURN_IF_ERROR(CheckDivergenceKind(q.kind));
  if (q.since && q.until && !(*q.since < *q.until)) {
    return Status::InvalidArgument("since must be before until");
  }
  std::vector<Divergence> out;
  CL_RETURN_IF_ERROR(ledger.ScanInputs(q.after_seq + 1, false, [&](const store::LogRecord& rec) {
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
