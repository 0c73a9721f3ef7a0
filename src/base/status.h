// Status: the error value passed around inside OpenACL. Only capi turns it into
// an aclError plus a recorded message (STYLE.md 8).
#pragma once

#include <string>
#include <utility>

#include "base/codes.h"

namespace openacl {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == code::kSuccess; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int code_ = code::kSuccess;
  std::string message_;
};

// printf-style formatting into a std::string (GCC 12 has no <format>).
std::string strformat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Status with a formatted message: Errorf(code::kInvalidParam, "size %zu ...", n).
Status Errorf(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define OPENACL_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::openacl::Status _st = (expr);            \
    if (!_st.ok()) return _st;                 \
  } while (0)

}  // namespace openacl
