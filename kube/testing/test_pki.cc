#include "kube/testing/test_pki.h"

#include <Poco/Base64Encoder.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <sstream>

namespace cronledger::kube::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

struct Spec {
  std::string cn;
  std::string org;
  bool ca = false;
  std::string san;  // "" = none
  const char* eku = nullptr;
};

Result<Cert> Issue(const Spec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                   long serial) {
  Cert cert(X509_new());
  if (!cert) return Status::Internal("X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!spec.org.empty()) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(spec.org.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(spec.cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = true;
  if (spec.ca) {
    ok = ok && AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    ok = ok && AddExt(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && AddExt(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    ok = ok && AddExt(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    ok = ok && AddExt(cert.get(), signer, NID_ext_key_usage, spec.eku);
  }
  if (!spec.san.empty()) {
    ok = ok && AddExt(cert.get(), signer, NID_subject_alt_name, spec.san.c_str());
  }
  if (!ok) return Status::Internal("certificate extensions");
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return Status::Internal("X509_sign");
  }
  return cert;
}

Result<Pem> ToPem(X509* cert, EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> cb(BIO_new(BIO_s_mem())), kb(BIO_new(BIO_s_mem()));
  if (!cb || !kb || PEM_write_bio_X509(cb.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(kb.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Status::Internal("PEM encoding");
  }
  auto text = [](BIO* b) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(b, &data);
    return std::string(data, static_cast<size_t>(n));
  };
  return Pem{text(cb.get()), text(kb.get())};
}

}  // namespace

Result<TestPki> MakeTestPki(const std::string& ca_name, const std::string& client_user,
                            const std::string& client_group) {
  Key ca_key(EVP_EC_gen("P-256")), server_key(EVP_EC_gen("P-256")), client_key(EVP_EC_gen("P-256"));
  if (!ca_key || !server_key || !client_key) return Status::Internal("EC key generation");
  CL_ASSIGN_OR_RETURN(Cert ca,
                      Issue({ca_name, "", true, "", nullptr}, ca_key.get(), nullptr, nullptr, 1));
  CL_ASSIGN_OR_RETURN(
      Cert server, Issue({"kube-apiserver", "", false, "IP:127.0.0.1,DNS:localhost", "serverAuth"},
                         server_key.get(), ca.get(), ca_key.get(), 2));
  CL_ASSIGN_OR_RETURN(Cert client, Issue({client_user, client_group, false, "", "clientAuth"},
                                         client_key.get(), ca.get(), ca_key.get(), 3));
  TestPki pki;
  CL_ASSIGN_OR_RETURN(pki.ca, ToPem(ca.get(), ca_key.get()));
  CL_ASSIGN_OR_RETURN(pki.server, ToPem(server.get(), server_key.get()));
  CL_ASSIGN_OR_RETURN(pki.client, ToPem(client.get(), client_key.get()));
  return pki;
}

std::string Base64(const std::string& in) {
  std::ostringstream out;
  Poco::Base64Encoder enc(out);
  enc.rdbuf()->setLineLength(0);
  enc << in;
  enc.close();
  return out.str();
}

}  // namespace cronledger::kube::testing
