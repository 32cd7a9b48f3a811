#include "kiln/errors.h"

namespace kiln {

const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::InvalidArgument:
      return "InvalidArgumentError";
    case ErrorCode::NotFound:
      return "NotFoundError";
    case ErrorCode::FailedPrecondition:
      return "FailedPreconditionError";
    case ErrorCode::OutOfRange:
      return "OutOfRangeError";
    case ErrorCode::Unimplemented:
      return "UnimplementedError";
    case ErrorCode::Internal:
      return "InternalError";
    case ErrorCode::OperatorNotAllowedInGraph:
      return "OperatorNotAllowedInGraphError";
    case ErrorCode::DataLoss:
      return "DataLossError";
    case ErrorCode::Cancelled:
      return "CancelledError";
    case ErrorCode::DeadlineExceeded:
      return "DeadlineExceededError";
    case ErrorCode::ResourceExhausted:
      return "ResourceExhaustedError";
    case ErrorCode::Unknown:
      return "UnknownError";
  }
  return "Error";
}

void throw_error(ErrorCode c, const std::string& message) {
  switch (c) {
    case ErrorCode::InvalidArgument:
      throw InvalidArgumentError(message);
    case ErrorCode::NotFound:
      throw NotFoundError(message);
    case ErrorCode::FailedPrecondition:
      throw FailedPreconditionError(message);
    case ErrorCode::OutOfRange:
      throw OutOfRangeError(message);
    case ErrorCode::Unimplemented:
      throw UnimplementedError(message);
    case ErrorCode::Internal:
      throw InternalError(message);
    case ErrorCode::OperatorNotAllowedInGraph:
      throw OperatorNotAllowedInGraphError(message);
    case ErrorCode::DataLoss:
      throw DataLossError(message);
    case ErrorCode::Cancelled:
      throw CancelledError(message);
    case ErrorCode::DeadlineExceeded:
      throw DeadlineExceededError(message);
    case ErrorCode::ResourceExhausted:
      throw ResourceExhaustedError(message);
    case ErrorCode::Unknown:
      throw UnknownError(message);
  }
  throw InternalError(message);
}

}  // namespace kiln
