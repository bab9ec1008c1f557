#pragma once

// A small, strict command-line parser: `--name value`, `--name=value`, `-x value`, boolean
// switches, repeatable flags and positionals. Unknown flags and missing values are errors (exit 2).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"
#include "model/time.h"

namespace cronledger::app {

class Flags {
 public:
  // Declares a flag taking a value; `short_name` may be empty ("o" for -o).
  Flags& Value(std::string name, std::string short_name = "", bool repeatable = false);
  // Declares a boolean switch (no value).
  Flags& Switch(std::string name, std::string short_name = "");

  // Parses args; on error the Status says which flag and why.
  Status Parse(const std::vector<std::string>& args);

  bool Has(std::string_view name) const;
  std::optional<std::string> Get(std::string_view name) const;
  std::string GetOr(std::string_view name, std::string fallback) const;
  std::vector<std::string> GetAll(std::string_view name) const;
  // The value of `name` as a whole number in [min, max] (decimal digits only: no sign, no
  // exponent, no suffix), or `fallback` when the flag is absent. The error names the flag, the
  // range (in `unit`, e.g. "MiB", when given) and the text given:
  // `--workers: a whole number from 1 to 999, not "0"`.
  Result<uint64_t> Uint(std::string_view name, uint64_t min, uint64_t max, uint64_t fallback,
                        std::string_view unit = "") const;
  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  struct Spec {
    bool takes_value = true;
    bool repeatable = false;
  };
  const std::string* Resolve(std::string_view token) const;

  std::map<std::string, Spec, std::less<>> specs_;
  std::map<std::string, std::string, std::less<>> short_to_long_;
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::vector<std::string> positionals_;
};

// A time given on the command line: RFC 3339, or a Go duration counted back from `now` like
// kubectl's --since (`1h` is an hour before now, `90m`, `2h30m`). A negative duration is refused.
Result<Time> ParseTimeArg(std::string_view text, Time now);

// The flag `name` through ParseTimeArg; nullopt when absent. The error names the flag.
Result<std::optional<Time>> TimeFlag(const Flags& flags, std::string_view name, Time now);

}  // namespace cronledger::app
