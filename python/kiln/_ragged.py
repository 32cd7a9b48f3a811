"""kiln.RaggedTensor and kiln.ragged (tf.RaggedTensor): rows of different lengths, held as
TensorFlow holds them — `values` (a tensor, or a RaggedTensor for deeper nesting) cut into
rows by `row_splits` (int64, [nrows + 1]). Constructors (ragged.constant, from_row_splits,
from_row_lengths, from_value_rowids, from_tensor), conversions (to_tensor, to_list, numpy),
row access and slicing, elementwise arithmetic on the flat values, reductions over rows, and
TensorFlow's repr. Eager only: a RaggedTensor cannot cross into a kiln.function yet."""
import numpy as np

from . import _core, _dtypes
from . import _public_name
from ._convert import convert_to_tensor
from ._shape import TensorShape

Tensor = _core.Tensor


def _splits(t):
    return np.asarray(convert_to_tensor(t, dtype=_dtypes.int64).numpy(), np.int64)


class RaggedTensor:
    """values cut into rows at row_splits; build with kiln.ragged.constant or the from_* methods."""

    def __init__(self, values, row_splits, validate=True):
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values)
        splits = _splits(row_splits)
        if validate:
            n = values.nrows_int() if isinstance(values, RaggedTensor) else (values.shape[0] or 0)
            if splits.ndim != 1 or splits.size == 0 or splits[0] != 0 or np.any(np.diff(splits) < 0) \
                    or splits[-1] != n:
                raise ValueError("Arguments to from_row_splits do not form a valid RaggedTensor: row_splits "
                                 "must start at 0, not decrease and end at the number of values (%d), got %s"
                                 % (n, splits.tolist()))
        self._values = values
        self._splits = splits

    # -- constructors --------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        return cls(values, row_splits, validate)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        lengths = _splits(row_lengths)
        return cls(values, np.concatenate([[0], np.cumsum(lengths)]), validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        ids = _splits(value_rowids)
        n = int(nrows) if nrows is not None else (int(ids.max()) + 1 if ids.size else 0)
        return cls.from_row_lengths(values, np.bincount(ids, minlength=n), validate=validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        out = flat_values
        for splits in reversed(list(nested_row_splits)):
            out = cls(out, splits, validate)
        return out

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None):
        t = convert_to_tensor(tensor)
        a = t.numpy()
        if a.ndim < 2:
            raise ValueError("The rank of a RaggedTensor must be greater than 1, i.e., a list of scalars won't "
                             "have ragged dimensions.")
        if lengths is not None:
            lens = _splits(lengths)
        elif padding is not None:
            pad = np.asarray(padding)
            keep = ~np.all((a == pad).reshape(a.shape[0], a.shape[1], -1), axis=2)
            lens = np.array([(np.nonzero(row)[0].max() + 1) if row.any() else 0 for row in keep], np.int64)
        else:
            lens = np.full([a.shape[0]], a.shape[1], np.int64)
        rows = [a[i, :lens[i]] for i in range(a.shape[0])]
        flat = np.concatenate(rows) if rows else a.reshape((0,) + a.shape[2:])
        return cls.from_row_lengths(convert_to_tensor(flat.astype(a.dtype)), lens)

    # -- what it is ----------------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return convert_to_tensor(self._splits)

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self):
        out, v = [self.row_splits], self._values
        while isinstance(v, RaggedTensor):
            out.append(v.row_splits)
            v = v._values
        return tuple(out)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def ragged_rank(self):
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def shape(self):
        inner = self._values.shape
        return TensorShape([self.nrows_int(), None] + inner.as_list()[1:])

    def get_shape(self):
        return self.shape

    def nrows_int(self):
        return int(self._splits.size - 1)

    def nrows(self, out_type=_dtypes.int64, name=None):
        return convert_to_tensor(self.nrows_int(), dtype=out_type)

    def row_lengths(self, axis=1, name=None):
        return convert_to_tensor(np.diff(self._splits))

    def value_rowids(self, name=None):
        return convert_to_tensor(np.repeat(np.arange(self.nrows_int(), dtype=np.int64), np.diff(self._splits)))

    def row_starts(self, name=None):
        return convert_to_tensor(self._splits[:-1])

    def row_limits(self, name=None):
        return convert_to_tensor(self._splits[1:])

    def bounding_shape(self, axis=None, name=None, out_type=_dtypes.int64):
        inner = self._values.bounding_shape().numpy().tolist() if isinstance(self._values, RaggedTensor) \
            else list(self._values.shape)
        longest = int(np.diff(self._splits).max()) if self.nrows_int() else 0
        shape = np.array([self.nrows_int(), longest] + inner[1:], np.int64)
        return convert_to_tensor(shape if axis is None else shape[axis], dtype=out_type)

    # -- conversions ---------------------------------------------------------------------------
    def _rows(self):
        v = self._values
        return [v[int(self._splits[i]):int(self._splits[i + 1])] for i in range(self.nrows_int())]

    def to_list(self):
        return [r.to_list() if isinstance(r, RaggedTensor) else r.numpy().tolist() for r in self._rows()]

    def numpy(self):
        """TensorFlow's value: rows of equal length stack into one array (of the rows' dtype,
        one rank more); rows of different lengths make a 1-D object array of rows."""
        values = self._values.numpy()
        rows = [values[int(self._splits[i]):int(self._splits[i + 1])] for i in range(self.nrows_int())]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), dtype=object)
            for i, r in enumerate(rows):
                out[i] = r
            return out
        return np.array(rows)

    def to_tensor(self, default_value=None, name=None, shape=None):
        bound = [int(d) for d in self.bounding_shape().numpy()]
        dtype = self.dtype
        fill = default_value if default_value is not None else (b"" if dtype == _dtypes.string else 0)
        out = np.full(bound, fill, dtype=object if dtype == _dtypes.string else dtype.as_numpy_dtype)
        self._fill(out)
        if shape is not None:
            want = [b if s is None else s for s, b in zip(TensorShape(shape).as_list(), bound)]
            padded = np.full(want, fill, dtype=out.dtype)
            region = tuple(slice(0, min(a, b)) for a, b in zip(want, bound))
            padded[region] = out[region]
            out = padded
        return convert_to_tensor(out, dtype=dtype)

    def _fill(self, out):
        for i, row in enumerate(self._rows()):
            if isinstance(row, RaggedTensor):
                row._fill(out[i])
            else:
                a = row.numpy()
                out[(i,) + tuple(slice(0, d) for d in a.shape)] = a

    def _element_indices(self):
        """int64 [values, 2 + ...]: the index in self of each row of the flat values."""
        lengths = np.diff(self._splits)
        here = np.stack([np.repeat(np.arange(lengths.size), lengths),
                         np.arange(int(self._splits[-1])) - np.repeat(self._splits[:-1], lengths)], axis=1)
        if isinstance(self._values, RaggedTensor):
            inner = self._values._element_indices()
            return np.concatenate([here[inner[:, 0]], inner[:, 1:]], axis=1)
        return here

    def _bounding_shape(self):
        """[rows, longest row, ...]: the smallest dense shape that holds every value."""
        lengths = np.diff(self._splits)
        longest = int(lengths.max()) if lengths.size else 0
        rest = self._values._bounding_shape()[1:] if isinstance(self._values, RaggedTensor) \
            else self._values.shape.as_list()[1:]
        return [int(lengths.size), longest] + rest

    def to_sparse(self, name=None):
        """The SparseTensor of the values at their (row, column, ...) positions, row-major."""
        from ._sparse import SparseTensor

        prefix = self._element_indices().astype(np.int64)
        values = self.flat_values.numpy()
        inner = values.shape[1:]
        if inner:
            cells = np.array(list(np.ndindex(*inner)), np.int64).reshape(-1, len(inner))
            prefix = np.concatenate([np.repeat(prefix, len(cells), axis=0), np.tile(cells, (len(prefix), 1))], axis=1)
        return SparseTensor(prefix, values.reshape(-1), np.array(self._bounding_shape(), np.int64))

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=_dtypes.int64):
        """The RaggedTensor of a 2-D SparseTensor whose indices are row-major and, within each
        row, the columns 0, 1, ... (TensorFlow's requirement)."""
        from . import errors

        indices, shape = st_input.indices.numpy(), st_input.dense_shape.numpy()
        if indices.ndim != 2 or indices.shape[1] != 2:
            raise ValueError("rank(st_input) must be 2.")
        rows = np.bincount(indices[:, 0], minlength=int(shape[0])) if indices.size else np.zeros(int(shape[0]), int)
        splits = np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)
        expected = np.arange(len(indices)) - np.repeat(splits[:-1], rows)
        if np.any(np.diff(indices[:, 0]) < 0) or not np.array_equal(indices[:, 1], expected):
            raise errors.InvalidArgumentError(None, None, "SparseTensor is not right-ragged")
        return cls.from_row_splits(st_input.values, splits)

    # -- access --------------------------------------------------------------------------------
    def __getitem__(self, key):
        if isinstance(key, tuple):
            if not key:
                return self
            row = self[key[0]]
            rest = key[1:]
            if not rest:
                return row
            if isinstance(key[0], slice):
                if len(rest) == 1 and isinstance(rest[0], slice) and not isinstance(row._values, RaggedTensor):
                    return row._slice_within_rows(rest[0])
                raise NotImplementedError("kiln.RaggedTensor: slicing rows and then within them takes one slice "
                                          "of a 2-D ragged tensor's rows (rt[a:b, c:d])")
            return row[rest if len(rest) > 1 else rest[0]]
        if isinstance(key, slice):
            start, stop, step = key.indices(self.nrows_int())
            if step != 1:
                raise NotImplementedError("kiln.RaggedTensor: row slices with a step are not supported")
            lo, hi = int(self._splits[start]), int(self._splits[max(stop, start)])
            return RaggedTensor(self._values[lo:hi], self._splits[start:max(stop, start) + 1] - lo, validate=False)
        i = int(key)
        n = self.nrows_int()
        if i < -n or i >= n:
            raise IndexError("Index %d is out of bounds for a RaggedTensor with %d rows" % (i, n))
        i %= n if n else 1
        return self._values[int(self._splits[i]):int(self._splits[i + 1])]

    def _slice_within_rows(self, key):
        """rt[:, key] for a slice `key`: each row sliced as a Python list is (a step included)."""
        splits = self._splits
        order, lengths = [], []
        for i in range(self.nrows_int()):
            lo, hi = int(splits[i]), int(splits[i + 1])
            picked = range(lo, hi)[key]
            order.extend(picked)
            lengths.append(len(picked))
        from ._ops import gather
        return RaggedTensor.from_row_lengths(gather(self._values, np.array(order, np.int64)),
                                             np.array(lengths, np.int64))

    def __iter__(self):
        return iter(self._rows())

    def __len__(self):
        return self.nrows_int()

    def with_values(self, new_values):
        return RaggedTensor(new_values, self._splits, validate=False)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(convert_to_tensor(new_values))

    # -- arithmetic on the flat values ---------------------------------------------------------
    def _binary(self, other, fn):
        if isinstance(other, RaggedTensor):
            if [s.numpy().tolist() for s in other.nested_row_splits] != \
                    [s.numpy().tolist() for s in self.nested_row_splits]:
                raise ValueError("Ragged tensors of different row partitions cannot be combined elementwise")
            return self.with_flat_values(fn(self.flat_values, other.flat_values))
        other = convert_to_tensor(other, dtype=self.dtype)
        if other.shape.rank:
            raise NotImplementedError("kiln.RaggedTensor combines with scalars and with RaggedTensors of the same "
                                      "rows only")
        return self.with_flat_values(fn(self.flat_values, other))

    def __add__(self, o):
        return self._binary(o, lambda a, b: a + b)

    def __radd__(self, o):
        return self._binary(o, lambda a, b: b + a)

    def __sub__(self, o):
        return self._binary(o, lambda a, b: a - b)

    def __rsub__(self, o):
        return self._binary(o, lambda a, b: b - a)

    def __mul__(self, o):
        return self._binary(o, lambda a, b: a * b)

    def __rmul__(self, o):
        return self._binary(o, lambda a, b: b * a)

    def __truediv__(self, o):
        return self._binary(o, lambda a, b: a / b)

    def __neg__(self):
        return self.with_flat_values(-self.flat_values)

    # -- reductions over rows (axis 1 of ragged rank 1) ----------------------------------------
    def _reduce(self, kind, axis, keepdims):
        from . import math as _math
        from ._ops import reduce_max, reduce_min, reduce_sum
        whole = {"sum": reduce_sum, "max": reduce_max, "min": reduce_min}
        if axis is None:
            if kind == "mean":
                return _math.reduce_mean(self.flat_values)
            return whole[kind](self.flat_values)
        if axis != 1 or isinstance(self._values, RaggedTensor) or keepdims:
            raise NotImplementedError("kiln.RaggedTensor reduces over its rows (axis=1, ragged rank 1) only")
        ids, n = self.value_rowids(), self.nrows_int()
        if kind == "sum":
            return _math.unsorted_segment_sum(self._values, ids, n)
        if kind == "max":
            return _math.unsorted_segment_max(self._values, ids, n)
        if kind == "min":
            return _math.unsorted_segment_min(self._values, ids, n)
        from ._ops import cast, reshape
        total = _math.unsorted_segment_sum(self._values, ids, n)
        counts = cast(self.row_lengths(), total.dtype)
        return total / reshape(counts, [n] + [1] * (total.shape.rank - 1))

    def __repr__(self):
        # TensorFlow's text: numpy's printing of numpy(), commas between elements, every nested
        # array printed the same way (so uniform rows print as a matrix, on several lines).
        with np.printoptions(formatter={"all": _element_text}):
            return "<%s.RaggedTensor %s>" % (_public_name.prefix, _element_text(self.numpy()))

    __str__ = __repr__


def _element_text(x):
    if isinstance(x, np.ndarray):
        # An empty array prints as "[]" whatever its shape; its list shows [[], [], []].
        return np.array2string(x, separator=", ") if x.size else repr(x.tolist())
    return str(x)


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=_dtypes.int64):
    """A RaggedTensor from nested Python lists; the ragged dimensions are every nesting level
    but the innermost scalars (ragged_rank = depth - 1, as TensorFlow's default)."""
    def depth(x):
        return 1 + max((depth(v) for v in x), default=0) if isinstance(x, (list, tuple)) else 0

    d = depth(pylist)
    if d < 2:  # nothing ragged: TensorFlow gives a plain tensor
        return convert_to_tensor(pylist, dtype=dtype)
    levels = (d - 1) if ragged_rank is None else int(ragged_rank)

    def flatten(rows, level):
        if level == 0:
            return rows, []
        splits, flat = [0], []
        for r in rows:
            flat.extend(r)
            splits.append(len(flat))
        inner, more = flatten(flat, level - 1)
        return inner, [splits] + more

    flat, all_splits = flatten(list(pylist), levels)
    values = convert_to_tensor(flat if flat else np.zeros([0]), dtype=dtype) if flat or dtype is not None else \
        convert_to_tensor(np.zeros([0], np.float32))
    return RaggedTensor.from_nested_row_splits(values, all_splits)


def _as_ragged(v, dtype):
    """v as a 2-D RaggedTensor (a dense tensor or nested list becomes one row per row)."""
    if isinstance(v, RaggedTensor):
        return v
    if isinstance(v, (list, tuple)):
        return constant(v, dtype=dtype)
    t = convert_to_tensor(v, dtype=dtype)
    if t.shape.rank != 2:
        raise NotImplementedError("kiln.concat of RaggedTensors takes 2-D tensors with them, got rank %s"
                                  % t.shape.rank)
    return RaggedTensor.from_tensor(t)


def concat(values, axis):
    """tf.concat of 2-D ragged tensors (and dense ones): axis 0 stacks their rows, axis 1 joins
    each row's values (every input has as many rows)."""
    dtype = next(v.dtype for v in values if isinstance(v, RaggedTensor))
    parts = [_as_ragged(v, dtype) for v in values]
    for p in parts:
        if p.ragged_rank != 1:
            raise NotImplementedError("kiln.concat of RaggedTensors: ragged rank 1 only")
    lengths = [p.row_lengths().numpy() for p in parts]
    if axis in (0, -2):
        lengths = np.concatenate(lengths)
    elif axis in (1, -1):
        if len({len(n) for n in lengths}) != 1:
            raise ValueError("Input tensors at index 0 (=x) and 1 (=y) must have the same number of rows")
        lengths = np.sum(lengths, axis=0)
    else:
        raise ValueError("axis=%d out of bounds: expected -2<=axis<2" % axis)
    from ._ops import concat as dense_concat, gather
    flat = dense_concat([p.values for p in parts], 0)
    return RaggedTensor.from_row_lengths(gather(flat, _concat_order(parts, axis)), lengths.astype(np.int64))


def _concat_order(parts, axis):
    offsets = np.cumsum([0] + [int(p.values.shape[0]) for p in parts])
    splits = [p.row_splits.numpy() for p in parts]
    if axis in (0, -2):
        return np.arange(offsets[-1], dtype=np.int64)
    order = []
    for i in range(parts[0].nrows_int()):
        for k, s in enumerate(splits):
            order.extend(range(offsets[k] + s[i], offsets[k] + s[i + 1]))
    return np.array(order, np.int64)


def tile(rt, multiples):
    """tf.tile of a 2-D ragged tensor: rows repeated multiples[0] times, each row's values
    multiples[1] times."""
    if rt.ragged_rank != 1 or rt.values.shape.rank != 1 or len(multiples) != 2:
        raise NotImplementedError("kiln.tile of a RaggedTensor: 2-D ragged tensors only")
    rows_rep, cols_rep = multiples
    splits = rt.row_splits.numpy()
    order = []
    lengths = []
    for _ in range(rows_rep):
        for i in range(rt.nrows_int()):
            row = list(range(splits[i], splits[i + 1]))
            order.extend(row * cols_rep)
            lengths.append(len(row) * cols_rep)
    from ._ops import gather
    return RaggedTensor.from_row_lengths(gather(rt.values, np.array(order, np.int64)) if order else rt.values[:0],
                                         np.array(lengths, np.int64))


def _register():
    from . import _ops
    _ops._ragged_type[0] = RaggedTensor


_register()

# Elementwise functions of one tensor that are not built by _ops._unary: each maps over a
# RaggedTensor's values (TensorFlow's ragged dispatch). Installed by kiln/__init__.py.
_ELEMENTWISE_UNARY = ("abs", "acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "conj", "cos", "cosh",
                      "digamma", "erf", "erfc", "erfinv", "expm1", "imag", "is_finite", "is_inf", "is_nan", "lgamma",
                      "log1p", "log_sigmoid", "real", "rint", "sin", "sinh", "softplus", "softsign", "tan", "elu",
                      "selu", "gelu", "silu", "leaky_relu", "cast", "saturate_cast", "sign", "reciprocal")


def per_value(fn):
    """fn(x, ...) for an elementwise function of one tensor, extended so that a RaggedTensor x
    keeps its rows: fn maps over its flat values (TensorFlow's ragged dispatch)."""
    import functools

    if getattr(fn, "_kiln_ragged_dispatch", False):
        return fn

    @functools.wraps(fn)
    def dispatch(x, *args, **kwargs):
        if type(x) is RaggedTensor:
            return x.with_flat_values(fn(x.flat_values, *args, **kwargs))
        return fn(x, *args, **kwargs)

    dispatch._kiln_ragged_dispatch = True
    return dispatch


def install_dispatch(*modules):
    """Wraps each module's elementwise functions of one tensor with per_value."""
    for module in modules:
        for name in _ELEMENTWISE_UNARY:
            fn = getattr(module, name, None)
            if callable(fn):
                setattr(module, name, per_value(fn))


def map_flat_values(op, *args, **kwargs):
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        return op(*args, **kwargs)
    flat = [a.flat_values if isinstance(a, RaggedTensor) else a for a in args]
    flat_kwargs = {k: v.flat_values if isinstance(v, RaggedTensor) else v for k, v in kwargs.items()}
    return ragged[0].with_flat_values(op(*flat, **flat_kwargs))


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    s = _splits(splits)
    return convert_to_tensor(np.repeat(np.arange(s.size - 1, dtype=np.int64), np.diff(s)))
