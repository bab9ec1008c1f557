#include "replay/label_selector.h"

#include <gtest/gtest.h>

namespace cronledger::replay {
namespace {

const std::map<std::string, std::string> kLabels = {
    {"app", "billing"}, {"tier", "batch"}, {"app.kubernetes.io/part-of", "ledger"}};

bool Match(const std::string& s, const std::map<std::string, std::string>& labels = kLabels) {
  auto sel = LabelSelector::Parse(s);
  EXPECT_TRUE(sel.ok()) << s << ": " << sel.status().ToString();
  return sel.ok() && sel->Matches(labels);
}

TEST(LabelSelector, EqualityAndInequality) {
  EXPECT_TRUE(Match("app=billing"));
  EXPECT_TRUE(Match("app==billing"));
  EXPECT_FALSE(Match("app=web"));
  EXPECT_TRUE(Match("app!=web"));
  EXPECT_FALSE(Match("app!=billing"));
  EXPECT_TRUE(Match("missing!=x"));  // absent counts as "not equal", like kubectl
  EXPECT_TRUE(Match("app.kubernetes.io/part-of=ledger"));
  EXPECT_FALSE(Match("app=billing,tier=web"));  // every requirement must hold
  EXPECT_TRUE(Match(" app = billing , tier = batch "));
}

TEST(LabelSelector, SetsAndExistence) {
  EXPECT_TRUE(Match("tier in (web,batch)"));
  EXPECT_TRUE(Match("tier in (batch)"));
  EXPECT_FALSE(Match("tier in (web, api)"));
  EXPECT_TRUE(Match("tier notin (web,api)"));
  EXPECT_FALSE(Match("tier notin (batch,api)"));
  EXPECT_TRUE(Match("missing notin (a)"));
  EXPECT_FALSE(Match("missing in (a)"));
  EXPECT_TRUE(Match("app"));
  EXPECT_FALSE(Match("!app"));
  EXPECT_TRUE(Match("!missing"));
  EXPECT_TRUE(Match("app,tier in (batch),!missing,app!=web"));
  EXPECT_TRUE(Match("empty=", {{"empty", ""}}));
  EXPECT_FALSE(Match("empty=", {{"empty", "x"}}));
}

TEST(LabelSelector, EmptySelectsEverythingAndCanonicalForm) {
  auto all = LabelSelector::Parse("  ");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  EXPECT_TRUE(all->Matches({}));
  auto sel = LabelSelector::Parse("a = 1, b in ( x , y ), !c, d");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->ToString(), "a=1,b in (x,y),!c,d");
}

TEST(LabelSelector, RejectsMalformedRequirements) {
  for (const char* bad : {"a=1,", ",a", "tier in (a,b", "tier in a,b)", "tier within (a)",
                          "tier in ()", "-bad=x", "a=b c", "a=(x)", "UPPER.prefix/k=v", "!",
                          "a="
                          "0123456789012345678901234567890123456789012345678901234567890123"}) {
    auto sel = LabelSelector::Parse(bad);
    EXPECT_FALSE(sel.ok()) << bad;
    if (!sel.ok()) {
      EXPECT_TRUE(sel.status().IsInvalidArgument()) << bad;
    }
  }
}

}  // namespace
}  // namespace cronledger::replay
