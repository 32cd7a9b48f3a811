"""kiln.debugging: value assertions (eager: they check now and raise InvalidArgumentError)."""
from . import _core
from . import errors
from ._convert import convert_pair
from ._ops import _t, reduce_all

from ._array_helpers import Assert, check_numerics  # noqa: E402,F401

__all__ = ["Assert", "check_numerics", "assert_equal", "assert_less", "assert_greater", "assert_less_equal", "assert_greater_equal",
           "assert_non_negative", "assert_positive"]


def _check(ok, x, y, what, message):
    if not bool(reduce_all(ok)):
        text = (message + "\n" if message else "") + "Condition x %s y did not hold element-wise:\nx = %s\ny = %s" % (
            what, _core.print_string(x, 3), _core.print_string(y, 3))
        raise errors.InvalidArgumentError(None, None, text)


def _comparison(fn, what):
    def check(x, y, message=None, summarize=None, name=None):
        x, y = convert_pair(x, y, "Equal")
        _check(fn(x, y), x, y, what, message)

    return check


assert_equal = _comparison(_core.equal, "==")
assert_less = _comparison(_core.less, "<")
assert_greater = _comparison(_core.greater, ">")
assert_less_equal = _comparison(_core.less_equal, "<=")
assert_greater_equal = _comparison(_core.greater_equal, ">=")


def assert_non_negative(x, message=None, summarize=None, name=None):
    x = _t(x)
    assert_greater_equal(x, _core.zeros_like(x), message=message)


def assert_positive(x, message=None, summarize=None, name=None):
    x = _t(x)
    assert_greater(x, _core.zeros_like(x), message=message)


def set_log_device_placement(enabled):
    """Accepted; kiln runs every op on the CPU and logs no placements."""
    del enabled
