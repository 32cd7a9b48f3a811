// kiln: the error hierarchy. Every error kiln throws derives from kiln::Error.
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

enum class ErrorCode {
  InvalidArgument,
  NotFound,
  FailedPrecondition,
  OutOfRange,
  Unimplemented,
  Internal,
  OperatorNotAllowedInGraph,
  DataLoss,
  Cancelled,
  DeadlineExceeded,
  ResourceExhausted,
  Unknown,  // an error of a host function's own (a py_function's Python exception)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

#define KILN_DECLARE_ERROR(Name, Code)                                             \
  class Name : public Error {                                                      \
   public:                                                                         \
    explicit Name(const std::string& message) : Error(ErrorCode::Code, message) {} \
  };
KILN_DECLARE_ERROR(InvalidArgumentError, InvalidArgument)
KILN_DECLARE_ERROR(NotFoundError, NotFound)
KILN_DECLARE_ERROR(FailedPreconditionError, FailedPrecondition)
KILN_DECLARE_ERROR(OutOfRangeError, OutOfRange)
KILN_DECLARE_ERROR(UnimplementedError, Unimplemented)
KILN_DECLARE_ERROR(InternalError, Internal)
KILN_DECLARE_ERROR(OperatorNotAllowedInGraphError, OperatorNotAllowedInGraph)
KILN_DECLARE_ERROR(DataLossError, DataLoss)  // a saved file is corrupt or fails its checksum
// A call stopped by its limits (kiln/limits.h): cancelled (Ctrl-C in Python, a
// CancellationToken), past its deadline, or past its memory budget. kiln itself is unharmed.
KILN_DECLARE_ERROR(CancelledError, Cancelled)
KILN_DECLARE_ERROR(DeadlineExceededError, DeadlineExceeded)
KILN_DECLARE_ERROR(ResourceExhaustedError, ResourceExhausted)
KILN_DECLARE_ERROR(UnknownError, Unknown)
#undef KILN_DECLARE_ERROR

// "InvalidArgumentError", ...
const char* error_code_name(ErrorCode);
// Throws the error class of `code` (to pass an error on with more words).
[[noreturn]] void throw_error(ErrorCode code, const std::string& message);

}  // namespace kiln
