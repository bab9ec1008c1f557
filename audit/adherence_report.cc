// The adherence report: which CronJobs, Job outcomes from the recorded Job watch events, skew
// statistics and totals (audit/adherence.h).
#include <algorithm>
#include <map>

#include "audit/adherence.h"
#include "audit/adherence_internal.h"
#include "audit/view_cronjobs.h"
#include "model/objects.h"

namespace cronledger::audit {
namespace {

std::string JobKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// Fills the outcome of every created slot from the last recorded watch event of its Job that
// says anything: finished (Complete/Failed), or at least seen ("running"). Job watch events come
// after the pass that decided the create, so the input log is read once, from the earliest such
// pass (its Tick's input seq), not from the beginning.
Status FillOutcomes(store::Ledger& ledger, std::vector<CronJobAdherence>* items) {
  std::map<std::string, Slot*> wanted;
  uint64_t from_seq = UINT64_MAX;
  for (CronJobAdherence& a : *items) {
    for (Slot& s : a.slots) {
      if (s.status != "created" || s.job.empty()) continue;
      wanted[JobKey(a.namespace_, s.job)] = &s;
      from_seq = std::min(from_seq, s.tick_seq);
    }
  }
  if (wanted.empty()) return Status::Ok();
  Status decode_error;
  Status s = ledger.ScanInputs(from_seq, true, [&](const store::LogRecord& rec) {
    const auto* ev = std::get_if<model::WatchEvent>(&rec.input);
    if (ev == nullptr || ev->kind != model::ObjectKind::kJob) return true;
    auto it = wanted.find(JobKey(ev->namespace_, ev->name));
    if (it == wanted.end() || ev->raw.empty()) return true;
    // A Job's raw bytes were validated at ingest; one that no longer decodes leaves the
    // outcome as it was (the slot keeps "unknown" or its earlier state).
    Result<model::Json> json = model::ParseJson(ev->raw);
    if (!json.ok()) return true;
    Result<model::Job> job = model::DecodeJob(*json);
    if (!job.ok()) return true;
    std::optional<std::string> done = model::FinishedCondition(*job);
    Slot& slot = *it->second;
    if (done) {
      slot.outcome = *done == "Complete" ? "succeeded" : "failed";
    } else if (slot.outcome == "unknown") {
      slot.outcome = "running";
    }
    return true;
  });
  return s;
}

void Summarize(CronJobAdherence* a) {
  Duration total{0};
  uint64_t n = 0;
  for (const Slot& s : a->slots) {
    if (s.skew) {
      total += *s.skew;
      ++n;
      if (!a->max_skew || *s.skew > *a->max_skew) a->max_skew = *s.skew;
    }
    if (s.status != "created" || !s.expected) continue;
    if (s.outcome == "succeeded") ++a->succeeded;
    if (s.outcome == "failed") ++a->failed;
    if (s.outcome == "running") ++a->running;
    if (s.outcome == "unknown") ++a->outcome_unknown;
  }
  if (n > 0) a->mean_skew = Duration(total.count() / static_cast<int64_t>(n));
}

void AddTo(const CronJobAdherence& a, CronJobAdherence* t) {
  t->expected += a.expected;
  t->created += a.created;
  t->skipped += a.skipped;
  t->pending += a.pending;
  t->pending_held += a.pending_held;
  t->unaccounted += a.unaccounted;
  t->unexpected += a.unexpected;
  for (const auto& [reason, n] : a.skipped_by_reason) t->skipped_by_reason[reason] += n;
  t->succeeded += a.succeeded;
  t->failed += a.failed;
  t->running += a.running;
  t->outcome_unknown += a.outcome_unknown;
  if (a.max_skew && (!t->max_skew || *a.max_skew > *t->max_skew)) t->max_skew = a.max_skew;
}

// Counts the window's divergences into their CronJob's row (and keeps the records with_slots) and
// into the totals. One read of the input log for the whole report.
Status AddDivergences(store::Ledger& ledger, const AdherenceOptions& options,
                      AdherenceReport* report) {
  std::map<std::string, CronJobAdherence*> rows;
  for (CronJobAdherence& a : report->items) {
    for (const std::string& kind : DivergenceKinds()) a.divergences_by_kind[kind] = 0;
    rows[JobKey(a.namespace_, a.name)] = &a;
  }
  for (const std::string& kind : DivergenceKinds()) report->totals.divergences_by_kind[kind] = 0;
  DivergenceQuery q;
  q.namespace_ = options.namespace_;
  q.cron_job = options.name;
  q.since = options.since;
  q.until = options.until;
  CL_ASSIGN_OR_RETURN(std::vector<Divergence> found, ListDivergences(ledger, q));
  for (Divergence& d : found) {
    ++report->totals.divergences_by_kind[d.kind];
    auto it = rows.find(JobKey(d.namespace_, d.cron_job));
    if (it == rows.end()) continue;
    ++it->second->divergences_by_kind[d.kind];
    if (options.with_slots) it->second->divergences.push_back(std::move(d));
  }
  return Status::Ok();
}

CronJobInput InputOf(ViewCronJob v) {
  CronJobInput in{
      std::move(v.namespace_), std::move(v.name), std::move(v.uid), std::nullopt, std::nullopt,
      std::move(v.error)};
  if (v.cron_job) in.created = v.cron_job->metadata.creation_timestamp;
  in.cron_job = std::move(v.cron_job);
  return in;
}

// A CronJob whose stored bytes do not decode is an input with its error, never a failed report.
Result<std::vector<CronJobInput>> SelectCronJobs(store::Ledger& ledger,
                                                 const AdherenceOptions& options) {
  std::vector<CronJobInput> out;
  if (!options.name.empty()) {
    Result<ViewCronJob> v = GetViewCronJob(ledger, options.namespace_, options.name);
    if (v.ok()) {
      out.push_back(InputOf(std::move(*v)));
    } else if (v.status().IsNotFound()) {
      out.push_back(
          CronJobInput{options.namespace_, options.name, "", std::nullopt, std::nullopt, ""});
    } else {
      return v.status();
    }
    return out;
  }
  CL_ASSIGN_OR_RETURN(std::vector<ViewCronJob> all, ListViewCronJobs(ledger));
  for (ViewCronJob& v : all) {
    if (!options.namespace_.empty() && v.namespace_ != options.namespace_) continue;
    out.push_back(InputOf(std::move(v)));
  }
  return out;
}

}  // namespace

Result<std::optional<Time>> LedgerHorizon(store::Ledger& ledger) {
  CL_ASSIGN_OR_RETURN(store::LedgerMeta meta, ledger.Meta());
  std::optional<Time> horizon;
  if (meta.last_decision_seq == 0) return horizon;
  Status s = ledger.ScanDecisions(meta.last_decision_seq, [&](const model::Decision& d) {
    horizon = d.time;
    return false;
  });
  if (!s.ok()) return s;
  return horizon;
}

Result<std::optional<Time>> LatestHorizon(const std::vector<SourceLedger>& sources) {
  std::optional<Time> latest;
  for (const SourceLedger& src : sources) {
    CL_ASSIGN_OR_RETURN(std::optional<Time> h, LedgerHorizon(*src.ledger));
    if (h && (!latest || *latest < *h)) latest = h;
  }
  return latest;
}

Result<AdherenceReport> ComputeAdherence(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                         const AdherenceOptions& options) {
  if (!(options.since < options.until)) {
    return Status::InvalidArgument("since must be before until");
  }
  AdherenceReport report;
  report.since = options.since;
  report.until = options.until;
  CL_ASSIGN_OR_RETURN(report.horizon, LedgerHorizon(ledger));
  CL_ASSIGN_OR_RETURN(std::vector<CronJobInput> inputs, SelectCronJobs(ledger, options));
  for (const CronJobInput& in : inputs) {
    CL_ASSIGN_OR_RETURN(CronJobAdherence a,
                        CronJobSlots(ledger, tzdb, in, options, report.horizon));
    report.items.push_back(std::move(a));
  }
  if (options.with_outcomes) {
    if (Status s = FillOutcomes(ledger, &report.items); !s.ok()) return s;
  }
  for (CronJobAdherence& a : report.items) {
    Summarize(&a);
    AddTo(a, &report.totals);
    if (!options.with_slots) a.slots.clear();
  }
  if (Status s = AddDivergences(ledger, options, &report); !s.ok()) return s;
  return report;
}

namespace {

bool IsTerminalSlot(const Slot& s) { return s.status == "created" || s.status == "skipped"; }

// Which of two candidates for one fire time a merged report counts: a record before none, a
// created before a skipped, then the earlier created (the pass that created the Job; a later
// record is the next owner's adoption after a handover), then the first source by name.
bool Counts(const Slot& a, const Slot& b) {
  const int ra = a.status == "created"   ? 0
                 : a.status == "skipped" ? 1
                 : a.status == "pending" ? 2
                                         : 3;
  const int rb = b.status == "created"   ? 0
                 : b.status == "skipped" ? 1
                 : b.status == "pending" ? 2
                                         : 3;
  if (ra != rb) return ra < rb;
  if (a.skew && b.skew && *a.skew != *b.skew) return *a.skew < *b.skew;
  return a.source < b.source;
}

// One CronJob's rows from several sources as one row: slots merged per fire time, counts redone.
CronJobAdherence MergeRows(std::vector<CronJobAdherence*>& rows) {
  CronJobAdherence m;
  m.namespace_ = rows.front()->namespace_;
  m.name = rows.front()->name;
  m.in_view = false;
  std::map<Time, std::vector<Slot>> by_time;
  for (CronJobAdherence* r : rows) {
    if (r->in_view && !m.in_view) {
      m.in_view = true;
      m.uid = r->uid;
    }
    if (m.uid.empty()) m.uid = r->uid;
    if (m.error.empty()) m.error = r->error;
    for (std::string& e : r->schedule_errors) {
      if (std::find(m.schedule_errors.begin(), m.schedule_errors.end(), e) ==
          m.schedule_errors.end()) {
        m.schedule_errors.push_back(std::move(e));
      }
    }
    for (const auto& [kind, n] : r->divergences_by_kind) m.divergences_by_kind[kind] += n;
    for (Divergence& d : r->divergences) m.divergences.push_back(std::move(d));
    for (Slot& s : r->slots) by_time[s.scheduled].push_back(std::move(s));
  }
  std::stable_sort(m.divergences.begin(), m.divergences.end(),
                   [](const Divergence& x, const Divergence& y) { return x.time < y.time; });
  for (auto& [t, candidates] : by_time) {
    std::sort(candidates.begin(), candidates.end(), Counts);
    Slot slot = std::move(candidates.front());
    for (size_t i = 1; i < candidates.size(); ++i) {
      slot.expected = slot.expected || candidates[i].expected;
      if (!IsTerminalSlot(slot) && candidates[i].held) slot.held = true;
      if (IsTerminalSlot(candidates[i])) slot.also_decided_by.push_back(std::move(candidates[i]));
    }
    m.slots.push_back(std::move(slot));
  }
  for (const Slot& s : m.slots) Classify(s, &m);
  Summarize(&m);
  return m;
}

}  // namespace

Result<AdherenceReport> ComputeMergedAdherence(const std::vector<SourceLedger>& sources,
                                               const model::TimeZoneDb& tzdb,
                                               const AdherenceOptions& options) {
  if (!(options.since < options.until)) {
    return Status::InvalidArgument("since must be before until");
  }
  AdherenceOptions per_source = options;
  per_source.with_slots = true;
  std::vector<AdherenceReport> reports;
  AdherenceReport merged;
  merged.since = options.since;
  merged.until = options.until;
  for (const std::string& kind : DivergenceKinds()) merged.totals.divergences_by_kind[kind] = 0;
  for (const SourceLedger& s : sources) {
    Result<AdherenceReport> r = ComputeAdherence(*s.ledger, tzdb, per_source);
    // A named CronJob that one source never saw is in another's.
    if (!r.ok() && r.status().IsNotFound() && !options.name.empty()) continue;
    if (!r.ok()) return r.status().WithContext("source " + s.source);
    for (CronJobAdherence& a : r->items) {
      for (Slot& slot : a.slots) slot.source = s.source;
    }
    if (r->horizon && (!merged.horizon || *merged.horizon < *r->horizon)) {
      merged.horizon = r->horizon;
    }
    for (const auto& [kind, n] : r->totals.divergences_by_kind) {
      merged.totals.divergences_by_kind[kind] += n;
    }
    reports.push_back(std::move(*r));
  }
  if (reports.empty() && !options.name.empty()) {
    return Status::NotFound("no CronJob " + options.namespace_ + "/" + options.name +
                            " in any source");
  }
  std::map<std::pair<std::string, std::string>, std::vector<CronJobAdherence*>> rows;
  for (AdherenceReport& r : reports) {
    for (CronJobAdherence& a : r.items) rows[{a.namespace_, a.name}].push_back(&a);
  }
  for (auto& [key, of_cronjob] : rows) {
    CronJobAdherence m = MergeRows(of_cronjob);
    AddTo(m, &merged.totals);
    if (!options.with_slots) {
      m.slots.clear();
      m.divergences.clear();
    }
    merged.items.push_back(std::move(m));
  }
  return merged;
}

}  // namespace cronledger::audit
