#include "reconciler/cron_go_text.h"

namespace cronledger::reconciler::gotext {
namespace {

constexpr char32_t kRuneError = 0xFFFD;

// Decodes one UTF-8 rune at s[i]; invalid sequences decode as (RuneError, 1) like Go.
char32_t DecodeRune(std::string_view s, size_t i, size_t* width) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *width = 1;
  if (b0 < 0x80) return b0;
  size_t n = 0;
  char32_t r = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, r = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, r = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, r = b0 & 0x07, min = 0x10000;
  } else {
    return kRuneError;
  }
  if (i + n > s.size()) return kRuneError;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return kRuneError;
    r = (r << 6) | (b & 0x3F);
  }
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return kRuneError;
  *width = n;
  return r;
}

// Go's unicode.IsSpace.
bool IsSpace(char32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// Go's strconv.IsPrint, exact for ASCII and Latin-1; for the rest, separators and the common
// format characters are non-printable and everything else printable.
bool IsPrint(char32_t r) {
  if (r < 0x20 || r == 0x7F) return false;
  if (r < 0x7F) return true;
  if (r < 0xA1 || r == 0xAD) return false;
  if (IsSpace(r) || (r >= 0x200B && r <= 0x200F) || (r >= 0x2060 && r <= 0x2064) || r == 0xFEFF) {
    return false;
  }
  return r != kRuneError;
}

Status NumError(std::string_view s, std::string_view why) {
  return Status::InvalidArgument("strconv.Atoi: parsing " + Quote(s) + ": " + std::string(why));
}

}  // namespace

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = std::string_view::npos;
  for (size_t i = 0; i < s.size();) {
    size_t w = 1;
    const char32_t r = DecodeRune(s, i, &w);
    if (IsSpace(r)) {
      if (start != std::string_view::npos) out.push_back(s.substr(start, i - start));
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = i;
    }
    i += w;
  }
  if (start != std::string_view::npos) out.push_back(s.substr(start));
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size()) {
    size_t w = 1;
    if (!IsSpace(DecodeRune(s, begin, &w))) break;
    begin += w;
  }
  size_t end = s.size();
  while (end > begin) {
    // Find the start of the last rune.
    size_t k = end - 1;
    while (k > begin && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80 && end - k < 4) --k;
    size_t w = 1;
    const char32_t r = DecodeRune(s, k, &w);
    if (k + w != end) {
      break;  // an invalid tail byte: RuneError, not space
    }
    if (!IsSpace(r)) break;
    end = k;
  }
  return s.substr(begin, end - begin);
}

Result<int64_t> Atoi(std::string_view s0) {
  std::string_view s = s0;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return NumError(s0, "invalid syntax");
  // Go's fast path (fewer than 19 bytes) and ParseInt agree on syntax; ParseInt reports an
  // overflow as soon as it happens, before looking at later characters.
  uint64_t n = 0;
  constexpr uint64_t kCutoff = UINT64_MAX / 10 + 1;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return NumError(s0, "invalid syntax");
    if (n >= kCutoff) return NumError(s0, "value out of range");
    const uint64_t n1 = n * 10 + static_cast<uint64_t>(ch - '0');
    if (n1 < n * 10) return NumError(s0, "value out of range");
    n = n1;
  }
  constexpr uint64_t kSignedCutoff = uint64_t{1} << 63;
  if ((!neg && n >= kSignedCutoff) || (neg && n > kSignedCutoff)) {
    return NumError(s0, "value out of range");
  }
  return neg ? static_cast<int64_t>(0 - n) : static_cast<int64_t>(n);
}

void AppendHexEscape(std::string* out, char letter, uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('\\');
  out->push_back(letter);
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out->push_back(kHex[(v >> shift) & 0xf]);
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    size_t w = 1;
    const char32_t r = DecodeRune(s, i, &w);
    if (r == kRuneError && w == 1) {
      AppendHexEscape(&out, 'x', static_cast<unsigned char>(s[i]), 2);
    } else if (r == '"' || r == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(r));
    } else if (IsPrint(r)) {
      out.append(s.substr(i, w));
    } else {
      switch (r) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          if (r < ' ' || r == 0x7F) {
            AppendHexEscape(&out, 'x', static_cast<uint32_t>(r), 2);
          } else if (r < 0x10000) {
            AppendHexEscape(&out, 'u', static_cast<uint32_t>(r), 4);
          } else {
            AppendHexEscape(&out, 'U', static_cast<uint32_t>(r), 8);
          }
      }
    }
    i += w;
  }
  out.push_back('"');
  return out;
}

}  // namespace cronledger::reconciler::gotext
