#pragma once

// Which release of the tz database a zoneinfo directory holds: what `cronledger version` and the
// cronledger_build_info gauge report, and what the tests that ship their own copy check.

#include <string>
#include <string_view>

#include "model/result.h"

namespace cronledger::model {

// The release of the tz database in `zoneinfo_dir`, from the first line of its tzdata.zi
// ("# version 2025b"), which the tz project's `make install` and Debian's tzdata package write.
// Returns the release name, letters and digits only ("2025b"); NotFound when the directory has no
// tzdata.zi, Corruption when the file does not start with a version line, IoError when it cannot
// be read. Reads at most the first 256 bytes.
Result<std::string> ReadTzdataVersion(std::string_view zoneinfo_dir);

}  // namespace cronledger::model
