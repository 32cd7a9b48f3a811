"""tf.random.Generator on kiln: a state variable [counter_lo, counter_hi, key] (int64) that
each draw reads and advances with RngReadAndSkip, then samples with the stateless V2 ops at
that key and counter, as TensorFlow's Generator does, so a generator made from the same seed
gives TensorFlow's numbers in the same order."""
import enum
import os

import numpy as np

from . import _dtypes, raw_ops
from ._convert import convert_to_tensor
from ._dtypes import as_dtype

_SEED_MAX = 2 ** 63 - 1
_SEED_SPAN = 2 ** 64


class Algorithm(enum.Enum):
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def alg_to_int(alg):
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, int):
        return alg
    if isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        names = {"philox": 1, "threefry": 2, "autoselect": 3}
        if canon in names:
            return names[canon]
        raise ValueError("Argument `alg` got unsupported value %s. Supported values are %s for the Philox "
                         "algorithm, %s for the ThreeFry algorithm, and %s for auto-selection."
                         % (alg, Algorithm.PHILOX.value, Algorithm.THREEFRY.value, Algorithm.AUTO_SELECT.value))
    raise TypeError("Can't convert argument `alg` (of value %s and type %s) to int." % (alg, type(alg)))


def _state_size(alg):
    if alg == Algorithm.THREEFRY.value:
        raise NotImplementedError("kiln runs on CPUs, where TensorFlow has no ThreeFry: use Philox")
    if alg in (Algorithm.PHILOX.value, Algorithm.AUTO_SELECT.value):
        return 3
    raise ValueError("Argument `alg` got unsupported value %s." % alg)


def _uint_to_int(n):
    return n - _SEED_SPAN if n > _SEED_MAX else n


def create_rng_state(seed, alg):
    """A state from an int (cut into 64-bit pieces, low first) or a vector (padded with zeros
    on the left, so small seeds land in the key)."""
    size = _state_size(alg_to_int(alg))
    if isinstance(seed, int):
        pieces = []
        for _ in range(size):
            pieces.append(seed & (_SEED_SPAN - 1))
            seed >>= 64
        seed = pieces
    values = [_uint_to_int(int(v)) for v in np.asarray(seed).reshape(-1)][:size]
    return convert_to_tensor(np.array([0] * (size - len(values)) + values, np.int64))


def philox_scramble_seed(seed):
    """stateless_* with alg="philox": the seed becomes key and counter through one Philox call."""
    from ._ops import cast, stack
    key = convert_to_tensor(np.array([0x02461E293EC8F720], np.uint64))
    mix = raw_ops.StatelessRandomUniformFullIntV2(shape=[4], key=key, counter=cast(seed, _dtypes.uint64),
                                                  alg=Algorithm.PHILOX.value, dtype=_dtypes.uint32)
    to64 = lambda pair: raw_ops.Bitcast(input=pair, type=_dtypes.uint64)  # noqa: E731 (low word first)
    zero = convert_to_tensor(np.uint64(0))
    return raw_ops.Reshape(tensor=to64(mix[:2]), shape=[1]), stack([zero, to64(mix[2:])])


class Generator:
    """TensorFlow's tf.random.Generator (Philox)."""

    def __init__(self, copy_from=None, state=None, alg=None):
        from ._variable import Variable
        from ._mirrored import has_strategy, get_strategy

        # Made under a strategy, each replica draws from its own stream (TensorFlow's rule).
        self._strategy = get_strategy() if has_strategy() else None
        if copy_from is not None:
            if state is not None or alg is not None:
                raise ValueError("Generator: give copy_from, or state and alg, not both")
            self._alg = copy_from.algorithm
            self._state_var = Variable(copy_from.state.read_value(), trainable=False, name="StateVar")
            return
        if state is None or alg is None:
            raise ValueError("Generator needs state and alg (or use from_seed, from_state, "
                             "from_non_deterministic_state)")
        self._alg = alg_to_int(alg)
        size = _state_size(self._alg)
        if isinstance(state, Variable):
            self._check_shape(state.shape, size)
            self._state_var = state
        else:
            state = self._state_tensor(state)
            self._check_shape(state.shape, size)
            self._state_var = Variable(state, trainable=False, name="StateVar")  # TensorFlow's name

    @staticmethod
    def _state_tensor(state):
        if isinstance(state, (list, tuple)):
            state = np.array([_uint_to_int(int(v)) for v in state], np.int64)
        from ._ops import cast
        return cast(convert_to_tensor(state), _dtypes.int64)

    @staticmethod
    def _check_shape(shape, size):
        if list(shape) != [size]:
            raise ValueError("Shapes %s and (%d,) are incompatible" % (tuple(shape), size))

    @classmethod
    def from_seed(cls, seed, alg=None):
        alg = Algorithm.PHILOX.value if alg is None else alg_to_int(alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        alg = Algorithm.PHILOX.value if alg is None else alg_to_int(alg)
        words = np.frombuffer(os.urandom(8 * _state_size(alg)), np.int64).copy()
        return cls(state=words, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        counter = [int(v) for v in np.asarray(counter).reshape(-1)]
        return cls(state=counter + [int(np.asarray(key).reshape(-1)[0])], alg=alg)

    def reset(self, state):
        state = self._state_tensor(state)
        self._check_shape(state.shape, _state_size(self._alg))
        self._state_var.assign(state)

    def reset_from_seed(self, seed):
        self._state_var.assign(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        counter = [int(v) for v in np.asarray(counter).reshape(-1)]
        self.reset(counter + [int(np.asarray(key).reshape(-1)[0])])

    @property
    def state(self):
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return self._state_var.read_value()[-1]

    def skip(self, delta):
        """Advances the state as drawing `delta` numbers does; returns the state before. Outside
        a replica context every replica's copy of a mirrored state advances."""
        from ._ops import cast
        from ._mirrored import current_replica

        alg, delta = convert_to_tensor(np.int32(self._alg)), cast(convert_to_tensor(delta), _dtypes.uint64)
        copies = getattr(self._state_var, "_components", None)
        if copies is None or current_replica() is not None:
            return raw_ops.RngReadAndSkip(resource=self._state_var, alg=alg, delta=delta)
        return [raw_ops.RngReadAndSkip(resource=c, alg=alg, delta=delta) for c in copies][0]

    def _prepare_key_counter(self, shape):
        from ._ops import reduce_prod
        counter_key = self.skip(reduce_prod(shape))
        counter = raw_ops.Bitcast(input=counter_key[:2], type=_dtypes.uint64)
        key = raw_ops.Bitcast(input=counter_key[2:3], type=_dtypes.uint64)
        return self._replica_key(key), counter

    def _replica_key(self, key):
        """In a replica context of the strategy it was made under, the key hashed with the
        replica id (counter [id, 0]): each replica's own stream, as TensorFlow derives it."""
        from ._mirrored import current_replica
        replica = current_replica()
        if self._strategy is None or replica is None:
            return key
        counter = convert_to_tensor(np.array([replica._replica_id, 0], np.uint64))
        return raw_ops.StatelessRandomUniformFullIntV2(shape=[1], key=key, counter=counter, alg=self._alg,
                                                       dtype=_dtypes.uint64)

    def _shape(self, shape):
        from .random import _shape
        return _shape(shape)

    def _scaled(self, op, shape, mean, stddev, dtype):
        dtype = as_dtype(dtype)
        shape = self._shape(shape)
        mean, stddev = convert_to_tensor(mean, dtype=dtype), convert_to_tensor(stddev, dtype=dtype)
        key, counter = self._prepare_key_counter(shape)
        return op(shape=shape, key=key, counter=counter, alg=self._alg, dtype=dtype) * stddev + mean

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        return self._scaled(raw_ops.StatelessRandomNormalV2, shape, mean, stddev, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        return self._scaled(raw_ops.StatelessTruncatedNormalV2, shape, mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        dtype = as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError("For integer dtype {}, minval and maxval must be both `None` or both non-`None`; "
                                 "got minval={} and maxval={}".format(dtype, minval, maxval))
        elif maxval is None:
            maxval = 1
        shape = self._shape(shape)
        if dtype.is_integer and minval is None:
            return self.uniform_full_int(shape, dtype)
        minval, maxval = convert_to_tensor(minval, dtype=dtype), convert_to_tensor(maxval, dtype=dtype)
        key, counter = self._prepare_key_counter(shape)
        if dtype.is_integer:
            return raw_ops.StatelessRandomUniformIntV2(shape=shape, key=key, counter=counter, alg=self._alg,
                                                       minval=minval, maxval=maxval)
        rnd = raw_ops.StatelessRandomUniformV2(shape=shape, key=key, counter=counter, alg=self._alg, dtype=dtype)
        return rnd * (maxval - minval) + minval

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        shape = self._shape(shape)
        key, counter = self._prepare_key_counter(shape)
        return raw_ops.StatelessRandomUniformFullIntV2(shape=shape, key=key, counter=counter, alg=self._alg,
                                                       dtype=as_dtype(dtype))

    def make_seeds(self, count=1):
        """[2, count] int64 seeds for the stateless functions."""
        from ._ops import stack, zeros_like
        keys = self.uniform_full_int(shape=[count], dtype=_dtypes.int64)
        return stack([keys, zeros_like(keys)])

    def split(self, count=1):
        """count new generators, independent of this one and of each other."""
        keys = self.uniform_full_int(shape=[count], dtype=_dtypes.int64).numpy()
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]


_global_generator = None


def get_global_generator():
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator):
    global _global_generator
    _global_generator = generator
