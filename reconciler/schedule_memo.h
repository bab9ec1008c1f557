#pragma once

// A memo of parsed schedules: ParseStandard(text, tzdb) is a pure function of the text and the
// tz database, and a parsed Schedule is immutable and thread-safe, so a caller that decides many
// passes of the same CronJobs (replay) can parse each schedule once. Only successful parses are
// kept (errors are parsed again, so their messages and events are exactly ParseStandard's).
//
// Keyed by the text and the database instance. The memo never outlives its use of a database:
// every TimeZoneDb handed to Get must outlive the memo (its owner holds both), so a key's
// database address cannot be reused by another database while the memo exists. Thread-safe;
// bounded (when it holds `capacity` schedules it starts over). The schedules it hands out keep
// their Next answers per thread (the same answers: a cache by schedule and second).

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "model/result.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {

class ScheduleMemo {
 public:
  explicit ScheduleMemo(size_t capacity = 4096) : capacity_(capacity == 0 ? 1 : capacity) {}
  ScheduleMemo(const ScheduleMemo&) = delete;
  ScheduleMemo& operator=(const ScheduleMemo&) = delete;

  // ParseStandard(text, tzdb), the parsed schedule shared with earlier calls with the same text
  // and database.
  Result<std::shared_ptr<const Schedule>> Get(std::string_view text, const model::TimeZoneDb& tzdb);

  size_t size() const;
  // Parses done (calls that did not find their schedule in the memo).
  size_t misses() const;

 private:
  using Key = std::pair<const model::TimeZoneDb*, std::string>;
  struct Less {
    using is_transparent = void;
    bool operator()(const Key& a, const Key& b) const { return a < b; }
    bool operator()(const Key& a,
                    const std::pair<const model::TimeZoneDb*, std::string_view>& b) const {
      return a.first < b.first || (a.first == b.first && std::string_view(a.second) < b.second);
    }
    bool operator()(const std::pair<const model::TimeZoneDb*, std::string_view>& a,
                    const Key& b) const {
      return a.first < b.first || (a.first == b.first && a.second < std::string_view(b.second));
    }
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<const Schedule>, Less> parsed_;
  size_t misses_ = 0;
};

}  // namespace cronledger::reconciler
