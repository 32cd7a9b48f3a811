"""Seeds, as TensorFlow's global and op seeds: after set_seed(s), the sequence of random ops is
the same on every run; an op seed alone fixes that op's stream."""
import itertools

_global_seed = None
_counter = itertools.count()


def set_seed(seed):
    global _global_seed, _counter
    _global_seed = None if seed is None else int(seed)
    _counter = itertools.count()


def get_seed(op_seed):
    """The seed for one random op, or None for a fresh random stream."""
    if _global_seed is None:
        return None if op_seed is None else (int(op_seed) * 0x9E3779B97F4A7C15) % (1 << 63)
    op = next(_counter) if op_seed is None else int(op_seed)
    return (_global_seed * 0x9E3779B97F4A7C15 + op * 0xBF58476D1CE4E5B9 + 1) % (1 << 63)
