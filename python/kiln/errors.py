"""kiln's exceptions, with TensorFlow's class names (tf.errors)."""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class UnsupportedDTypeError(NotImplementedError, TypeError):
    """A TensorFlow dtype kiln does not have (uint8, float16, string, ...): behaviour TF has and
    kiln lacks is a NotImplementedError; it is also the TypeError TF raises for a dtype it lacks."""


class OpError(Exception):
    """An op failed: the base class of kiln's (and TensorFlow's) runtime errors."""

    def __init__(self, node_def, op, message, error_code=UNKNOWN, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __str__(self):
        return self._message

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)


def _error_class(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _error_class("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _error_class("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _error_class("InvalidArgumentError", INVALID_ARGUMENT, "An op got an invalid argument.")
DeadlineExceededError = _error_class("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _error_class("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _error_class("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _error_class("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
ResourceExhaustedError = _error_class("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource ran out.")
FailedPreconditionError = _error_class("FailedPreconditionError", FAILED_PRECONDITION,
                                       "The system is not in a state to run the operation.")
AbortedError = _error_class("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _error_class("OutOfRangeError", OUT_OF_RANGE, "An operation went past a valid range.")
UnimplementedError = _error_class("UnimplementedError", UNIMPLEMENTED, "An operation is not implemented.")
InternalError = _error_class("InternalError", INTERNAL, "kiln broke an internal invariant.")
UnavailableError = _error_class("UnavailableError", UNAVAILABLE, "A service is unavailable.")
DataLossError = _error_class("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _error_class("UnauthenticatedError", UNAUTHENTICATED, "Not authenticated.")


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation on a symbolic tensor that needs its value (TensorFlow's class)."""


# kiln::ErrorCode (include/kiln/errors.h) -> factory(node_def, op, message), for the C++ layer.
_BY_CPP_CODE = {
    0: InvalidArgumentError,
    1: NotFoundError,
    2: FailedPreconditionError,
    3: OutOfRangeError,
    4: UnimplementedError,
    5: InternalError,
    6: lambda node_def, op, message: OperatorNotAllowedInGraphError(message),
    7: DataLossError,
    8: CancelledError,
    9: DeadlineExceededError,
    10: ResourceExhaustedError,
    11: UnknownError,
}
