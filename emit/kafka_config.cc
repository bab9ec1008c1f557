#include "emit/kafka_config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace cronledger::emit {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

KafkaTopics TopicsForPrefix(std::string_view prefix) {
  const std::string p(prefix);
  return KafkaTopics{p + ".watch", p + ".decisions", p + ".ledger", p + ".checkpoints"};
}

Result<KafkaProperties> ParseKafkaProperties(std::string_view text) {
  KafkaProperties out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || Trim(line.substr(0, eq)).empty()) {
      // The line itself is not quoted: it may be a secret missing its key.
      return Status::InvalidArgument("kafka properties line " + std::to_string(line_no) +
                                     ": expected key=value");
    }
    out.emplace_back(std::string(Trim(line.substr(0, eq))), std::string(Trim(line.substr(eq + 1))));
  }
  return out;
}

Result<KafkaProperties> LoadKafkaPropertiesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read kafka properties file " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read kafka properties file " + path);
  auto parsed = ParseKafkaProperties(buf.str());
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

bool IsSecretProperty(std::string_view key) {
  const std::string k = Lower(key);
  return k.find("password") != std::string::npos || k.find("secret") != std::string::npos ||
         k.rfind("sasl.", 0) == 0 || k.rfind("ssl.key.", 0) == 0 || k == "ssl_key";
}

KafkaProperties RedactedProperties(const KafkaProperties& properties) {
  KafkaProperties out = properties;
  for (auto& [key, value] : out) {
    if (IsSecretProperty(key)) value = "[redacted]";
  }
  return out;
}

}  // namespace cronledger::emit
