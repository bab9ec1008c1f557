#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

namespace cronledger {

// A value-type outcome: cheap when OK, carries a code and a message otherwise. Modelled on
// leveldb::Status. Every fallible function in cronledger returns a Status or a Result<T>; an
// unchecked one is a compile error ([[nodiscard]]).
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,
    kInvalidArgument,  // bad input from a caller or a user: never retried
    kCorruption,       // stored data does not decode
    kIoError,
    kAlreadyExists,
    kConflict,
    kUnavailable,  // transient: retry with back-off
    kFailedPrecondition,
    kInternal,
    kAborted,
    kOutOfRange,
  };

  Status() = default;

  static Status Ok() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg);
  }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status IoError(std::string_view msg) { return Status(Code::kIoError, msg); }
  static Status AlreadyExists(std::string_view msg) { return Status(Code::kAlreadyExists, msg); }
  static Status Conflict(std::string_view msg) { return Status(Code::kConflict, msg); }
  static Status Unavailable(std::string_view msg) { return Status(Code::kUnavailable, msg); }
  static Status FailedPrecondition(std::string_view msg) {
    return Status(Code::kFailedPrecondition, msg);
  }
  static Status Internal(std::string_view msg) { return Status(Code::kInternal, msg); }
  static Status Aborted(std::string_view msg) { return Status(Code::kAborted, msg); }
  static Status OutOfRange(std::string_view msg) { return Status(Code::kOutOfRange, msg); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsUnavailable() const { return code_ == Code::kUnavailable; }

  // "OK", or "<code name>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}

  Code code_ = Code::kOk;
  std::string message_;
};

std::string_view CodeName(Status::Code code);

}  // namespace cronledger

// Aborts loudly on an invariant violation (a bug in cronledger, never untrusted input).
#define CL_CHECK(cond)                                                                 \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: CL_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

// Returns early from the enclosing function with the Status of `expr` if it is not OK.
#define CL_RETURN_IF_ERROR(expr)              \
  do {                                        \
    ::cronledger::Status cl_status_ = (expr); \
    if (!cl_status_.ok()) return cl_status_;  \
  } while (0)
