#pragma once

// Reads over the sources of an audit store (`cronledger audit-store`: one copy of each replica's
// ledger) whose single-ledger forms live elsewhere: divergences, a CronJob's owner, `why`. The
// decision queries and reports have their merged forms beside their single ones
// (audit/query.h, audit/adherence.h). Used by the commands and by the HTTP API, so both answer
// alike.

#include <optional>
#include <string>
#include <vector>

#include "audit/divergences.h"
#include "audit/query.h"
#include "model/result.h"
#include "model/time.h"
#include "replay/explain.h"
#include "store/ledger.h"

namespace cronledger::audit {

// A divergence and the source whose ledger holds it.
struct SourcedDivergence {
  Divergence divergence;
  std::string source;
};

// Every source's divergences matching q, ordered by (time, source, seq); q.limit applies to the
// merged list. Errors: ListDivergences's, for the first source that fails.
Result<std::vector<SourcedDivergence>> ListMergedDivergences(
    const std::vector<SourceLedger>& sources, const DivergenceQuery& q);

// When the ledger last decided the CronJob at or before `at` (any action), if it ever did: looked
// for in windows that widen back from `at`, so a CronJob decided every minute reads about an hour
// of index entries.
Result<std::optional<Time>> LastDecisionAtOrBefore(store::Ledger& ledger, const std::string& ns,
                                                   const std::string& name, Time at);

// The index in `sources` of the source that decided the CronJob last at or before `at` (its
// owner then), and that time; nullopt when no source decided it.
struct CronJobOwner {
  size_t index = 0;
  Time decided;
};
Result<std::optional<CronJobOwner>> OwnerAt(const std::vector<SourceLedger>& sources,
                                            const std::string& ns, const std::string& name,
                                            Time at);

// `why` asked of every source's ledger. The answer is the one with a record (the latest fire time
// first, for `at`); when several sources record the fire time, the one decided first (the pass
// that created the Job: after a handover the next owner's record of the same time is its adoption
// of that Job, made later), then the first by name. It starts with "From the ledger of source
// S.", adds a sentence for each other source that recorded the same fire time, and its facts
// carry `source` and `otherSources` ([{source, verdict, scheduledTime, reason}], every other
// source's answer). Errors: Explain's, with the source named.
Result<replay::Why> ExplainAcrossSources(const std::vector<SourceLedger>& sources,
                                         const replay::WhyQuery& query);

}  // namespace cronledger::audit
