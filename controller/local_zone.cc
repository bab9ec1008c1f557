#include "controller/local_zone.h"

#include <algorithm>
#include <cstdint>

namespace cronledger::controller {

bool SameZone(const model::TimeZone& a, const model::TimeZone& b) {
  constexpr int64_t kFrom = -2208988800;  // 1900-01-01T00:00:00Z
  constexpr int64_t kTo = 4102444800;     // 2100-01-01T00:00:00Z
  for (int64_t t = kFrom; t < kTo;) {
    const model::TimeZone::Period p = a.Lookup(t);
    const model::TimeZone::Period q = b.Lookup(t);
    if (p.offset != q.offset || p.is_dst != q.is_dst) return false;
    // Past the last transition Go's periods are approximate (a leap year's Dec 31 may lie after
    // the period reported for it): step an hour then, so the walk always advances.
    const int64_t next = std::min(p.end, q.end);
    t = next > t ? next : t + 3600;
  }
  return true;
}

Result<std::string> LocalZoneName(const model::TimeZoneDb& tzdb, const std::string& name) {
  const std::string zone = name.empty() ? "UTC" : name;
  if (zone == "Local") {
    return Status::InvalidArgument(
        "controller: local_time_zone must name the zone (an IANA name), not \"Local\"");
  }
  auto loaded = tzdb.Load(zone);
  if (!loaded.ok()) {
    return Status::InvalidArgument("controller: local_time_zone " + zone + ": " +
                                   loaded.status().message());
  }
  if (!SameZone(**loaded, *tzdb.Local())) {
    return Status::InvalidArgument("controller: local_time_zone " + zone +
                                   " is not the tz database's Local zone");
  }
  return zone;
}

}  // namespace cronledger::controller
