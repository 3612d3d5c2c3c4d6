// Errors are values. Every fallible call returns Status or StatusOr<T>; the
// message names the file, node, op or key that went wrong. Nothing in CAGR
// aborts on user input.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace cagr {

/// Broad category of an error; the message carries the specifics.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: shape, dtype, attribute, option
  kNotFound,         // missing file, npz key, graph input
  kUnsupported,      // op / pattern / dtype CAGR does not handle
  kCorrupt,          // malformed file (ONNX, npz, IR text, JSON)
  kInternal,         // a CAGR bug: an invariant broke
};

/// Result of an operation that returns nothing on success.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool isOk() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Prefixes context ("while importing node 'x': ...") and returns *this.
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status notFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status corrupt(std::string m) { return {ErrorCode::kCorrupt, std::move(m)}; }
inline Status internalError(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.isOk() && "StatusOr built from an OK status");
  }

  bool isOk() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace cagr

#define CAGR_CONCAT_INNER(a, b) a##b
#define CAGR_CONCAT(a, b) CAGR_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function if `expr` failed.
#define CAGR_RETURN_IF_ERROR(expr)             \
  do {                                         \
    ::cagr::Status cagr_status_ = (expr);      \
    if (!cagr_status_.isOk()) return cagr_status_; \
  } while (0)

#define CAGR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.isOk()) return tmp.status();            \
  lhs = std::move(tmp).value()

/// `CAGR_ASSIGN_OR_RETURN(auto x, f());` unwraps a StatusOr or returns its error.
#define CAGR_ASSIGN_OR_RETURN(lhs, expr) \
  CAGR_ASSIGN_OR_RETURN_IMPL(CAGR_CONCAT(cagr_sor_, __LINE__), lhs, expr)
