#pragma once

// The name of Go's Local zone as the controller records it (the "localTimeZone" ConfigChange).
// model::TimeZoneDb::Local() is named "Local" whatever zone it is (like Go's time.Local), so the
// controller is told the IANA name the database was opened with
// (model::SystemTimeZoneDbOptions::local_zone) and checks that it is the same zone.

#include <string>

#include "model/result.h"
#include "model/timezone.h"

namespace cronledger::controller {

// True when the two zones give the same offsets (and DST flags) at every instant from 1900 to
// 2100: every period boundary of either zone in that range is compared.
bool SameZone(const model::TimeZone& a, const model::TimeZone& b);

// The name to record for `tzdb.Local()`: "UTC" for "" and "UTC", else `name`. InvalidArgument
// when `name` is "Local", cannot be loaded, or is not the zone `tzdb.Local()` is.
Result<std::string> LocalZoneName(const model::TimeZoneDb& tzdb, const std::string& name);

}  // namespace cronledger::controller
