#include "bench/controller/measuring_ledger.h"

#include <utility>
#include <vector>

namespace cronledger::bench {

MeasuringLedger::MeasuringLedger(std::unique_ptr<store::Ledger> inner, const WallClock& wall)
    : ForwardingLedger(*inner), inner_(std::move(inner)), wall_(wall) {}

void MeasuringLedger::SetWindow(Time from, Time until) {
  from_nanos_.store(from.UnixNanosSaturated());
  until_nanos_.store(until.UnixNanosSaturated());
}

Result<store::CommitResult> MeasuringLedger::Commit(store::UnitOfWork unit) {
  const int64_t from = from_nanos_.load();
  const int64_t until = until_nanos_.load();
  std::vector<int64_t> scheduled;
  const uint64_t decisions = unit.decisions.size();
  for (const model::Decision& d : unit.decisions) {
    if (d.action != model::DecisionAction::kCreateJob || !d.scheduled_time) continue;
    const int64_t s = d.scheduled_time->UnixNanosSaturated();
    if (s >= from && s < until) scheduled.push_back(s);
  }
  auto result = inner_->Commit(std::move(unit));
  if (!result.ok()) return result;
  decisions_.fetch_add(decisions);
  if (!scheduled.empty()) {
    const int64_t now = wall_.Now().UnixNanosSaturated();
    for (const int64_t s : scheduled) skew_.Add(now - s);
  }
  return result;
}

}  // namespace cronledger::bench
