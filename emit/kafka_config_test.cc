#include "emit/kafka_config.h"

#include <gtest/gtest.h>

namespace cronledger::emit {
namespace {

TEST(KafkaConfig, TopicsDeriveFromThePrefix) {
  const KafkaTopics t = TopicsForPrefix("prod");
  EXPECT_EQ(t.watch, "prod.watch");
  EXPECT_EQ(t.decisions, "prod.decisions");
  EXPECT_EQ(t.ledger, "prod.ledger");
  EXPECT_EQ(TopicsForPrefix(KafkaConfig{}.topic_prefix).decisions, "cronledger.decisions");
}

TEST(KafkaConfig, ParsesKeyValueLinesInOrder) {
  auto p = ParseKafkaProperties(
      "# SASL over TLS\n"
      "security.protocol = SASL_SSL\n"
      "\n"
      "  sasl.mechanism=SCRAM-SHA-512\r\n"
      "sasl.password=a=b=c\n"
      "ssl.ca.location=/etc/ca.pem");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const KafkaProperties want = {{"security.protocol", "SASL_SSL"},
                                {"sasl.mechanism", "SCRAM-SHA-512"},
                                {"sasl.password", "a=b=c"},
                                {"ssl.ca.location", "/etc/ca.pem"}};
  EXPECT_EQ(*p, want);
}

TEST(KafkaConfig, BadLinesNameTheLineButNeverItsContent) {
  auto p = ParseKafkaProperties("acks=all\nhunter2\n");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("line 2"), std::string::npos);
  EXPECT_EQ(p.status().message().find("hunter2"), std::string::npos);
  EXPECT_FALSE(ParseKafkaProperties("=value").ok());
}

TEST(KafkaConfig, SecretsAreRedacted) {
  struct Case {
    const char* key;
    bool secret;
  };
  const Case cases[] = {
      {"sasl.password", true},           {"sasl.username", true},
      {"sasl.oauthbearer.config", true}, {"SASL.JAAS.CONFIG", true},
      {"ssl.key.password", true},        {"ssl.key.location", true},
      {"ssl.keystore.password", true},   {"ssl_key", true},
      {"my.client.secret", true},        {"ssl.ca.location", false},
      {"security.protocol", false},      {"bootstrap.servers", false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsSecretProperty(c.key), c.secret) << c.key;
  const KafkaProperties r =
      RedactedProperties({{"sasl.password", "hunter2"}, {"security.protocol", "SASL_SSL"}});
  EXPECT_EQ(r[0].second, "[redacted]");
  EXPECT_EQ(r[1].second, "SASL_SSL");
}

TEST(KafkaConfig, MissingFileIsIoError) {
  auto p = LoadKafkaPropertiesFile("/nonexistent/cronledger/kafka.properties");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace cronledger::emit
