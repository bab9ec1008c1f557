#include "model/timezone.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "model/posix_tz.h"
#include "model/tzif.h"

namespace cronledger::model {
namespace {

// A zone with a single offset for all time (Go's UTC and FixedZone).
class FixedTimeZone final : public TimeZone {
 public:
  FixedTimeZone(std::string name, int offset) : name_(std::move(name)), offset_(offset) {}
  const std::string& name() const override { return name_; }
  Period Lookup(int64_t) const override { return {offset_, INT64_MIN, INT64_MAX, false}; }

 private:
  std::string name_;
  int offset_;
};

// A zone loaded from TZif data, answering lookups exactly as Go's Location.lookup does.
class TzifTimeZone final : public TimeZone {
 public:
  TzifTimeZone(std::string name, TzifData data) : name_(std::move(name)) {
    for (const TzifZone& z : data.zones) zones_.push_back({z.offset, z.is_dst});
    when_.reserve(data.transitions.size());
    index_.reserve(data.transitions.size());
    for (const TzifTransition& tx : data.transitions) {
      when_.push_back(tx.when);
      index_.push_back(tx.index);
    }
    first_zone_ = FirstZone();
    if (!data.extend.empty()) extend_ = PosixTz::Parse(data.extend);
  }

  const std::string& name() const override { return name_; }

  Period Lookup(int64_t sec) const override {
    if (sec < when_.front()) {
      const ZoneInfo& z = zones_[first_zone_];
      return {z.offset, INT64_MIN, when_.front(), z.is_dst};
    }
    // The last transition at or before sec; the next one (if any) ends the period.
    const auto hi = std::upper_bound(when_.begin(), when_.end(), sec);
    const size_t lo = static_cast<size_t>(hi - when_.begin()) - 1;
    const ZoneInfo& z = zones_[index_[lo]];
    if (lo + 1 < when_.size()) return {z.offset, when_[lo], when_[lo + 1], z.is_dst};
    if (extend_) return extend_->At(when_[lo], sec);
    return {z.offset, when_[lo], INT64_MAX, z.is_dst};
  }

 private:
  struct ZoneInfo {
    int offset;
    bool is_dst;
  };

  // Go's lookupFirstZone: the zone for instants before the first transition. If zone 0 is never
  // the target of a transition it is the initial zone; else the first standard-time zone before
  // the first transition's zone when that one is DST; else the first standard-time zone; else 0.
  size_t FirstZone() const {
    if (std::find(index_.begin(), index_.end(), 0) == index_.end()) return 0;
    if (!index_.empty() && zones_[index_[0]].is_dst) {
      for (int zi = static_cast<int>(index_[0]) - 1; zi >= 0; --zi) {
        if (!zones_[static_cast<size_t>(zi)].is_dst) return static_cast<size_t>(zi);
      }
    }
    for (size_t zi = 0; zi < zones_.size(); ++zi) {
      if (!zones_[zi].is_dst) return zi;
    }
    return 0;
  }

  std::string name_;
  std::vector<ZoneInfo> zones_;
  std::vector<int64_t> when_;
  std::vector<uint8_t> index_;
  size_t first_zone_ = 0;
  std::optional<PosixTz> extend_;
};

}  // namespace

int64_t TimeZone::UnixFromWall(int64_t wall) const {
  // Go's time.Date: look the reading up as if it were UTC, then, if the implied instant is outside
  // the period found, look up again at the implied instant. Offset 0 skips the check entirely.
  const Period p = Lookup(wall);
  if (p.offset == 0) return wall;
  const int64_t utc = wall - p.offset;
  if (utc < p.start || utc >= p.end) return wall - Lookup(utc).offset;
  return utc;
}

std::shared_ptr<const TimeZone> TimeZone::Utc() {
  static const auto* const kUtc =
      new std::shared_ptr<const TimeZone>(std::make_shared<FixedTimeZone>("UTC", 0));
  return *kUtc;
}

std::shared_ptr<const TimeZone> TimeZone::Fixed(std::string name, int offset_seconds) {
  return std::make_shared<FixedTimeZone>(std::move(name), offset_seconds);
}

Result<std::shared_ptr<const TimeZone>> TimeZone::FromTzif(std::string name,
                                                           std::string_view bytes) {
  CL_ASSIGN_OR_RETURN(TzifData data, ParseTzif(bytes));
  return std::shared_ptr<const TimeZone>(
      std::make_shared<TzifTimeZone>(std::move(name), std::move(data)));
}

}  // namespace cronledger::model
