#include "reconciler/schedule_memo.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

namespace cronledger::reconciler {
namespace {

std::atomic<uint64_t> next_schedule_id{1};  // 0 marks an empty cache entry

// A memoized schedule keeps Next's answers per thread, direct-mapped by (schedule, second): the
// CronJobs sharing a schedule (one memo entry per distinct text) ask the same instants in every
// pass (their last fire time, the tick's now). An answer depends only on the schedule and the
// second (SpecSchedule and ConstantDelaySchedule read t.unix_seconds()). The id is never reused,
// so a schedule allocated where a freed one lived cannot see its answers.
class AnswerCachingSchedule final : public Schedule {
 public:
  explicit AnswerCachingSchedule(std::unique_ptr<Schedule> schedule)
      : schedule_(std::move(schedule)), id_(next_schedule_id.fetch_add(1)) {}

  std::optional<Time> Next(Time t) const override {
    const int64_t from = t.unix_seconds();
    Entry& e = Slot(from);
    if (e.id != id_ || e.from != from) {
      const std::optional<Time> next = schedule_->Next(t);
      e = Entry{id_, from, next.has_value(), next ? next->unix_seconds() : 0};
    }
    if (!e.found) return std::nullopt;
    return Time::FromUnix(e.next);
  }
  const model::TimeZone& zone() const override { return schedule_->zone(); }

 private:
  struct Entry {
    uint64_t id = 0;
    int64_t from = 0;
    bool found = false;
    int64_t next = 0;
  };
  static constexpr size_t kEntries = 512;
  Entry& Slot(int64_t from) const {
    thread_local std::array<Entry, kEntries> cache;
    uint64_t h = (id_ * 0x9E3779B97F4A7C15ull) ^ static_cast<uint64_t>(from);
    h *= 0xBF58476D1CE4E5B9ull;
    return cache[(h >> 32) % kEntries];
  }

  const std::unique_ptr<Schedule> schedule_;
  const uint64_t id_;
};

}  // namespace

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
  std::shared_ptr<const Schedule> shared =
      std::make_shared<const AnswerCachingSchedule>(std::move(parsed));
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
