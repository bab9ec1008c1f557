#pragma once

// The credentials for each request.
//
// A bearer token from a file: a projected service-account token is rewritten by the kubelet
// (atomically, through a symlink swap) well before it expires; client-go re-reads the file, and so
// do we: the file is stat()ed on every request and re-read when its inode, size or modification
// time changed.
//
// A credential plugin (kubeconfig `users[].user.exec`, client-go's exec authenticator): the command
// prints an ExecCredential whose status holds a token and/or a client certificate and key, and
// optionally an expirationTimestamp. The credential is cached until it expires, and the plugin is
// run again when it has, or when the API server answered 401 Unauthorized (Invalidate).

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kube/config.h"
#include "model/clock.h"
#include "model/result.h"

namespace cronledger::kube {

// The status of an ExecCredential (client.authentication.k8s.io/v1 and v1beta1).
struct ExecCredential {
  std::string token;
  std::string client_cert_pem;  // status.clientCertificateData (PEM, not base64)
  std::string client_key_pem;   // status.clientKeyData
  // status.expirationTimestamp; unset: valid until the API server refuses it.
  std::optional<Time> expiration;
};

// Parses a plugin's standard output. InvalidArgument when it is not JSON, not an ExecCredential of
// `api_version`, has a malformed expirationTimestamp, only half of a certificate and key pair, or
// neither a token nor a certificate.
Result<ExecCredential> ParseExecCredential(std::string_view json, std::string_view api_version);

// Runs the plugin once, without a shell: its args; cronledger's environment plus plugin.env and
// KUBERNETES_EXEC_INFO (an ExecCredential with spec.interactive false); stdin /dev/null; its stderr
// goes to ours (plugins explain themselves there). Unavailable when the command cannot be started
// (the message carries the install hint) or exits non-zero; otherwise ParseExecCredential's result.
Result<ExecCredential> RunExecPlugin(const ExecPlugin& plugin);

class BearerTokenSource {
 public:
  // With an empty `token_file`, Token() returns `static_token` (possibly empty: no auth).
  BearerTokenSource(std::string static_token, std::string token_file);
  // From a client's configuration: its exec plugin when it has one (then `clock`, which must
  // outlive this, decides expiry and must not be null), else its token file or static token.
  BearerTokenSource(const KubeConfig& config, const WallClock* clock);

  // The current token, whitespace-trimmed. Token file: if the file cannot be read the last good
  // token is kept (a rotation in progress must not fail requests); IoError only when no token was
  // ever read. Plugin: the cached credential's token, running the plugin first when there is none
  // or it expired; the plugin's error when that run fails. Thread-safe.
  Result<std::string> Token();

  // The plugin's current credential (running it as Token() does), for its client certificate.
  // FailedPrecondition without a plugin. Thread-safe.
  Result<ExecCredential> Credential();

  // The API server answered 401 Unauthorized with the current token. With a plugin, forgets its
  // credential so that the next Token() runs it again, and returns true (a retry may succeed);
  // false otherwise. Thread-safe.
  bool Invalidate();

 private:
  struct FileId {
    uint64_t dev = 0, ino = 0;
    int64_t size = -1, mtime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  Result<ExecCredential> FreshCredentialLocked();

  const std::string static_token_;
  const std::string token_file_;
  const std::optional<ExecPlugin> exec_;
  const WallClock* const clock_ = nullptr;
  std::mutex mu_;
  FileId seen_;
  std::string token_;
  bool have_token_ = false;
  std::optional<ExecCredential> credential_;
};

}  // namespace cronledger::kube
