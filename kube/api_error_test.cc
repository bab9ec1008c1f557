#include "kube/api_error.h"

#include <gtest/gtest.h>

namespace cronledger::kube {
namespace {

TEST(ApiErrorTest, ParsesStatusBodyWithCauses) {
  const std::string body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"jobs.batch \"x\" is forbidden: unable to create new content in namespace ns because it is being terminated",
    "reason":"Forbidden","details":{"name":"x","group":"batch","kind":"jobs",
    "causes":[{"reason":"NamespaceTerminating","message":"namespace ns is being terminated","field":"metadata.namespace"}]},
    "code":403})";
  const ApiError e = ApiErrorFromResponse(403, body);
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_EQ(e.causes[0].field, "metadata.namespace");
  EXPECT_TRUE(e.HasCause("NamespaceTerminating"));
  EXPECT_EQ(e.OutcomeReason(), "NamespaceTerminating");
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kFailedPrecondition);
}

TEST(ApiErrorTest, MapsReasonsToStatusCodes) {
  struct Case {
    int code;
    const char* reason;
    Status::Code want;
  };
  const Case cases[] = {
      {404, "NotFound", Status::Code::kNotFound},
      {409, "AlreadyExists", Status::Code::kAlreadyExists},
      {409, "Conflict", Status::Code::kConflict},
      {410, "Expired", Status::Code::kOutOfRange},
      {410, "Gone", Status::Code::kOutOfRange},
      {429, "TooManyRequests", Status::Code::kUnavailable},
      {500, "InternalError", Status::Code::kUnavailable},
      {503, "ServiceUnavailable", Status::Code::kUnavailable},
      {422, "Invalid", Status::Code::kInvalidArgument},
      {401, "Unauthorized", Status::Code::kFailedPrecondition},
      {405, "MethodNotAllowed", Status::Code::kInternal},
  };
  for (const Case& c : cases) {
    const std::string body = std::string(R"({"kind":"Status","reason":")") + c.reason +
                             R"(","message":"m","code":)" + std::to_string(c.code) + "}";
    const ApiError e = ApiErrorFromResponse(c.code, body);
    EXPECT_EQ(e.reason, c.reason);
    EXPECT_EQ(e.ToStatus().code(), c.want) << c.reason;
  }
}

TEST(ApiErrorTest, NonStatusBodyDerivesReasonFromCode) {
  const ApiError e = ApiErrorFromResponse(503, "upstream connect error");
  EXPECT_EQ(e.reason, "ServiceUnavailable");
  EXPECT_EQ(e.message, "upstream connect error");
  EXPECT_TRUE(e.IsServerError());
  EXPECT_FALSE(e.IsTransport());
}

TEST(ApiErrorTest, RetryAfterFromDetails) {
  const ApiError e = ApiErrorFromResponse(
      429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":7}})");
  ASSERT_TRUE(e.retry_after.has_value());
  EXPECT_EQ(*e.retry_after, 7);
}

TEST(ApiErrorTest, TransportErrorsAreUnavailable) {
  const ApiError e = TransportError("connection refused");
  EXPECT_TRUE(e.IsTransport());
  EXPECT_EQ(e.OutcomeReason(), "Transport");
  EXPECT_EQ(e.ToStatus().code(), Status::Code::kUnavailable);
}

TEST(ApiErrorTest, KubeResultWorksWithAssignOrReturn) {
  auto f = [](bool fail) -> KubeResult<int> {
    if (fail) return ApiErrorFromResponse(404, R"({"kind":"Status","reason":"NotFound"})");
    return 7;
  };
  auto use = [&](bool fail) -> Status {
    CL_ASSIGN_OR_RETURN(int v, f(fail));
    return v == 7 ? Status::Ok() : Status::Internal("bad");
  };
  EXPECT_TRUE(use(false).ok());
  EXPECT_TRUE(use(true).IsNotFound());
}

}  // namespace
}  // namespace cronledger::kube
