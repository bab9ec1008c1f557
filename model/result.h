#pragma once

#include <optional>
#include <utility>

#include "model/status.h"

namespace cronledger {

// Either a value of T or a non-OK Status. Accessing value() of a failed Result is a bug (CL_CHECK).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    CL_CHECK(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    CL_CHECK(ok());
    return *value_;
  }
  const T& value() const& {
    CL_CHECK(ok());
    return *value_;
  }
  T&& value() && {
    CL_CHECK(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace cronledger

#define CL_CONCAT_INNER_(a, b) a##b
#define CL_CONCAT_(a, b) CL_CONCAT_INNER_(a, b)
// CL_ASSIGN_OR_RETURN(auto x, Foo()); returns Foo()'s Status from the enclosing function on
// failure.
#define CL_ASSIGN_OR_RETURN(lhs, expr) \
  CL_ASSIGN_OR_RETURN_IMPL_(CL_CONCAT_(cl_result_, __LINE__), lhs, expr)
#define CL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
