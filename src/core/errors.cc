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
  }
  return "Error";
}

}  // namespace kiln
