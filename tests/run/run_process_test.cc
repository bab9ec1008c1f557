// Leader hand-over between two `cronledger run --leader-elect` processes (separate data dirs)
// against one fixture API server in this process (HTTPS, client certificates), on the real clock:
// the leader is stopped (SIGTERM: it releases the Lease; SIGKILL: the Lease must expire), the
// follower takes over, and no Job is created twice while every fire time gets its Job. Short lease
// durations keep it fast.
//
// Fire times come from the real clock (schedules are per minute): CronJobs are created with a
// creationTimestamp ten minutes in the past, so on first sight the leader owes each of them the
// Job of the current minute (upstream runs the most recent missed time), and one per minute
// boundary after that. The checks hold whether or not a minute boundary passes mid-test.
#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "kube/resource.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/test_pki.h"
#include "model/json.h"
#include "model/time.h"
#include "tests/testing/minute_jobs.h"

#ifndef CRONLEDGER_BIN
#error "CRONLEDGER_BIN must name the cronledger executable"
#endif

namespace cronledger::app::testing {
namespace {

using kube::testing::Base64;
using model::Json;

Json CronJobObject(const std::string& ns, const std::string& name, const std::string& schedule) {
  Json container = {{"name", "c"}, {"image", "busybox:1.36"}};
  Json tmpl;
  tmpl["spec"]["template"]["spec"] = {{"restartPolicy", "Never"},
                                      {"containers", Json::array({container})}};
  Json cj = {{"apiVersion", "cronledger.io/v1"}, {"kind", "CronJob"}};
  cj["metadata"] = {{"name", name}, {"namespace", ns}};
  cj["spec"] = {{"schedule", schedule}, {"concurrencyPolicy", "Allow"}, {"jobTemplate", tmpl}};
  return cj;
}

int64_t RealUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Time RealNow() {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return Time::FromUnix(ns / 1000000000, static_cast<int32_t>(ns % 1000000000));
}

// GET http://127.0.0.1:<port><target>: status and body (status 0 when it cannot connect).
std::pair<int, std::string> HttpGet(uint16_t port, const std::string& target) {
  try {
    Poco::Net::HTTPClientSession session("127.0.0.1", port);
    session.setTimeout(Poco::Timespan(5, 0));
    Poco::Net::HTTPRequest request("GET", target, Poco::Net::HTTPMessage::HTTP_1_1);
    session.sendRequest(request);
    Poco::Net::HTTPResponse response;
    std::istream& in = session.receiveResponse(response);
    std::string body;
    Poco::StreamCopier::copyToString(in, body);
    return {static_cast<int>(response.getStatus()), body};
  } catch (const Poco::Exception&) {
    return {0, ""};
  }
}

// Polls `pred` (real time, bounded); gives up early when a process it depends on has exited.
bool EventuallyReal(
    const std::function<bool()>& pred, const std::function<bool()>& alive = [] { return true; },
    std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    if (!alive()) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A `cronledger run` child process; stderr goes to a file (its log).
class Process {
 public:
  Process(const std::vector<std::string>& args, const std::filesystem::path& log) : log_(log) {
    std::vector<char*> argv;
    std::string bin = CRONLEDGER_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 2);
        dup2(fd, 1);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Process() {
    if (running()) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  pid_t pid() const { return pid_; }
  bool running() {
    if (pid_ <= 0 || status_) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
    return !status_;
  }
  void Signal(int sig) { kill(pid_, sig); }
  // Waits for the exit; the raw wait status.
  int Wait() {
    if (!status_) {
      int st = 0;
      waitpid(pid_, &st, 0);
      status_ = st;
    }
    return *status_;
  }
  std::string log() const { return ReadFile(log_); }
  // The port a listener reported in the log ("<what> on 127.0.0.1:<port>"), 0 if not yet.
  uint16_t Port(const std::string& what) const {
    const std::string text = log();
    const std::string key = what + " on 127.0.0.1:";
    const size_t at = text.find(key);
    if (at == std::string::npos) return 0;
    return static_cast<uint16_t>(std::atoi(text.c_str() + at + key.size()));
  }

 private:
  std::filesystem::path log_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

class HandOverTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    // HTTPS with client certificates: the processes trust the CA from the kubeconfig's
    // certificate-authority-data and authenticate with client-certificate-data/-key-data.
    auto pki = kube::testing::MakeTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status().ToString();
    kube::testing::FakeApiServerOptions options;
    options.tls_cert_pem = pki->server.cert;
    options.tls_key_pem = pki->server.key;
    options.client_ca_pem = pki->ca.cert;
    options.now = [this] { return RealNow().Add(-std::chrono::seconds(back_.load())); };
    auto server = kube::testing::FakeApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    dir_ = std::filesystem::temp_directory_path() /
           ("cronledger-handover-" + std::to_string(getpid()) + "-" + std::to_string(GetParam()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "kubeconfig")
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: fixture\n  cluster:\n    server: "
        << server_->url() << "\n    certificate-authority-data: " << Base64(pki->ca.cert)
        << "\ncontexts:\n- name: fixture\n  context:\n    cluster: fixture\n    user: test\n"
           "    namespace: default\ncurrent-context: fixture\nusers:\n- name: test\n  user:\n"
           "    client-certificate-data: "
        << Base64(pki->client.cert) << "\n    client-key-data: " << Base64(pki->client.key) << "\n";
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<Process> Start(const std::string& name) {
    return std::make_unique<Process>(
        std::vector<std::string>{
            "run", "--kubeconfig=" + (dir_ / "kubeconfig").string(),
            "--data-dir=" + (dir_ / name).string(), "--sync=none", "--workers=2", "--leader-elect",
            "--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s",
            "--leader-elect-retry-period=200ms", "--health-probe-bind-address=127.0.0.1:0",
            "--metrics-bind-address=127.0.0.1:0"},
        dir_ / (name + ".log"));
  }

  // CronJobs created "ten minutes ago": each is owed the Job of the minute it is first seen in.
  void CreateCronJobs(const std::string& prefix, int n) {
    back_.store(600);
    for (int i = 0; i < n; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(
          server_->Create(kube::CronledgerCronJobs(), CronJobObject("default", name, "* * * * *"))
              .ok());
      created_[name] = RealUnix() / 60;
    }
    back_.store(0);
  }

  std::string Holder() {
    std::optional<Json> lease = server_->Get(kube::Leases(), "default", "cronledger-controller");
    if (!lease || !(*lease)["spec"].contains("holderIdentity")) return "";
    const Json& h = (*lease)["spec"]["holderIdentity"];
    return h.is_string() ? h.get<std::string>() : "";
  }
  bool Holds(const Process& p) {
    const std::string h = Holder();
    std::string suffix = "_";
    suffix += std::to_string(p.pid());
    return h.size() > suffix.size() &&
           h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  bool AllFireTimesHaveJobs(std::string* missing) {
    return ::cronledger::testing::AllMinuteJobsExist(*server_, "default", created_, RealUnix() / 60,
                                                     missing);
  }

  std::atomic<int64_t> back_{0};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  std::filesystem::path dir_;
  std::map<std::string, int64_t> created_;  // CronJob → the minute it was created in
  std::unique_ptr<Process> a_, b_;
};

TEST_P(HandOverTest, TheFollowerTakesOverWithoutDoubleAction) {
  const int sig = GetParam();
  CreateCronJobs("a", 4);
  a_ = Start("a");
  ASSERT_TRUE(EventuallyReal([&] { return Holds(*a_); }, [&] { return a_->running(); }))
      << a_->log();
  b_ = Start("b");
  std::string missing;
  ASSERT_TRUE(
      EventuallyReal([&] { return AllFireTimesHaveJobs(&missing); }, [&] { return a_->running(); }))
      << "missing " << missing << "\n"
      << a_->log();
  // The follower is ready (synced) without leading; the leader says it leads.
  auto b_alive = [&] { return b_->running(); };
  ASSERT_TRUE(EventuallyReal([&] { return b_->Port("metrics") != 0; }, b_alive)) << b_->log();
  ASSERT_TRUE(EventuallyReal([&] {
    return HttpGet(b_->Port("health probes"), "/readyz").first == 200;
  })) << b_->log();
  EXPECT_EQ(HttpGet(b_->Port("health probes"), "/healthz").second, "ok");
  const std::string master = "leader_election_master_status{name=\"cronledger-controller\"} ";
  EXPECT_NE(HttpGet(b_->Port("metrics"), "/metrics").second.find(master + "0\n"),
            std::string::npos);
  EXPECT_NE(HttpGet(a_->Port("metrics"), "/metrics").second.find(master + "1\n"),
            std::string::npos);
  EXPECT_TRUE(Holds(*a_));

  // The leader's next Job create takes effect but its answer is held back; the leader goes away
  // while it waits (SIGKILL: it never learns the Job was created). Meanwhile (no leader yet) more
  // CronJobs arrive, owed Jobs too.
  server_->SlowNext(1, std::chrono::seconds(3), "POST",
                    kube::CollectionPath(kube::BatchJobs(), "default"));
  CreateCronJobs("c", 1);
  ASSERT_TRUE(
      EventuallyReal([&] { return AllFireTimesHaveJobs(&missing); }, [&] { return a_->running(); }))
      << "missing " << missing << "\n"
      << a_->log();
  a_->Signal(sig);
  CreateCronJobs("b", 4);
  const int status = a_->Wait();
  if (sig == SIGTERM) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << a_->log();
    EXPECT_NE(a_->log().find("stopped"), std::string::npos) << a_->log();
  } else {
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  ASSERT_TRUE(EventuallyReal([&] { return Holds(*b_); }, b_alive)) << b_->log();
  ASSERT_TRUE(EventuallyReal([&] { return AllFireTimesHaveJobs(&missing); }, b_alive))
      << "missing " << missing << "\n"
      << b_->log();

  std::optional<Json> lease = server_->Get(kube::Leases(), "default", "cronledger-controller");
  ASSERT_TRUE(lease.has_value());
  // 1 on a quiet machine; more only if a renewal missed its deadline under load (the
  // invariants below hold either way).
  EXPECT_GE((*lease)["spec"]["leaseTransitions"].get<int>(), 1);

  // No Job was created twice; every Job belongs to a fire time the CronJob was owed.
  b_->Signal(SIGTERM);
  const int b_status = b_->Wait();
  EXPECT_TRUE(WIFEXITED(b_status) && WEXITSTATUS(b_status) == 0) << b_->log();
  const int64_t end_minute = RealUnix() / 60;
  int already_exists = 0;
  const auto creates = server_->creates(kube::BatchJobs());
  for (const auto& [key, tally] : creates) {
    EXPECT_EQ(tally.created, 1) << key;
    already_exists += tally.already_exists;
    const std::string job = key.substr(key.find('/') + 1);
    const std::string cj = job.substr(0, job.rfind('-'));
    const int64_t minute = std::atoll(job.c_str() + job.rfind('-') + 1);
    ASSERT_TRUE(created_.count(cj)) << job;
    EXPECT_GE(minute, created_[cj]) << job;
    EXPECT_LE(minute, end_minute) << job;
  }
  EXPECT_GE(creates.size(), created_.size());
  // Every request came over TLS with the client certificate.
  for (const auto& r : server_->requests()) {
    ASSERT_EQ(r.client_cert_cn, "cronledger-test") << r.method << " " << r.path;
  }
  ::testing::Test::RecordProperty("already_exists", already_exists);
  int delayed = 0;
  for (const auto& r : server_->requests()) delayed += r.delayed ? 1 : 0;
  EXPECT_EQ(delayed, 1);
  std::printf("hand-over (%s): %zu Jobs created once each, %d AlreadyExists answers\n",
              sig == SIGTERM ? "SIGTERM" : "SIGKILL", creates.size(), already_exists);
}

INSTANTIATE_TEST_SUITE_P(Signals, HandOverTest, ::testing::Values(SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return p.param == SIGTERM ? std::string("Sigterm")
                                                     : std::string("Sigkill");
                         });

}  // namespace
}  // namespace cronledger::app::testing
