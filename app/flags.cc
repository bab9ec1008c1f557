#include "app/flags.h"

#include <charconv>

namespace cronledger::app {

Flags& Flags::Value(std::string name, std::string short_name, bool repeatable) {
  if (!short_name.empty()) short_to_long_[short_name] = name;
  specs_[std::move(name)] = Spec{true, repeatable};
  return *this;
}

Flags& Flags::Switch(std::string name, std::string short_name) {
  if (!short_name.empty()) short_to_long_[short_name] = name;
  specs_[std::move(name)] = Spec{false, false};
  return *this;
}

const std::string* Flags::Resolve(std::string_view token) const {
  if (token.starts_with("--")) {
    auto it = specs_.find(token.substr(2));
    return it == specs_.end() ? nullptr : &it->first;
  }
  auto it = short_to_long_.find(token.substr(1));
  return it == short_to_long_.end() ? nullptr : &it->second;
}

Status Flags::Parse(const std::vector<std::string>& args) {
  bool only_positionals = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (only_positionals || arg.size() < 2 || arg[0] != '-') {
      positionals_.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positionals = true;
      continue;
    }
    std::optional<std::string> inline_value;
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      inline_value = std::string(arg.substr(eq + 1));
      arg = arg.substr(0, eq);
    }
    const std::string* name = Resolve(arg);
    if (name == nullptr) return Status::InvalidArgument("unknown flag " + std::string(arg));
    const Spec& spec = specs_.at(*name);
    std::string value = "true";
    if (spec.takes_value) {
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Status::InvalidArgument("flag " + std::string(arg) + " needs a value");
      }
    } else if (inline_value) {
      if (*inline_value != "true" && *inline_value != "false") {
        return Status::InvalidArgument("flag " + std::string(arg) + " takes true or false");
      }
      value = *inline_value;
    }
    auto& slot = values_[*name];
    if (!spec.repeatable && !slot.empty()) {
      return Status::InvalidArgument("flag --" + *name + " given more than once");
    }
    slot.push_back(std::move(value));
  }
  return Status::Ok();
}

bool Flags::Has(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return false;
  return !specs_.at(it->first).takes_value ? it->second.back() == "true" : true;
}

std::optional<std::string> Flags::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second.back();
}

std::string Flags::GetOr(std::string_view name, std::string fallback) const {
  auto v = Get(name);
  return v ? *v : std::move(fallback);
}

std::vector<std::string> Flags::GetAll(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<uint64_t> Flags::Uint(std::string_view name, uint64_t min, uint64_t max, uint64_t fallback,
                             std::string_view unit) const {
  const std::optional<std::string> text = Get(name);
  if (!text) return fallback;
  uint64_t v = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, v);
  // from_chars takes no '+' or whitespace; it does take a leading '-' for signed types only.
  if (text->empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    std::string range = "a whole number";
    if (!unit.empty()) range.append(" of ").append(unit);
    range.append(" from ").append(std::to_string(min)).append(" to ").append(std::to_string(max));
    return Status::InvalidArgument("--" + std::string(name) + ": " + range + ", not \"" + *text +
                                   "\"");
  }
  return v;
}

Result<Time> ParseTimeArg(std::string_view text, Time now) {
  if (Result<Time> t = ParseRfc3339(text); t.ok()) return *t;
  Result<Duration> ago = ParseGoDuration(text);
  if (!ago.ok()) {
    return Status::InvalidArgument(
        "expected an RFC 3339 time or a duration before now (1h, 90m), "
        "got \"" +
        std::string(text) + "\"");
  }
  if (*ago < Duration::zero()) {
    return Status::InvalidArgument("a duration before now must not be negative, got \"" +
                                   std::string(text) + "\"");
  }
  return now.Add(-*ago);
}

Result<std::optional<Time>> TimeFlag(const Flags& flags, std::string_view name, Time now) {
  const std::optional<std::string> text = flags.Get(name);
  if (!text) return std::optional<Time>();
  Result<Time> t = ParseTimeArg(*text, now);
  if (!t.ok())
    return Status::InvalidArgument("--" + std::string(name) + ": " + t.status().message());
  return std::optional<Time>(*t);
}

}  // namespace cronledger::app
