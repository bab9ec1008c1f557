// Leader election on the fixture's Lease: one leader of two; take-over after the lease duration
// when the leader stops renewing; step-down at the renew deadline when renewals fail.
#include "kube/lease.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

class LeaseTest : public RunFixture {
 protected:
  kube::LeaderElectionOptions Options(const std::string& identity) {
    kube::LeaderElectionOptions o;
    o.namespace_ = "kube-system";
    o.name = "cronledger-controller";
    o.identity = identity;
    return o;  // 15 s / 10 s / 2 s
  }
  Json Spec() {
    std::optional<Json> lease =
        server_->Get(kube::Leases(), "kube-system", "cronledger-controller");
    return lease ? (*lease)["spec"] : Json();
  }
};

TEST_F(LeaseTest, OnlyOneLeadsAndTheOtherTakesOverAfterTheLeaseDuration) {
  std::unique_ptr<kube::PocoKubeClient> client_b = NewClient();
  kube::LeaseElector a(*client_, clock_, clock_, Options("a"));
  kube::LeaseElector b(*client_b, clock_, clock_, Options("b"));
  EXPECT_TRUE(a.Step());
  EXPECT_FALSE(b.Step());
  EXPECT_EQ(Spec()["holderIdentity"], "a");
  EXPECT_EQ(Spec()["leaseTransitions"], 0);
  EXPECT_EQ(Spec()["leaseDurationSeconds"], 15);

  clock_.Advance(std::chrono::seconds(2));
  EXPECT_TRUE(a.Step());   // renews
  EXPECT_FALSE(b.Step());  // sees the renewal at t=2
  const Json renewed = Spec();
  EXPECT_EQ(renewed["renewTime"], "2024-01-01T00:00:02.000000Z");
  EXPECT_EQ(renewed["acquireTime"], "2024-01-01T00:00:00.000000Z");

  // a stops renewing. b respects the lease until 15 s after it last saw it change.
  clock_.Advance(std::chrono::seconds(14));  // t=16
  EXPECT_FALSE(b.Step());
  EXPECT_TRUE(a.IsLeader());
  clock_.Advance(std::chrono::seconds(1));  // t=17
  EXPECT_TRUE(b.Step());
  EXPECT_EQ(Spec()["holderIdentity"], "b");
  EXPECT_EQ(Spec()["leaseTransitions"], 1);
  EXPECT_EQ(Spec()["acquireTime"], "2024-01-01T00:00:17.000000Z");
  // a wakes up: it sees b's record and steps down instead of acting.
  EXPECT_FALSE(a.Step());
  EXPECT_FALSE(a.IsLeader());
  EXPECT_EQ(Spec()["holderIdentity"], "b");

  // b releases: a takes over without waiting for the lease to expire... after the 1 s release
  // duration it observed.
  ASSERT_TRUE(b.Release().ok());
  EXPECT_FALSE(b.IsLeader());
  EXPECT_TRUE(a.Step());  // the holder is empty: free to take
  EXPECT_EQ(Spec()["holderIdentity"], "a");
  EXPECT_EQ(Spec()["leaseTransitions"], 2);
}

TEST_F(LeaseTest, ALeaderThatCannotRenewStepsDownAtTheRenewDeadline) {
  kube::LeaseElector a(*client_, clock_, clock_, Options("a"));
  ASSERT_TRUE(a.Step());
  // Every GET fails (the client's own retries included) from now on.
  server_->FailNext(1000, 500, std::nullopt, "GET");
  clock_.Advance(std::chrono::seconds(2));
  EXPECT_TRUE(a.Step());                    // failed, but within the renew deadline
  clock_.Advance(std::chrono::seconds(8));  // 10 s since the last renewal
  EXPECT_FALSE(a.Step());
  EXPECT_FALSE(a.last_error().empty());
  server_->FailNext(0, 500);
}

TEST_F(LeaseTest, TheAssemblyActsOnlyWhileItLeads) {
  RunConfig config = Config(kube::CronledgerCronJobs());
  config.leader_election = Options("a");
  StartAssembly(config);
  kube::LeaseElector other(*client_, clock_, clock_, Options("b"));
  ASSERT_TRUE(other.Step());  // b holds the lease first
  assembly_->StartActing();
  ASSERT_TRUE(Eventually(
      [&] { return assembly_->elector()->last_error().find("held by b") != std::string::npos; }));
  EXPECT_FALSE(assembly_->acting());
  // b gives the lease up: the assembly's elector takes it and the workers start.
  ASSERT_TRUE(other.Release().ok());
  EXPECT_TRUE(Eventually([&] { return assembly_->acting(); }));
  EXPECT_EQ(Spec()["holderIdentity"], "a");
  // Stopping releases the lease.
  assembly_->Stop();
  EXPECT_FALSE(assembly_->acting());
  EXPECT_EQ(Spec()["holderIdentity"], "");

  kube::LeaderElectionOptions bad = Options("x");
  bad.renew_deadline = bad.lease_duration;
  EXPECT_FALSE(kube::ValidateLeaderElection(bad).ok());
}

}  // namespace
}  // namespace cronledger::app::testing
