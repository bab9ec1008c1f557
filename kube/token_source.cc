#include "kube/token_source.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "model/json.h"

extern char** environ;

namespace cronledger::kube {
namespace {

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// What a plugin may print; a credential is a few KiB.
constexpr size_t kMaxPluginOutput = 1 << 20;

// environ with `overrides` replacing or adding variables.
std::vector<std::string> PluginEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [k, v] : overrides) replaced = replaced || k == name;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  return env;
}

// Reads `fd` to EOF (at most kMaxPluginOutput bytes are kept; the rest is drained).
Result<std::string> ReadAll(int fd) {
  std::string out;
  char buf[8192];
  bool too_long = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Status::IoError(std::string("reading the plugin's output: ") + strerror(errno));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxPluginOutput) too_long = true;
    if (!too_long) out.append(buf, static_cast<size_t>(n));
  }
  if (too_long) return Status::InvalidArgument("the plugin printed more than 1 MiB");
  return out;
}

}  // namespace

Result<ExecCredential> ParseExecCredential(std::string_view json, std::string_view api_version) {
  auto parsed = model::ParseJson(json);
  if (!parsed.ok()) {
    return Status::InvalidArgument("exec plugin output is not JSON: " + parsed.status().message());
  }
  const model::Json& j = *parsed;
  if (!j.is_object()) return Status::InvalidArgument("exec plugin output is not a JSON object");
  CL_ASSIGN_OR_RETURN(auto kind, model::OptString(j, "kind", "kind"));
  CL_ASSIGN_OR_RETURN(auto version, model::OptString(j, "apiVersion", "apiVersion"));
  if (kind.value_or("") != "ExecCredential") {
    return Status::InvalidArgument("exec plugin output is not an ExecCredential (kind \"" +
                                   kind.value_or("") + "\")");
  }
  if (version.value_or("") != api_version) {
    return Status::InvalidArgument("exec plugin answered apiVersion \"" + version.value_or("") +
                                   "\", it was asked for " + std::string(api_version));
  }
  CL_ASSIGN_OR_RETURN(model::Json status, model::OptObject(j, "status", "status"));
  ExecCredential c;
  CL_ASSIGN_OR_RETURN(auto token, model::OptString(status, "token", "status.token"));
  CL_ASSIGN_OR_RETURN(
      auto cert, model::OptString(status, "clientCertificateData", "status.clientCertificateData"));
  CL_ASSIGN_OR_RETURN(auto key, model::OptString(status, "clientKeyData", "status.clientKeyData"));
  CL_ASSIGN_OR_RETURN(c.expiration,
                      model::OptTime(status, "expirationTimestamp", "status.expirationTimestamp"));
  c.token = token.value_or("");
  c.client_cert_pem = cert.value_or("");
  c.client_key_pem = key.value_or("");
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return Status::InvalidArgument(
        "ExecCredential has only one of status.clientCertificateData and status.clientKeyData");
  }
  if (c.token.empty() && c.client_cert_pem.empty()) {
    return Status::InvalidArgument(
        "ExecCredential has neither status.token nor status.clientCertificateData");
  }
  return c;
}

Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin) {
  std::vector<std::pair<std::string, std::string>> vars = plugin.env;
  vars.emplace_back("KUBERNETES_EXEC_INFO", model::DumpJson({{"apiVersion", plugin.api_version},
                                                             {"kind", "ExecCredential"},
                                                             {"spec", {{"interactive", false}}}}));
  std::vector<std::string> env = PluginEnvironment(vars);
  std::vector<std::string> argv = {plugin.command};
  argv.insert(argv.end(), plugin.args.begin(), plugin.args.end());
  std::vector<char*> argv_c, env_c;
  for (auto& a : argv) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  for (auto& e : env) env_c.push_back(e.data());
  env_c.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return Status::IoError(std::string("exec plugin: pipe: ") + strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid = 0;
  // A bare name is looked up in PATH (posix_spawnp), a path is used as is.
  const int rc = plugin.command.find('/') == std::string::npos
                     ? posix_spawnp(&pid, argv_c[0], &fa, nullptr, argv_c.data(), env_c.data())
                     : posix_spawn(&pid, argv_c[0], &fa, nullptr, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    std::string msg = "exec plugin: cannot run " + plugin.command + ": " + strerror(rc);
    if (!plugin.install_hint.empty()) msg += "\n" + plugin.install_hint;
    return Status::Unavailable(msg);
  }
  Result<std::string> text = ReadAll(out[0]);
  ::close(out[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    const std::string how = WIFEXITED(wstatus)
                                ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
                                : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    return Status::Unavailable("exec plugin " + plugin.command + " " + how);
  }
  if (!text.ok()) return text.status();
  auto credential = ParseExecCredential(*text, plugin.api_version);
  if (!credential.ok()) return credential.status().WithContext("exec plugin " + plugin.command);
  return credential;
}

BearerTokenSource::BearerTokenSource(std::string static_token, std::string token_file)
    : static_token_(std::move(static_token)), token_file_(std::move(token_file)) {}

BearerTokenSource::BearerTokenSource(const KubeConfig& config, const WallClock* clock)
    : static_token_(config.token),
      token_file_(config.token_file),
      exec_(config.exec),
      clock_(clock) {}

Result<ExecCredential> BearerTokenSource::FreshCredentialLocked() {
  // client-go treats a credential as expired at its expirationTimestamp; no margin is added, a
  // 401 after a late expiry re-runs the plugin through Invalidate.
  if (credential_ && (!credential_->expiration || clock_->Now() < *credential_->expiration)) {
    return *credential_;
  }
  credential_.reset();
  CL_ASSIGN_OR_RETURN(ExecCredential fresh, RunExecPlugin(*exec_));
  credential_ = fresh;
  return fresh;
}

Result<ExecCredential> BearerTokenSource::Credential() {
  if (!exec_) return Status::FailedPrecondition("no exec credential plugin configured");
  std::lock_guard<std::mutex> lock(mu_);
  return FreshCredentialLocked();
}

bool BearerTokenSource::Invalidate() {
  if (!exec_) return false;
  std::lock_guard<std::mutex> lock(mu_);
  credential_.reset();
  return true;
}

Result<std::string> BearerTokenSource::Token() {
  if (exec_) {
    std::lock_guard<std::mutex> lock(mu_);
    CL_ASSIGN_OR_RETURN(ExecCredential c, FreshCredentialLocked());
    return c.token;
  }
  if (token_file_.empty()) return static_token_;
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st {};
  if (::stat(token_file_.c_str(), &st) != 0) {
    if (have_token_) return token_;
    return Status::IoError("cannot stat token file " + token_file_);
  }
  FileId id;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = st.st_size;
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (have_token_ && id == seen_) return token_;
  std::ifstream in(token_file_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = Trim(text.str());
  if (!in || token.empty()) {
    // Mid-rotation or unreadable: keep the last good token (client-go does the same).
    if (have_token_) return token_;
    return Status::IoError("cannot read a token from " + token_file_);
  }
  seen_ = id;
  token_ = std::move(token);
  have_token_ = true;
  return token_;
}

}  // namespace cronledger::kube
