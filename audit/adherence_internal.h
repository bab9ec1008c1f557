#pragma once

// Shared between audit/adherence.cc (one CronJob's slots) and audit/adherence_report.cc (the
// report: which CronJobs, Job outcomes, totals). Not part of the public surface.

#include <optional>
#include <string>

#include "audit/adherence.h"
#include "model/objects.h"

namespace cronledger::audit {

struct CronJobInput {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::optional<model::CronJob> cron_job;  // from the view; nullopt when deleted or undecodable
  std::optional<Time> created;             // metadata.creationTimestamp
  std::string error;                       // the view holds it, but its bytes do not decode
};

// Every slot of one CronJob in the window (outcomes not yet filled, totals counted).
Result<CronJobAdherence> CronJobSlots(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                      const CronJobInput& in, const AdherenceOptions& options,
                                      std::optional<Time> horizon);

void FillFromRecord(const model::Decision& rec, Slot* slot);

// Counts one slot into the row's expected/created/skipped/pending/unaccounted/unexpected.
void Classify(const Slot& slot, CronJobAdherence* a);

}  // namespace cronledger::audit
