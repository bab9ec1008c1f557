#pragma once

// Time zones with Go's semantics (time.Location / time.LoadLocation), because the upstream
// controller and robfig/cron do their calendar arithmetic in Go: which offset applies at an
// instant, and which instant a wall-clock reading denotes in a DST gap or fold, must be Go's
// answers exactly.
//
// A TimeZone is immutable data parsed from TZif bytes (the tz database as data). Loading files is
// the job of a TimeZoneDb; the reconciler only ever sees the interface. TimeZone objects are
// immutable and safe to share between threads.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "model/result.h"

namespace cronledger::model {

class TimeZone {
 public:
  virtual ~TimeZone() = default;

  // The zone's name as loaded ("UTC", "Europe/Rome", "Local").
  virtual const std::string& name() const = 0;

  // Go's Location.lookup: the UTC offset (seconds east) in effect at `unix_seconds`, and the
  // half-open period [start, end) of unix seconds Go reports for it. Like Go:
  //  - before the first transition the zone is chosen by Go's lookupFirstZone rule (the first
  //    standard-time zone, not necessarily the zone of the first transition);
  //  - after the last transition the POSIX TZ footer of the TZif file is evaluated for the UTC
  //    year of the instant, and its [start, end) are Go's (possibly approximate: the year end is
  //    taken as start of year + 365 days, so in leap years the period may not contain Dec 31).
  struct Period {
    int offset = 0;
    int64_t start = INT64_MIN;
    int64_t end = INT64_MAX;
    bool is_dst = false;
  };
  virtual Period Lookup(int64_t unix_seconds) const = 0;
  int OffsetAt(int64_t unix_seconds) const { return Lookup(unix_seconds).offset; }

  // Go's time.Date(...) in this zone, for a wall-clock reading given as seconds since
  // 1970-01-01T00:00:00 *local* (see WallSecondsFromCivil): returns the unix seconds Go picks.
  // Go looks the wall reading up as if it were UTC; when that offset is non-zero and the implied
  // instant falls outside the period found, it looks up again at the implied instant. So a reading
  // in a gap can land before the gap (New York's 02:30 on spring-forward day is 06:30Z = 01:30 EST;
  // Sao Paulo's missing midnight of 2018-11-04 is 23:00 the day before), and in a fold the earlier
  // instant is usually chosen, but not when the first lookup yields offset 0 (Europe/London's
  // 01:30 on fall-back day is 01:30 GMT, the later one).
  int64_t UnixFromWall(int64_t wall_seconds) const;

  static std::shared_ptr<const TimeZone> Utc();
  static std::shared_ptr<const TimeZone> Fixed(std::string name, int offset_seconds);
  // Parses a TZif file (versions 1-3, including the POSIX TZ footer used past the last
  // transition). Errors are Go's: Corruption("malformed time zone information").
  static Result<std::shared_ptr<const TimeZone>> FromTzif(std::string name, std::string_view bytes);
};

// Loads zones by IANA name, with Go's time.LoadLocation rules: "" and "UTC" are UTC, "Local" is the
// database's local zone, names containing ".." or starting with '/' or '\\' are rejected with
// "time: invalid location name", unknown names give "unknown time zone <name>", a name that is a
// directory gives "is a directory", a file that is not TZif gives "malformed time zone
// information". Implementations are thread-safe and cache loaded zones.
class TimeZoneDb {
 public:
  virtual ~TimeZoneDb() = default;
  virtual Result<std::shared_ptr<const TimeZone>> Load(std::string_view name) const = 0;
  // The zone Go calls Local: the controller process's zone. cronledger makes it explicit
  // configuration (default UTC) so that replay on another machine decides identically.
  virtual std::shared_ptr<const TimeZone> Local() const = 0;
};

struct SystemTimeZoneDbOptions {
  // Directory of compiled TZif files. Default: /usr/share/zoneinfo (Debian's tzdata).
  std::string zoneinfo_dir = "/usr/share/zoneinfo";
  // Name of the zone used as Go's Local. Default: "UTC".
  std::string local_zone = "UTC";
};

// The tz database on disk. Open fails if the local zone cannot be loaded.
Result<std::unique_ptr<TimeZoneDb>> OpenSystemTimeZoneDb(const SystemTimeZoneDbOptions& options);

}  // namespace cronledger::model
