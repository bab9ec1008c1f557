#pragma once

// The few Go standard-library text routines whose exact behaviour shows in robfig/cron's parse
// errors: strings.Fields / TrimSpace (Unicode white space), strconv.Atoi and strconv.Quote.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace cronledger::reconciler::gotext {

// strings.Fields: splits around runs of Go unicode.IsSpace characters (UTF-8).
std::vector<std::string_view> Fields(std::string_view s);
// strings.TrimSpace.
std::string_view TrimSpace(std::string_view s);
// strconv.Atoi on a 64-bit platform; errors read `strconv.Atoi: parsing "x": invalid syntax` or
// `... value out of range`.
Result<int64_t> Atoi(std::string_view s);
// strconv.Quote. Printability of non-ASCII runes follows Go for the Latin-1 range, format
// characters and separators; other valid non-ASCII runes are taken as printable.
// Appends "\<letter>" and `digits` lower-case hex digits of v (Go's \x, \u and \U escapes).
void AppendHexEscape(std::string* out, char letter, uint32_t v, int digits);
std::string Quote(std::string_view s);

}  // namespace cronledger::reconciler::gotext
