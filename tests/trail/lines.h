#pragma once

// The trail tests' shared helper: a bundle's (or any output's) lines.

#include <string>
#include <vector>

namespace cronledger::trail_test {

// `text` split at '\n', without the newlines; a last line without one counts too.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

}  // namespace cronledger::trail_test
