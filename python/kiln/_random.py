"""Seeds, as TensorFlow derives them. After set_seed(s), every random op gets the pair
(s, op seed): its own seed when given, else the next number of a Python random.Random(s)
when eager (TensorFlow's context draws the same numbers the same way) or, inside a
kiln.function, the count of random ops traced so far (TensorFlow numbers a graph's random
ops 0, 1, 2, ...). An op seed alone pairs with TensorFlow's default graph seed. No seeds:
(None, None), a fresh stream per call."""
import random as _pyrandom

from . import _core

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1

_global_seed = None
_rng = _pyrandom.Random()
_trace_counts = {}  # trace serial -> random ops seeded in that trace so far


def set_seed(seed):
    """tf.random.set_seed: the global seed; also restarts the streams of seeded stateful ops
    (TensorFlow clears its kernel cache)."""
    global _global_seed, _rng
    _global_seed = None if seed is None else int(seed)
    _rng = _pyrandom.Random(_global_seed)
    _trace_counts.clear()
    _core.reset_random_streams()


def global_seed():
    return _global_seed


def _truncate(seed):
    return int(seed) % _MAXINT32


def get_seed(op_seed):
    """TensorFlow's random_seed.get_seed: the (seed, seed2) attrs of one random op."""
    if _global_seed is not None:
        if op_seed is None:
            serial = _core.trace_serial()
            if serial:
                if len(_trace_counts) > 64 and serial not in _trace_counts:
                    _trace_counts.clear()
                op_seed = _trace_counts.get(serial, 0)
                _trace_counts[serial] = op_seed + 1
            else:
                op_seed = _rng.randint(0, _MAXINT32)
        seeds = _truncate(_global_seed), _truncate(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate(op_seed)
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def op_seeds(op_seed):
    """get_seed's pair as attr values: None becomes 0 (a fresh stream)."""
    seed, seed2 = get_seed(op_seed)
    return seed or 0, seed2 or 0
