#include "reconciler/schedule_memo.h"

namespace cronledger::reconciler {

Result<std::shared_ptr<const Schedule>> ScheduleMemo::Get(std::string_view text,
                                                          const model::TimeZoneDb& tzdb) {
  const std::pair<const model::TimeZoneDb*, std::string_view> probe(&tzdb, text);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = parsed_.find(probe);
    if (it != parsed_.end()) return it->second;
    ++misses_;
  }
  // Parsed outside the lock: ParseStandard is pure, so two threads parsing the same text get
  // equal schedules and either may be kept.
  CL_ASSIGN_OR_RETURN(std::unique_ptr<Schedule> parsed, ParseStandard(text, tzdb));
  std::shared_ptr<const Schedule> shared(std::move(parsed));
  std::lock_guard<std::mutex> lock(mu_);
  if (parsed_.size() >= capacity_) parsed_.clear();
  parsed_.emplace(Key(&tzdb, std::string(text)), shared);
  return shared;
}

size_t ScheduleMemo::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return parsed_.size();
}

size_t ScheduleMemo::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace cronledger::reconciler
