#pragma once

// Audit queries over the decision log (docs/audit.md "Queries"). Every query is served from the
// store's audit indexes (docs/ledger.md): no filter combination scans the whole decision log.
//
//   --cronjob NS/NAME  -> the CronJob index (`c` ns name time seq); action/reason/namespace
//                         filtered in memory.
//   --action / --reason -> the action/reason index (`a`/`r` + time seq); namespace filtered in
//                         memory.
//   -n NS alone         -> the `c` ranges over [since, until) of every CronJob of the namespace
//                         that has decisions (Ledger::DecisionCronJobNames, deleted ones too),
//                         merged by (time, seq): only the namespace's records are read.
//   no filter           -> the time index (`t` time seq) over [since, until).
//
// The CronJob index entries hold the whole decision, its Job object as a reference to a Job
// template of the CronJob (store/cronjob_index.h): a CronJob or namespace query with `summary`
// reads nothing else; whole records also read the CronJob's Job
// templates (one read per spec version) and nothing from the decision log (store/cronjob_index.h).
//
// Results are ordered by (time, seq), oldest first. Pages are resumed with an opaque continue
// token naming the last (time, seq) returned, so pages are stable while new decisions arrive.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::audit {

struct DecisionQuery {
  std::string cron_job_namespace;  // with cron_job_name: one CronJob
  std::string cron_job_name;
  std::string namespace_;     // every CronJob of a namespace (ignored when cron_job_name is set)
  std::optional<Time> since;  // decision time >= since; unset = the beginning
  std::optional<Time> until;  // decision time < until; unset = no end
  std::optional<model::DecisionAction> action;
  std::string reason;
  // Page size; 0 = everything. Default: 0.
  size_t limit = 0;
  std::string continue_token;  // from DecisionPage::continue_token; empty = first page
  // Items without their Json members (job_object and status null): what a table/csv row or a
  // count needs. A CronJob or namespace query then reads the CronJob index entries alone, one
  // sequential range read per CronJob and no read of the decision log (docs/audit.md "Queries").
  // Default: false (whole records, as -o json/yaml and the API print them).
  bool summary = false;
};

// Which index a query is served from ("cronjob", "action", "reason", "action+reason",
// "namespace" (the merged CronJob ranges of -n alone), "time").
std::string IndexFor(const DecisionQuery& q);

struct DecisionPage {
  std::vector<model::Decision> items;
  // Non-empty when more items may follow: pass it back as DecisionQuery::continue_token.
  std::string continue_token;
  std::string index;  // IndexFor(query)
};

// InvalidArgument for a malformed continue token or since >= until; the ledger's errors otherwise.
Result<DecisionPage> QueryDecisions(store::Ledger& ledger, const DecisionQuery& q);

// Counts of the decisions matching q (limit, continue token and summary ignored), by action and
// reason ("" for no reason), from the same index scan (of summaries).
struct DecisionCount {
  std::string action;
  std::string reason;
  uint64_t count = 0;
};
Result<std::vector<DecisionCount>> CountDecisions(store::Ledger& ledger, DecisionQuery q);

// The same queries over several sources' ledgers (the copies an audit store keeps, one per
// replica): every source's matches, ordered by (time, source, seq), each labelled with its source.
// A record two sources both hold (a fire time decided on both sides of a handover) is listed once
// per source: a listing shows records, reports count fire times (audit/adherence_report.h). The
// continue token names the last (time, source, seq) returned.
// One source's ledger: a replica's copy in an audit store, by its source id.
struct SourceLedger {
  std::string source;
  store::Ledger* ledger = nullptr;
};
struct MergedDecisionPage {
  std::vector<model::Decision> items;
  std::vector<std::string> sources;  // sources[i] holds items[i]
  std::string continue_token;
  std::string index;
};
Result<MergedDecisionPage> QueryMergedDecisions(const std::vector<SourceLedger>& sources,
                                                const DecisionQuery& q);
// Counts over every source, records of each source counted.
Result<std::vector<DecisionCount>> CountMergedDecisions(const std::vector<SourceLedger>& sources,
                                                        const DecisionQuery& q);

// "NS/NAME" -> {ns, name}; InvalidArgument otherwise.
Result<std::pair<std::string, std::string>> ParseCronJobKey(std::string_view key);

// Continue tokens: "<unix nanos>.<seq>" in hex, opaque to callers.
std::string EncodeContinueToken(Time time, uint64_t seq);
Result<std::pair<Time, uint64_t>> DecodeContinueToken(std::string_view token);
// Over several sources: "<time>-<seq>-<source as hex>", the last (time, seq, source) returned.
struct MergedKey {
  Time time;
  uint64_t seq = 0;
  std::string source;
};
std::string EncodeMergedToken(Time time, uint64_t seq, const std::string& source);
Result<MergedKey> DecodeMergedToken(std::string_view token);

}  // namespace cronledger::audit
