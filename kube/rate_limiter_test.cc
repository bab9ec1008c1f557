#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

#include "kube/retry_policy.h"

namespace cronledger::kube {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, BurstThenOnePerInterval) {
  ManualClock clock(Time::FromUnix(0));
  TokenBucket bucket(clock, /*qps=*/2, /*burst=*/3);
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  // Reservations queue: the 4th waits 0.5 s, the 5th 1 s.
  EXPECT_EQ(bucket.Reserve(), milliseconds(500));
  EXPECT_EQ(bucket.Reserve(), milliseconds(1000));
  clock.Advance(milliseconds(1000));
  EXPECT_EQ(bucket.Reserve(), milliseconds(500));
}

TEST(TokenBucketTest, RefillsUpToBurstOnly) {
  ManualClock clock(Time::FromUnix(0));
  TokenBucket bucket(clock, 10, 2);
  clock.Advance(std::chrono::seconds(60));
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
}

TEST(TokenBucketTest, TryTakeNeverGoesAheadOfAReservation) {
  ManualClock clock(Time::FromUnix(0));
  TokenBucket bucket(clock, /*qps=*/10, /*burst=*/2);
  EXPECT_EQ(bucket.TryTake(), Duration::zero());  // a whole token was there
  EXPECT_EQ(bucket.Reserve(), Duration::zero());  // the last one
  // Empty: a background request waits for the next token...
  EXPECT_EQ(bucket.TryTake(), milliseconds(100));
  // ...but a reservation made meanwhile takes it first.
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));
  clock.Advance(milliseconds(100));
  EXPECT_EQ(bucket.TryTake(), milliseconds(100));  // the refill went to the reservation
  clock.Advance(milliseconds(100));
  EXPECT_EQ(bucket.TryTake(), Duration::zero());
  EXPECT_EQ(bucket.Reserve(), milliseconds(100));  // and TryTake's token counts against others
}

TEST(TokenBucketTest, DisabledWithZeroQps) {
  ManualClock clock(Time::FromUnix(0));
  TokenBucket bucket(clock, 0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.Reserve(), Duration::zero());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.TryTake(), Duration::zero());
}

TEST(RetryPolicyTest, JitterIsDeterministicAndInRange) {
  for (int attempt = 1; attempt < 50; ++attempt) {
    const double a = JitterFraction("GET /apis/batch/v1/jobs", attempt);
    EXPECT_EQ(a, JitterFraction("GET /apis/batch/v1/jobs", attempt));
    EXPECT_GE(a, 0.0);
    EXPECT_LT(a, 1.0);
  }
  EXPECT_NE(JitterFraction("a", 1), JitterFraction("b", 1));
  EXPECT_NE(JitterFraction("a", 1), JitterFraction("a", 2));
}

TEST(RetryPolicyTest, DecidesWhatToRetry) {
  RetryOptions options;
  options.max_retries = 3;
  ApiError too_many = ApiErrorFromResponse(429, "");
  ApiError server = ApiErrorFromResponse(500, "");
  ApiError not_found = ApiErrorFromResponse(404, "");
  ApiError transport = TransportError("reset");
  EXPECT_TRUE(RetryDelay(options, too_many, /*idempotent=*/false, "k", 1).has_value());
  EXPECT_FALSE(RetryDelay(options, server, /*idempotent=*/false, "k", 1).has_value());
  EXPECT_TRUE(RetryDelay(options, server, /*idempotent=*/true, "k", 1).has_value());
  EXPECT_TRUE(RetryDelay(options, transport, /*idempotent=*/true, "k", 1).has_value());
  EXPECT_FALSE(RetryDelay(options, not_found, /*idempotent=*/true, "k", 1).has_value());
  EXPECT_FALSE(RetryDelay(options, too_many, true, "k", 4).has_value());  // past max_retries
}

TEST(RetryPolicyTest, RetryAfterWinsAndIsCapped) {
  RetryOptions options;
  options.max_backoff = std::chrono::seconds(10);
  ApiError e = ApiErrorFromResponse(429, "");
  e.retry_after = 3;
  EXPECT_EQ(*RetryDelay(options, e, false, "k", 1), std::chrono::seconds(3));
  e.retry_after = 100;
  EXPECT_EQ(*RetryDelay(options, e, false, "k", 1), std::chrono::seconds(10));
}

TEST(RetryPolicyTest, ExponentialBackoffWithJitter) {
  const Duration initial = milliseconds(100);
  const Duration max = std::chrono::seconds(5);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    const Duration base = std::min<Duration>(initial * (1 << (attempt - 1)), max);
    const Duration d = JitteredBackoff(initial, max, 0.5, "key", attempt);
    EXPECT_GE(d, base);
    EXPECT_LE(d, std::min<Duration>(max, base + base / 2));
    EXPECT_EQ(d, JitteredBackoff(initial, max, 0.5, "key", attempt));
  }
}

}  // namespace
}  // namespace cronledger::kube
