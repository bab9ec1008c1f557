// Query parameters and the default report window (audit/api_internal.h).
#include <algorithm>

#include "audit/adherence.h"
#include "audit/api_internal.h"

namespace cronledger::audit {

Result<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      auto hex = [](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
      };
      if (i + 2 >= s.size() + 0 || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
        return Status::InvalidArgument("malformed percent escape in query");
      }
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Result<Params> Params::Parse(std::string_view query, const std::vector<std::string>& allowed) {
  Params p;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    CL_ASSIGN_OR_RETURN(std::string name, PercentDecode(pair.substr(0, eq)));
    CL_ASSIGN_OR_RETURN(
        std::string value,
        PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1)));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return Status::InvalidArgument("unknown query parameter \"" + name + "\"");
    }
    if (!p.values_.emplace(name, value).second) {
      return Status::InvalidArgument("query parameter \"" + name + "\" given twice");
    }
  }
  return p;
}

std::optional<std::string> Params::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<Time>> Params::GetTime(const std::string& name) const {
  auto v = Get(name);
  if (!v) return std::optional<Time>();
  Result<Time> t = ParseRfc3339(*v);
  if (!t.ok()) {
    return Status::InvalidArgument(name + ": expected an RFC 3339 time, got \"" + *v + "\"");
  }
  return std::optional<Time>(*t);
}

Result<size_t> Params::GetLimit(size_t def, size_t max) const {
  auto v = Get("limit");
  if (!v) return def;
  size_t n = 0;
  bool ok = !v->empty() && v->size() <= 9;
  for (char c : *v) ok = ok && c >= '0' && c <= '9';
  if (ok) n = std::stoul(*v);
  if (!ok || n == 0 || n > max) {
    return Status::InvalidArgument("limit: expected an integer from 1 to " + std::to_string(max));
  }
  return n;
}

Result<std::pair<Time, Time>> Window(const ReadSet& rs, const Params& p) {
  CL_ASSIGN_OR_RETURN(std::optional<Time> since, p.GetTime("since"));
  CL_ASSIGN_OR_RETURN(std::optional<Time> until, p.GetTime("until"));
  if (!until) {
    CL_ASSIGN_OR_RETURN(std::optional<Time> horizon, LatestHorizon(rs.sources));
    if (!horizon) {
      return Status::InvalidArgument("until is required: the ledger has no decisions yet");
    }
    until = horizon->TruncateToSecond().AddSeconds(1);
  }
  if (!since) since = until->AddSeconds(-24 * 3600);
  if (!(*since < *until)) return Status::InvalidArgument("since must be before until");
  return std::pair{*since, *until};
}

}  // namespace cronledger::audit
