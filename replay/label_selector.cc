#include "replay/label_selector.h"

#include <algorithm>
#include <cctype>

namespace cronledger::replay {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Label keys: an optional DNS subdomain prefix and '/', then a name of [A-Za-z0-9._-] that starts
// and ends alphanumeric (at most 63 characters). Values: empty or the same shape as a name.
bool ValidName(std::string_view s, bool allow_empty) {
  if (s.empty()) return allow_empty;
  if (s.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool ValidKey(std::string_view k) {
  const size_t slash = k.find('/');
  if (slash == std::string_view::npos) return ValidName(k, false);
  const std::string_view prefix = k.substr(0, slash);
  if (prefix.empty() || prefix.size() > 253) return false;
  for (char c : prefix) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return ValidName(k.substr(slash + 1), false);
}

// Splits at commas outside parentheses.
Result<std::vector<std::string_view>> SplitRequirements(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) break;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0) {
    return Status::InvalidArgument("label selector \"" + std::string(text) +
                                   "\": unbalanced parentheses");
  }
  return out;
}

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector sel;
  if (Trim(text).empty()) return sel;
  CL_ASSIGN_OR_RETURN(auto parts, SplitRequirements(text));
  for (std::string_view part : parts) {
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument("label selector requirement \"" + std::string(part) +
                                     "\": " + why);
    };
    if (part.empty()) return bad("empty requirement");
    Requirement r;
    std::string_view key;
    if (part.front() == '!') {
      key = Trim(part.substr(1));
      r.op = Op::kDoesNotExist;
    } else if (size_t p = part.find("!="); p != std::string_view::npos) {
      key = Trim(part.substr(0, p));
      r.op = Op::kNotEquals;
      r.values.emplace_back(Trim(part.substr(p + 2)));
    } else if (size_t q = part.find('='); q != std::string_view::npos) {
      key = Trim(part.substr(0, q));
      std::string_view value = part.substr(q + 1);
      if (!value.empty() && value.front() == '=') value.remove_prefix(1);
      r.op = Op::kEquals;
      r.values.emplace_back(Trim(value));
    } else if (size_t open = part.find('('); open != std::string_view::npos) {
      // key in (a,b) | key notin (a,b)
      std::string_view head = Trim(part.substr(0, open));
      const size_t space = head.find_last_of(" \t");
      if (space == std::string_view::npos) return bad("want \"key in (values)\"");
      const std::string_view word = head.substr(space + 1);
      key = Trim(head.substr(0, space));
      if (word == "in") {
        r.op = Op::kIn;
      } else if (word == "notin") {
        r.op = Op::kNotIn;
      } else {
        return bad("unknown operator \"" + std::string(word) + "\"");
      }
      if (part.back() != ')') return bad("want \")\" at the end");
      std::string_view list = part.substr(open + 1, part.size() - open - 2);
      size_t start = 0;
      for (size_t i = 0; i <= list.size(); ++i) {
        if (i == list.size() || list[i] == ',') {
          r.values.emplace_back(Trim(list.substr(start, i - start)));
          start = i + 1;
        }
      }
      if (r.values.size() == 1 && r.values[0].empty()) return bad("empty value list");
    } else {
      key = part;
      r.op = Op::kExists;
    }
    if (!ValidKey(key)) return bad("invalid label key \"" + std::string(key) + "\"");
    for (const std::string& v : r.values) {
      if (!ValidName(v, true)) return bad("invalid label value \"" + v + "\"");
    }
    r.key = std::string(key);
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool in =
        has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    bool ok = false;
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        ok = in;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        ok = !in;
        break;
      case Op::kExists:
        ok = has;
        break;
      case Op::kDoesNotExist:
        ok = !has;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    switch (r.op) {
      case Op::kEquals:
        out += r.key + "=" + r.values[0];
        break;
      case Op::kNotEquals:
        out += r.key + "!=" + r.values[0];
        break;
      case Op::kIn:
      case Op::kNotIn: {
        out += r.key + (r.op == Op::kIn ? " in (" : " notin (");
        for (size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
        out += ")";
        break;
      }
      case Op::kExists:
        out += r.key;
        break;
      case Op::kDoesNotExist:
        out += "!" + r.key;
        break;
    }
  }
  return out;
}

}  // namespace cronledger::replay
