#pragma once

// A throw-away PKI for TLS tests, generated in memory with OpenSSL (no files, no openssl CLI):
// a CA, a server certificate for 127.0.0.1/localhost signed by it, and a client certificate
// (CN = user, O = group: how kube-apiserver reads x509 client identities). EC P-256 keys, valid
// from an hour ago for a day.

#include <string>

#include "model/result.h"

namespace cronledger::kube::testing {

struct Pem {
  std::string cert;
  std::string key;
};

struct TestPki {
  Pem ca;
  Pem server;  // SAN IP:127.0.0.1, DNS:localhost; serverAuth
  Pem client;  // CN = client_user, O = client_group; clientAuth
};

// Internal error on an OpenSSL failure.
Result<TestPki> MakeTestPki(const std::string& ca_name = "cronledger-test-ca",
                            const std::string& client_user = "cronledger-test",
                            const std::string& client_group = "system:masters");

// Standard base64 without line breaks: how kubeconfig's *-data fields carry PEM.
std::string Base64(const std::string& in);

}  // namespace cronledger::kube::testing
