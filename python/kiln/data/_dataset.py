"""kiln.data.Dataset: tf.data.Dataset over kiln's C++ pipeline runtime. A Dataset is a C++
dataset (flat components) plus the structure its elements have in Python (element_spec:
tuples, dicts and namedtuples of TensorSpecs, as TensorFlow nests them)."""
import atexit
import collections
import collections.abc
import itertools
import json
import os
import time
import weakref
import traceback

import numpy as np

from .. import _core, _function, nest
from .._convert import convert_to_tensor
from .._dtypes import as_dtype, int64, string
from .._shape import TensorShape
from .._spec import TensorSpec, TypeSpec

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INT64_MAX = 2 ** 63 - 1


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _normalize(value):
    """A dataset's input as TensorFlow takes it: tuples and dicts nest, everything else (a list
    included) is one tensor."""
    if isinstance(value, collections.abc.Mapping):
        return type(value)((k, _normalize(v)) for k, v in value.items())
    if _is_namedtuple(value):
        return type(value)(*[_normalize(v) for v in value])
    if isinstance(value, tuple):
        return tuple(_normalize(v) for v in value)
    if isinstance(value, Dataset):
        raise TypeError("a Dataset cannot be a component of a dataset's element in kiln yet")
    kind = type(value).__name__
    if kind in ("RaggedTensor", "SparseTensor"):
        raise TypeError("kiln.data does not take a %s component yet; convert it with to_tensor() first" % kind)
    return convert_to_tensor(value)


class DatasetSpec:
    """tf.data.DatasetSpec: the type of an element component that is itself a dataset (what
    window gives), with that dataset's element_spec."""

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = TensorShape(dataset_shape)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def shape(self):
        return self._dataset_shape

    @property
    def dtype(self):  # the component's dtype in the pipeline: a variant holding the dataset
        from .._dtypes import variant
        return variant

    def __eq__(self, other):
        return type(other) is DatasetSpec and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return "DatasetSpec(%r, %r)" % (self._element_spec, self._dataset_shape)


def _is_dataset_spec(spec):
    return isinstance(spec, DatasetSpec)


def _unpacker(structure):
    """A function from an element's flat components to the element: what an iterator calls per
    element, so the structure is read once here, not per element. A component whose spec is a
    DatasetSpec is a variant holding a dataset, handed out as a Dataset."""
    leaves = nest.flatten(structure)
    if any(_is_dataset_spec(s) for s in leaves):
        def unpack(flat):
            flat = [Dataset(_core.data_from_variant(t), s.element_spec, "VariantDataset") if _is_dataset_spec(s)
                    else t for s, t in zip(leaves, flat)]
            return nest.pack_sequence_as(structure, flat)
        return unpack
    if not nest.is_nested(structure):
        return lambda flat: flat[0]
    if type(structure) is tuple and not any(nest.is_nested(s) for s in structure):
        return tuple  # (x, y): the common element, without a walk of the structure
    return lambda flat: nest.pack_sequence_as(structure, flat)


# The Python callables the C++ pipeline calls (a source's maker and each pass's puller) are
# held here, by token; C++ holds only a _PythonRef. A callable often reaches the user's module
# globals (a generator function's __globals__), which hold the dataset, whose C++ stages would
# otherwise hold the callable: a cycle through C++ that Python's collector cannot see, so the
# dataset would never be freed (and nanobind would report it at exit).
_python_callables = {}
_next_token = [0]
_live_iterators = weakref.WeakSet()


@atexit.register
def _stop_pipelines():
    """At exit, while the interpreter still runs threads: close every live iterator (joining its
    pipeline's threads, which may be waiting for the GIL in a Python source), then drop the
    callables (and the datasets and iterators they hold) before the module is torn down.
    An iterator a traced function captured outlives this; a pipeline thread of its that is
    waiting for the GIL gets it during the pause below, finds its callable gone and ends, so no
    thread is left to take the GIL while the interpreter finalizes (that aborts the process)."""
    had_sources = bool(_python_callables)
    for it in list(_live_iterators):
        it._it.close()
    _python_callables.clear()
    if had_sources:
        time.sleep(0.05)


TypeSpec.register(DatasetSpec)


class _PythonRef:
    __slots__ = ("_token",)

    def __init__(self, fn):
        self._token = _next_token[0]
        _next_token[0] += 1
        _python_callables[self._token] = fn

    def __call__(self, *args):
        return _python_callables[self._token](*args)

    def __del__(self):
        try:
            _python_callables.pop(self._token, None)
        except (AttributeError, TypeError):  # the module is being torn down at exit
            pass


# Elements each open inner dataset of a parallel interleave computes ahead of its turn.
_INTERLEAVE_PREFETCH = 2


class _InnerMaker:
    """interleave's map_func as the C++ stage calls it: flat components in, a core dataset out."""

    def __init__(self, map_func, outer_structure):
        self.map_func = map_func
        self.unpack = _unpacker(outer_structure)

    def __call__(self, flat):
        inner = _call_with_element(self.map_func, self.unpack(flat))
        if not isinstance(inner, Dataset):
            raise TypeError("`map_func` must return a `Dataset` object. Got %s" % type(inner).__name__)
        return inner._pipeline()


def _python_source(specs, make_source, cardinality):
    """A C++ source dataset whose passes call make_source() once and then its result per element."""
    return _core.data_from_callback(_core_specs(specs), _PythonRef(lambda: _PythonRef(make_source())), cardinality)


def _specs_from_core(core_specs):
    return [TensorSpec(TensorShape(dims), dtype) for dims, dtype in core_specs]


def _core_specs(specs):
    return [(None if s.shape.rank is None else [(-1 if d is None else d) for d in s.shape.as_list()], s.dtype)
            for s in specs]


def _call_with_element(func, element):
    """TensorFlow's convention: a tuple element is spread over the function's arguments."""
    if isinstance(element, tuple) and not _is_namedtuple(element):
        return func(*element)
    return func(element)


def _to_tensors(structure):
    """A function's result as an element: tensors, nested as returned (lists become tensors)."""
    if isinstance(structure, (Dataset,)):
        raise TypeError("a map function must return tensors, not a Dataset (use flat_map or interleave)")
    if isinstance(structure, list):
        # TensorFlow's rule: a returned list (a py_function's outputs, say) is a tuple of
        # components, not one tensor to stack; tf.stack it to get one tensor.
        structure = tuple(structure)
    return _normalize(structure)


def _converted(func):
    """func as AutoGraph converts it, so `if`/`for` on tensors trace into graph control flow."""
    from .. import autograph
    return autograph.to_graph(func)


class _Traced:
    """A Python function over a dataset's elements, traced once into a kiln graph: the C++
    ConcreteFunction the pipeline runs, and the structure of what it returns."""

    def __init__(self, func, element_spec, what):
        from .._function import function

        structure = element_spec
        if any(_is_dataset_spec(s) for s in nest.flatten(element_spec)):
            raise NotImplementedError("kiln.data: %s over elements that are datasets (from window) is not "
                                      "implemented yet; use flat_map (e.g. flat_map(lambda w: w.batch(n)))" % what)
        converted = _converted(func)
        self.output = None

        def flat(*tensors):
            element = nest.pack_sequence_as(structure, tensors)
            result = _to_tensors(_call_with_element(converted, element))
            self.output = result
            return nest.flatten(result)

        flat.__name__ = "%s_%s" % (what, getattr(func, "__name__", "fn").replace("<", "").replace(">", ""))
        self.concrete = function(flat, autograph=False).get_concrete_function(*nest.flatten(element_spec))

    @property
    def core(self):
        return self.concrete._core


class Options:
    """tf.data.Options: kept with the dataset; kiln reads `deterministic` (the default of
    map's `deterministic`) and `threading` (private_threadpool_size caps each parallel map's
    threads; max_intra_op_parallelism=1 runs the pipeline's kernels single-threaded)."""

    def __init__(self):
        self.deterministic = None
        self.threading = ThreadingOptions()
        self.experimental_deterministic = None
        self.experimental_optimization = _Anything()
        self.experimental_distribute = _Anything()
        self.autotune = _Anything()
        self.experimental_slack = False
        self.experimental_external_state_policy = None

    def merge(self, other):
        merged = Options()
        for source in (self, other):
            for k, v in vars(source).items():
                if isinstance(v, ThreadingOptions):  # merged field by field, as TensorFlow does
                    for field, value in vars(v).items():
                        setattr(merged.threading, field, value)
                elif v is not None:
                    setattr(merged, k, v)
        return merged


def _int_option(name):
    """An option that holds an int once set (None until then), refusing other types as
    TensorFlow's options do."""
    def get(self):
        return self.__dict__.get(name)

    def set(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("Property \"%s\" must be of type %s, got: %s (type: %s)" % (name, int, value, type(value)))
        self.__dict__[name] = value

    return property(get, set)


class ThreadingOptions:
    """tf.data.ThreadingOptions (Options.threading)."""

    private_threadpool_size = _int_option("private_threadpool_size")
    max_intra_op_parallelism = _int_option("max_intra_op_parallelism")


class _Anything:
    """An options group kiln accepts and keeps but does not act on."""


class DatasetV2:
    """TensorFlow's name for the dataset base class, which libraries look for in a dataset's
    class hierarchy (Keras's data adapters)."""


class Dataset(DatasetV2):
    """tf.data.Dataset: build with the static constructors, transform with the methods, iterate
    with `for` (eagerly)."""

    def __init__(self, core, structure, kind=None, options=None):
        self._core_dataset = core
        self._structure = structure  # nest of TensorSpec
        self._kind = kind or core.kind
        self._options = options

    # -- what it is
    @property
    def element_spec(self):
        return self._structure

    def cardinality(self):
        return convert_to_tensor(self._core_dataset.cardinality(), int64)

    def __len__(self):
        n = self._core_dataset.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __repr__(self):
        return "<%s element_spec=%r>" % (self._python_name(), self._structure)

    def _python_name(self):
        cls = type(self).__name__
        if cls != "Dataset":
            return cls
        return _PYTHON_NAMES.get(self._kind, "_" + self._kind)

    def options(self):
        return self._options or Options()

    def with_options(self, options, name=None):
        del name
        merged = options if self._options is None else self._options.merge(options)
        return Dataset(self._core_dataset, self._structure, self._kind, merged)

    def _pipeline(self):
        """The C++ dataset to iterate: under the options' threading, which (as in TensorFlow)
        apply to every stage of the pipeline, those added after with_options too."""
        threading = self._options.threading if self._options is not None else None
        pool = getattr(threading, "private_threadpool_size", None)
        intra = getattr(threading, "max_intra_op_parallelism", None)
        if not pool and not intra:
            return self._core_dataset
        return _core.data_with_threading(self._core_dataset, int(pool or 0), int(intra or 0))

    def _derive(self, core, structure=None, kind=None):
        return Dataset(core, self._structure if structure is None else structure, kind, self._options)

    def _flat_specs(self):
        return nest.flatten(self._structure)

    # -- sources
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        del name
        structure = _normalize(tensors)
        flat = nest.flatten(structure)
        _require_concrete(flat)
        for t in flat:
            if t.shape.rank == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        first = None
        for t in flat:
            if first is not None and t.shape[0] != first:
                raise ValueError("Dimensions %d and %d are not compatible" % (first, t.shape[0]))
            first = t.shape[0]
        core = _core.data_from_tensor_slices(flat)
        return Dataset(core, nest.pack_sequence_as(structure, _specs_from_core(core.element_spec)))

    @staticmethod
    def from_tensors(tensors, name=None):
        del name
        structure = _normalize(tensors)
        _require_concrete(nest.flatten(structure))
        core = _core.data_from_tensors(nest.flatten(structure))
        return Dataset(core, nest.pack_sequence_as(structure, _specs_from_core(core.element_spec)))

    @staticmethod
    def range(*args, output_type=int64, name=None):
        del name
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid arguments to RangeDataset: %s" % (args,))
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        start, stop, step = (_python_int(v) for v in (start, stop, step))
        core = _core.data_range(start, stop, step, as_dtype(output_type))
        return Dataset(core, _specs_from_core(core.element_spec)[0])

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None, name=None):
        del name
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments can only be used without "
                                "`output_signature`.")
            structure = output_signature
        else:
            if output_types is None:
                raise TypeError("To specify the output signature you need to provide either the `output_signature` "
                                "argument or the `output_types` argument.")
            if output_shapes is None:
                output_shapes = nest.map_structure(lambda _: None, output_types)
            shapes = _flatten_up_to(output_types, output_shapes)
            structure = nest.pack_sequence_as(
                output_types, [TensorSpec(TensorShape(s), t) for t, s in zip(nest.flatten(output_types), shapes)])
        specs = nest.flatten(structure)
        for s in specs:
            if not isinstance(s, TensorSpec):
                raise TypeError("from_generator's output_signature must be TensorSpecs in kiln, got %r" % (s,))
        call_args = tuple(args) if args is not None else ()

        def make_source():
            iterator = iter(generator(*[_as_python(a) for a in call_args]))

            def pull():
                try:
                    value = next(iterator)
                except StopIteration:
                    return None
                except Exception as e:  # noqa: BLE001 -- TensorFlow reports any error the generator raises
                    _raise_invalid("%s: %s\nTraceback (most recent call last):\n\n%s"
                                   % (type(e).__name__, e, "".join(traceback.format_tb(e.__traceback__))))
                return _generated_element(value, structure, specs)

            return pull

        core = _python_source(specs, make_source, UNKNOWN_CARDINALITY)
        return Dataset(core, structure, kind="FlatMapDataset")

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The files matching the pattern(s), as a dataset of strings: shuffled unless shuffle=False
        (TensorFlow's default), sorted otherwise. No match is InvalidArgumentError."""
        del name
        import glob

        patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
        patterns = [p.decode() if isinstance(p, bytes) else str(_as_python(p) if isinstance(p, _core.Tensor) else p)
                    for p in patterns]
        patterns = [p.decode() if isinstance(p, bytes) else p for p in patterns]
        matches = sorted(set(f for p in patterns for f in glob.glob(p)))
        if not matches:
            _raise_invalid("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'No files "
                           "matched pattern: %s'" % ", ".join(patterns))
        ds = Dataset.from_tensor_slices(convert_to_tensor(matches, string))
        if shuffle is None or shuffle:
            ds = ds.shuffle(len(matches), seed=seed)
        return ds

    @staticmethod
    def zip(*args, datasets=None, name=None):
        del name
        if datasets is None:
            datasets = args[0] if len(args) == 1 else tuple(args)
        elif args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        leaves = nest.flatten(datasets)
        for d in leaves:
            if not isinstance(d, Dataset):
                raise TypeError("Invalid `datasets`. `datasets` is expected to be a (nested) structure of "
                                "`tf.data.Dataset` objects. Encountered object with type %s." % type(d).__name__)
        core = _core.data_zip([d._core_dataset for d in leaves])
        structure = nest.pack_sequence_as(datasets, [d._structure for d in leaves])
        return Dataset(core, structure)

    # -- transformations that run a function
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        del name
        traced = _Traced(map_func, self._structure, "map")
        if deterministic is None:
            deterministic = self.options().deterministic
        parallel = 0 if num_parallel_calls is None else int(num_parallel_calls)
        core = _core.data_map(self._core_dataset, traced.core, parallel, True if deterministic is None else
                              bool(deterministic))
        structure = nest.pack_sequence_as(traced.output, _specs_from_core(core.element_spec))
        return self._derive(core, structure, "ParallelMapDataset" if num_parallel_calls is not None else "MapDataset")

    def filter(self, predicate, name=None):
        del name
        traced = _Traced(predicate, self._structure, "filter")
        _check_predicate(traced)
        return self._derive(_core.data_filter(self._core_dataset, traced.core))

    def take_while(self, predicate, name=None):
        del name
        traced = _Traced(predicate, self._structure, "take_while")
        _check_predicate(traced)
        return self._derive(_core.data_take_while(self._core_dataset, traced.core))

    # -- transformations of order and grouping
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        del num_parallel_calls, deterministic, name
        core = _core.data_batch(self._core_dataset, int(batch_size), bool(drop_remainder))
        return self._derive(core, nest.pack_sequence_as(self._structure, _specs_from_core(core.element_spec)))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        del name
        specs = self._flat_specs()
        if padded_shapes is None:
            shapes = [None if s.shape.rank is None else [None] * s.shape.rank for s in specs]
        else:
            shapes = [_shape_list(s) for s in _flatten_up_to(self._structure, padded_shapes)]
        if padding_values is None:
            values = [convert_to_tensor(b"" if s.dtype == string else 0, s.dtype) for s in specs]
        else:
            values = [convert_to_tensor(v, s.dtype) for v, s in zip(_flatten_up_to(self._structure, padding_values),
                                                                    specs)]
        core = _core.data_padded_batch(self._core_dataset, int(batch_size), shapes, values, bool(drop_remainder))
        return self._derive(core, nest.pack_sequence_as(self._structure, _specs_from_core(core.element_spec)))

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements; each element is the element structure with every
        component a Dataset of that component's values (flat_map them, e.g. w.batch(size))."""
        del name
        size = int(size)
        core = _core.data_window(self._core_dataset, size, size if shift is None else int(shift), int(stride),
                                 bool(drop_remainder))
        structure = nest.map_structure(lambda s: DatasetSpec(s, TensorShape([])), self._structure)
        return self._derive(core, structure)

    def unbatch(self, name=None):
        del name
        for s in self._flat_specs():
            if s.shape.rank == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
        core = _core.data_unbatch(self._core_dataset)
        return self._derive(core, nest.pack_sequence_as(self._structure, _specs_from_core(core.element_spec)))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        del name
        from .._random import get_seed

        s1, s2 = get_seed(seed)
        combined = -1 if s1 is None and s2 is None else ((int(s1 or 0) << 31) ^ int(s2 or 0)) & _INT64_MAX
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE:
            buffer_size = 1 << 20
        return self._derive(_core.data_shuffle(self._core_dataset, buffer_size, combined,
                                               bool(reshuffle_each_iteration)))

    def repeat(self, count=None, name=None):
        del name
        return self._derive(_core.data_repeat(self._core_dataset, -1 if count is None else int(count)))

    def take(self, count, name=None):
        del name
        return self._derive(_core.data_take(self._core_dataset, int(count)))

    def skip(self, count, name=None):
        del name
        return self._derive(_core.data_skip(self._core_dataset, int(count)))

    def prefetch(self, buffer_size, name=None):
        del name
        return self._derive(_core.data_prefetch(self._core_dataset, int(buffer_size)), kind="PrefetchDataset")

    def cache(self, filename="", name=None):
        del name
        filename = _filenames(filename)[0] if not isinstance(filename, str) else filename
        if filename:  # written by the first complete pass to <filename>.kiln-cache, then read
            return self._derive(_core.data_cache_file(self._core_dataset, filename))
        return self._derive(_core.data_cache(self._core_dataset))

    # -- on disk: TensorFlow's saved-dataset directory, which either library loads
    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        if checkpoint_args is not None:
            raise NotImplementedError("kiln.data: Dataset.save(checkpoint_args=...) (a resumable save) is not "
                                      "implemented; save without it")
        for spec in self._flat_specs():
            if _is_dataset_spec(spec):
                raise ValueError("Dataset.save: elements that hold datasets (%r) cannot be saved" % (spec,))
        structure = json.dumps(_structure_json(self._structure))
        dataset, tagged = self, False
        if shard_func is not None:
            dataset, tagged = self.map(_ShardTagger(shard_func)), True
        _core.data_save(dataset._pipeline(), os.fspath(path), _compression(compression), structure, tagged)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None, wait=False):
        del wait  # a save kiln reads has finished (its metadata says so)
        if reader_func is not None:
            raise NotImplementedError("kiln.data: Dataset.load(reader_func=...) is not implemented; kiln reads the "
                                      "shards as TensorFlow's default reader_func does")
        path = os.fspath(path)
        if element_spec is None:
            element_spec = _structure_from_json(json.loads(_core.data_saved_structure(path)))
        flat = nest.flatten(element_spec)
        for spec in flat:
            if not isinstance(spec, TensorSpec):
                raise TypeError("Dataset.load: element_spec must be a structure of tf.TensorSpec, got %r" % (spec,))
        core = _core.data_load(path, _compression(compression), _core_specs(flat))
        return Dataset(core, element_spec)

    def concatenate(self, dataset, name=None):
        del name
        nest.assert_same_structure(self._structure, dataset._structure)
        for a, b in zip(self._flat_specs(), dataset._flat_specs()):
            if a.dtype != b.dtype:
                raise TypeError("Incompatible dataset elements:\n  %r vs.   %r" % (self._structure, dataset._structure))
        core = _core.data_concatenate(self._core_dataset, dataset._core_dataset)
        return self._derive(core, nest.pack_sequence_as(self._structure, _specs_from_core(core.element_spec)))

    def enumerate(self, start=0, name=None):
        del name
        return Dataset.zip((Dataset.range(int(start), _INT64_MAX), self))

    def apply(self, transformation_func):
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object.")
        return result

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """The batched elements regrouped into batches of batch_size (an int, or a list of sizes
        used in turn)."""
        del name
        if isinstance(batch_size, (list, tuple)) or (isinstance(batch_size, _core.Tensor) and batch_size.shape.rank):
            sizes = [int(b) for b in (batch_size.numpy() if isinstance(batch_size, _core.Tensor) else batch_size)]
            return self._rebatch_cycling(sizes, bool(drop_remainder))
        rows = self.unbatch().batch(int(batch_size), drop_remainder=drop_remainder)
        return Dataset(rows._core_dataset, rows._structure, "RebatchDataset", self._options)

    def _rebatch_cycling(self, sizes, drop_remainder):
        from .._ops import stack
        rows = self.unbatch()
        structure = nest.map_structure(lambda s: TensorSpec([None] + s.shape.as_list()[1:], s.dtype)
                                       if s.shape.rank else s, self._structure)

        def make_source():
            it = iter(rows)
            turn = itertools.cycle(sizes)

            def pull():
                want = next(turn)
                got = list(itertools.islice(it, want))
                if not got or (drop_remainder and len(got) < want):
                    return None
                return [stack(list(column)) for column in zip(*[nest.flatten(e) for e in got])]

            return pull

        return Dataset(_python_source(nest.flatten(structure), make_source, UNKNOWN_CARDINALITY), structure,
                       "RebatchDataset", self._options)

    def unique(self, name=None):
        """Each distinct element once, in first-seen order (int32, int64 or string scalars)."""
        del name
        spec = self._structure
        if not isinstance(spec, TensorSpec) or spec.dtype.name not in ("int32", "int64", "string"):
            raise TypeError("`tf.data.Dataset.unique` does not support type %r -- only `tf.int32`, `tf.int64`, and "
                            "`tf.string` are supported." % (getattr(spec, "dtype", spec),))
        outer = self

        def make_source():
            it = iter(outer)
            seen = set()

            def pull():
                for element in it:
                    key = element.numpy()
                    key = key.tobytes() if hasattr(key, "tobytes") and not isinstance(key, bytes) else key
                    if key not in seen:
                        seen.add(key)
                        return [element]
                return None

            return pull

        return Dataset(_python_source([spec], make_source, UNKNOWN_CARDINALITY), spec, "UniqueDataset", self._options)

    def shard(self, num_shards, index, name=None):
        """Every num_shards-th element, starting at `index` (TensorFlow's shard)."""
        del name
        n, i = int(num_shards), int(index)
        if n <= 0:
            _raise_invalid("Number of shards must be greater than zero (currently num_shards = %d)." % n)
        if not 0 <= i < n:
            _raise_invalid("Index must be between 0 and %d (currently index = %d)." % (n - 1, i))
        kept = self.enumerate().filter(lambda k, _: k % n == i).map(lambda _, element: element)
        return Dataset(kept._core_dataset, self._structure, "ShardDataset", self._options)

    @staticmethod
    def counter(start=0, step=1, dtype=int64, name=None):
        """start, start + step, ... forever (tf.data.Dataset.counter / experimental.Counter)."""
        del name
        dtype = as_dtype(dtype)
        first = convert_to_tensor(start, dtype)
        delta = convert_to_tensor(step, dtype)
        return Dataset.from_tensors(convert_to_tensor(0, dtype)).repeat().scan(
            first, lambda state, _: (state + delta, state))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """Element k comes from datasets[choice k] (choice_dataset: int64 scalars)."""
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        spec = choice_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != int64 or spec.shape.rank != 0:
            raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of `tf.int64` "
                            "dtype, but got %r." % (spec,))
        return _chosen(datasets, lambda: (int(c) for c in choice_dataset), stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Each element from a dataset drawn at random by `weights` (uniform by default); an
        exhausted dataset leaves the draw (or ends it with stop_on_empty_dataset). The draws are
        kiln's random stream, not TensorFlow's."""
        del rerandomize_each_iteration
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        w = np.ones(len(datasets)) if weights is None else np.asarray(
            weights.numpy() if isinstance(weights, _core.Tensor) else weights, dtype=np.float64)
        if w.shape != (len(datasets),):
            raise ValueError("`weights` must have one weight per dataset")

        def choices():
            rng = np.random.default_rng(seed)
            while True:
                yield int(rng.choice(len(datasets), p=w / w.sum()))

        return _chosen(datasets, choices, stop_on_empty_dataset, weights=w)

    # -- stages that run Python per element (their function makes datasets or carries state)
    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        """Elements grouped by key_func (an int64 scalar); each group of window_size elements (or
        window_size_func(key)) becomes reduce_func(key, window) (a dataset), whose elements are
        output; at the end the unfilled groups go out in key order."""
        del name
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                             "specified.")
        size_of = (lambda _: window_size) if window_size_func is None else window_size_func

        def key_of(element):
            key = convert_to_tensor(_call_with_element(key_func, element))
            if key.dtype != int64 or key.shape.rank != 0:
                raise ValueError("`key_func` must return a single tf.int64 scalar tensor. Got type=%s and shape=%s"
                                 % (key.dtype.name, key.shape))
            return int(key.numpy())

        return self._grouped(key_of, reduce_func, size_of)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        """Batches of elements of similar length: bucket i holds lengths below
        bucket_boundaries[i] (and at least the one before), batched bucket_batch_sizes[i] at a
        time and padded to the longest in the batch (or to the bucket's boundary - 1)."""
        del name
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1")
        if any(b2 <= b1 for b1, b2 in zip(boundaries, boundaries[1:])):
            raise ValueError("bucket_boundaries must be sorted in increasing order")

        def key_of(element):
            length = int(convert_to_tensor(_call_with_element(element_length_func, element)).numpy())
            if pad_to_bucket_boundary and length >= max(boundaries):
                _raise_invalid("When pad_to_bucket_boundary=True, elements must have length < "
                               "max(bucket_boundaries).")
            return sum(1 for b in boundaries if length >= b)

        def reduce(key, window):
            key = int(key.numpy())
            if no_padding:
                return window.batch(sizes[key], drop_remainder=drop_remainder)
            shapes = padded_shapes
            if pad_to_bucket_boundary:
                fill = boundaries[key] - 1 if key < len(boundaries) else None  # the last bucket holds none
                base = padded_shapes if padded_shapes is not None else nest.map_structure(
                    lambda s: s.shape, window.element_spec)
                shapes = nest.map_structure(
                    lambda s: [fill if d is None else d for d in TensorShape(s).as_list()], base,
                    ) if not isinstance(base, TensorShape) else [fill if d is None else d for d in base.as_list()]
            return window.padded_batch(sizes[key], padded_shapes=shapes, padding_values=padding_values,
                                       drop_remainder=drop_remainder)

        return self._grouped(key_of, reduce, lambda key: sizes[int(key)], probe_keys=range(len(sizes)))

    def _grouped(self, key_of, reduce_func, size_of, probe_keys=(0,)):
        outer = self
        structure = self._structure
        out_structure = None
        for key in probe_keys:  # the spec every key's reduced dataset satisfies (TensorFlow traces once)
            probe = reduce_func(convert_to_tensor(key, int64), _elements_dataset([], structure))
            if not isinstance(probe, Dataset):
                raise TypeError("`reduce_func` must return a `Dataset` object. Got %s" % type(probe).__name__)
            out_structure = probe.element_spec if out_structure is None else nest.map_structure(
                _common_spec, out_structure, probe.element_spec)

        def make_source():
            elements = iter(outer)
            groups = {}
            state = {"current": None, "input_done": False}

            def reduced(key):
                window = _elements_dataset(groups.pop(key), structure)
                return iter(reduce_func(convert_to_tensor(key, int64), window))

            def pull():
                while True:
                    if state["current"] is not None:
                        try:
                            return nest.flatten(next(state["current"]))
                        except StopIteration:
                            state["current"] = None
                    if not state["input_done"]:
                        try:
                            element = next(elements)
                        except StopIteration:
                            state["input_done"] = True
                            continue
                        key = key_of(element)
                        groups.setdefault(key, []).append(element)
                        if len(groups[key]) >= int(convert_to_tensor(size_of(convert_to_tensor(key, int64))).numpy()):
                            state["current"] = reduced(key)
                        continue
                    if not groups:
                        return None
                    state["current"] = reduced(min(groups))

            return pull

        core = _python_source(nest.flatten(out_structure), make_source, UNKNOWN_CARDINALITY)
        return self._derive(core, out_structure, kind="GroupByWindowDataset")

    def flat_map(self, map_func, name=None):
        del name
        return self.interleave(map_func, cycle_length=1, block_length=1, _kind="FlatMapDataset")

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None, deterministic=None,
                   name=None, _kind=None):
        """TensorFlow's order (`cycle_length` inner datasets visited in turn, `block_length`
        elements from each), run by a C++ stage: map_func is called (with the GIL) once per
        input element to make an inner dataset; with num_parallel_calls each open inner
        dataset runs ahead on a thread of its own, and the order stays the same (a
        nondeterministic interleave may give any order; kiln gives this one)."""
        del deterministic, name
        cycle = AUTOTUNE if cycle_length is None else int(cycle_length)
        if cycle == AUTOTUNE:
            cycle = len(os.sched_getaffinity(0))  # TensorFlow's default: the CPUs this process may use
        block = 1 if block_length is None else int(block_length)
        probe = _inner_structure(map_func, self)
        prefetch = 0 if num_parallel_calls is None else _INTERLEAVE_PREFETCH
        core = _core.data_interleave(self._core_dataset, _PythonRef(_InnerMaker(map_func, self._structure)),
                                     _core_specs(nest.flatten(probe)), cycle, block, prefetch)
        return self._derive(core, probe, kind=_kind or ("ParallelInterleaveDataset" if prefetch else
                                                        "InterleaveDataset"))

    def scan(self, initial_state, scan_func, name=None):
        del name
        state0 = _normalize(initial_state)
        outer = self
        probe_state, probe_out = _scan_structure(scan_func, state0, self._structure)
        specs = nest.flatten(probe_out)

        def make_source():
            elements = iter(outer)
            state = [state0]

            def pull():
                try:
                    element = next(elements)
                except StopIteration:
                    return None
                new_state, out = scan_func(state[0], element)
                state[0] = _normalize(new_state)
                return nest.flatten(_normalize(out))

            return pull

        del probe_state
        core = _python_source(specs, make_source, self._core_dataset.cardinality())
        return self._derive(core, probe_out, kind="ScanDataset")

    # -- consuming
    def __iter__(self):
        if _core.tracing_active():  # inside kiln.function: a new pass each time the function runs
            return _GraphIterator(_core.data_make_iterator(self._variant()), self._structure)
        return Iterator(self)

    def _variant(self):
        """The dataset as a scalar variant tensor (a trace captures it)."""
        v = self.__dict__.get("_variant_tensor")
        if v is None:
            v = self._variant_tensor = self._pipeline().variant()
        return v

    def _kiln_element_stream(self):
        """For AutoGraph's `for x in ds` in a trace: an iterator handle and the element structure."""
        return _core.data_make_iterator(self._variant()), self._structure

    def as_numpy_iterator(self):
        for element in self:
            yield nest.map_structure(lambda t: t.numpy(), element)

    def reduce(self, initial_state, reduce_func, name=None):
        del name
        state = _normalize(initial_state)
        for element in self:
            state = _normalize(reduce_func(state, element))
        return state

    def get_single_element(self, name=None):
        del name
        it = iter(self.take(2))
        try:
            first = next(it)
        except StopIteration:
            _raise_invalid("Dataset was empty.")
        try:
            next(it)
        except StopIteration:
            return first
        _raise_invalid("Dataset had more than one element.")


class _ShardTagger:
    """save's shard_func as a map function: the element becomes (shard index, element)."""

    def __init__(self, shard_func):
        self.shard_func = shard_func
        self.__name__ = "shard_" + getattr(shard_func, "__name__", "func").replace("<", "").replace(">", "")

    def __call__(self, *args):
        from .._ops import cast

        index = self.shard_func(*args)
        index = cast(index, int64) if isinstance(index, _core.Tensor) else convert_to_tensor(index, int64)
        if index.shape.rank != 0:
            raise ValueError("shard_func must return a 0-dimension tensor containing an int64 (got shape %s)"
                             % (index.shape,))
        return index, (args[0] if len(args) == 1 else args)


def _structure_json(structure):
    """element_spec as kiln::io's JSON form of a StructuredValue (what dataset_spec.pb holds)."""
    if isinstance(structure, TensorSpec):
        shape = None if structure.shape.rank is None else structure.shape.as_list()
        return {"tensor": {"name": "", "shape": shape, "dtype": structure.dtype.name}}
    if _is_namedtuple(structure):
        return {"named_tuple": [type(structure).__name__,
                                [[k, _structure_json(v)] for k, v in zip(structure._fields, structure)]]}
    if isinstance(structure, tuple):
        return {"tuple": [_structure_json(v) for v in structure]}
    if isinstance(structure, list):
        return {"list": [_structure_json(v) for v in structure]}
    if isinstance(structure, dict):
        return {"dict": {str(k): _structure_json(v) for k, v in structure.items()}}
    raise ValueError("Dataset.save: cannot save an element of %r" % (structure,))


def _structure_from_json(s):
    """dataset_spec.pb's structure back as Python values (a named tuple as a namedtuple class of
    that name and fields, as TensorFlow rebuilds it)."""
    if s is None:
        return None
    (kind, value), = s.items()
    if kind == "tensor":
        return TensorSpec(value["shape"], as_dtype(value["dtype"]), name=value["name"] or None)
    if kind == "named_tuple":
        cls = collections.namedtuple(value[0], [k for k, _ in value[1]])
        return cls(*[_structure_from_json(v) for _, v in value[1]])
    if kind in ("tuple", "list"):
        items = [_structure_from_json(v) for v in value]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: _structure_from_json(v) for k, v in value.items()}
    raise ValueError("Dataset.load: the saved element_spec holds a %s, which kiln does not read" % kind)


def _filenames(filenames):
    if isinstance(filenames, Dataset):
        return [f.decode() for f in filenames.as_numpy_iterator()]
    if isinstance(filenames, (str, bytes)):
        filenames = [filenames]
    elif isinstance(filenames, _core.Tensor):
        value = filenames.numpy()
        filenames = [value] if np.ndim(value) == 0 else list(np.asarray(value).reshape(-1))
    out = []
    for f in filenames:
        if isinstance(f, _core.Tensor):
            f = f.numpy()
        out.append(f.decode() if isinstance(f, bytes) else os.fspath(f))
    return out


def _compression(compression_type):
    if compression_type is None:
        return ""
    if isinstance(compression_type, _core.Tensor):
        compression_type = compression_type.numpy()
    return compression_type.decode() if isinstance(compression_type, bytes) else str(compression_type)


class TFRecordDataset(Dataset):
    """tf.data.TFRecordDataset: each record of the files (in order) as a string scalar. A
    truncated or corrupt record is DataLossError at its element."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        del buffer_size, num_parallel_reads, name
        core = _core.data_tfrecords(_filenames(filenames), _compression(compression_type))
        super().__init__(core, _specs_from_core(core.element_spec)[0])

    def _python_name(self):
        return "TFRecordDatasetV2"


class TextLineDataset(Dataset):
    """tf.data.TextLineDataset: each line of the files (in order, without its newline)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        del buffer_size, num_parallel_reads, name
        core = _core.data_text_lines(_filenames(filenames), _compression(compression_type))
        super().__init__(core, _specs_from_core(core.element_spec)[0])

    def _python_name(self):
        return "TextLineDatasetV2"


class _IteratorBase:
    """What an eager and a graph iterator share: the element spec, the iterator protocol, and
    the handle AutoGraph's `for` loops over (_kiln_element_stream)."""

    @property
    def element_spec(self):
        return self._structure

    def __iter__(self):
        return self

    def _kiln_element_stream(self):
        return self._stream_handle(), self._structure


class Iterator(_IteratorBase):
    """tf.data's OwnedIterator: one pass over a dataset. Used inside kiln.function (passed in or
    closed over), its get_next/next become graph ops on the same stream, as TensorFlow's."""

    def __init__(self, dataset):
        self._structure = dataset._structure
        self._it = dataset._pipeline().make_iterator()
        self._unpack = _unpacker(dataset._structure)
        _live_iterators.add(self)

    def _stream_handle(self):
        return self._it.handle

    def __next__(self):
        if _core.tracing_active():
            return self._graph().get_next()
        flat = self._it.next()
        if flat is None:
            raise StopIteration
        return self._unpack(flat)

    next = __next__

    def _graph(self):
        return _GraphIterator(self._it.handle, self._structure)

    def _graph_over(self, handle):
        """This iterator inside a trace that takes it as an argument: its handle is `handle`, a
        placeholder fed with the handle of whichever iterator a call passes."""
        return _GraphIterator(handle, self._structure)

    @property
    def _type_spec(self):
        return IteratorSpec(self._structure)

    # -- tf.train.Checkpoint: the state is the elements handed out (eagerly or by the
    # functions that captured this iterator), restored by replaying a new pass to there
    def _position(self):
        return _core.data_iterator_position(self._it.handle)

    def _restore_position(self, position):
        _core.data_iterator_restore(self._it.handle, int(position))

    def get_next(self):
        if _core.tracing_active():
            return self._graph().get_next()
        try:
            return next(self)
        except StopIteration:
            from .. import errors
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        if _core.tracing_active():
            return self._graph().get_next_as_optional()
        try:
            return Optional(next(self), self._structure)
        except StopIteration:
            return Optional(None, self._structure)


class IteratorSpec:
    """The type of a tf.data iterator argument (tf.data.IteratorSpec): its element structure. A
    kiln.function traces once per IteratorSpec, not once per iterator."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __eq__(self, other):
        return type(other) is IteratorSpec and repr(other.element_spec) == repr(self.element_spec)

    def __hash__(self):
        return hash(repr(self.element_spec))

    def __repr__(self):
        return "IteratorSpec(%r)" % (self.element_spec,)


TypeSpec.register(IteratorSpec)


class _GraphIterator(_IteratorBase):
    """An iterator inside a trace: its handle is a tensor of the graph (made there, or the
    captured handle of an eager Iterator); each call adds a node that pulls when the function
    runs. The end of data is OutOfRangeError at run time, as in TensorFlow's functions."""

    def __init__(self, handle, structure):
        self._handle = handle
        self._structure = structure

    def _stream_handle(self):
        return self._handle

    def __next__(self):
        return self.get_next()

    def get_next(self):
        flat = _core.data_iterator_get_next(self._handle, _core_specs(nest.flatten(self._structure)))
        return nest.pack_sequence_as(self._structure, flat)

    def get_next_as_optional(self):
        return _GraphOptional(_core.data_iterator_get_next_as_optional(self._handle), self._structure)


class Optional:
    """tf.experimental.Optional: a value or nothing. Eagerly it holds the Python structure;
    inside a trace it is a variant tensor (_GraphOptional), so it can be a loop variable, a
    branch result or a function result, as TensorFlow's is."""

    def __init__(self, value, structure):
        self._value = value
        self._element_spec = structure

    @property
    def element_spec(self):
        return self._element_spec

    @staticmethod
    def from_value(value):
        structure = _structure_of(value)
        if _core.tracing_active():
            flat = [convert_to_tensor(v) for v in nest.flatten(value)]
            return _GraphOptional(_core.data_optional_from_value(flat), structure)
        return Optional(value, structure)

    @staticmethod
    def empty(element_spec):
        if _core.tracing_active():
            return _GraphOptional(_core.data_optional_none(), element_spec)
        return Optional(None, element_spec)

    def has_value(self, name=None):
        del name
        return convert_to_tensor(self._value is not None)

    def get_value(self, name=None):
        del name
        if self._value is None:
            _raise_invalid("The optional does not have a value")
        return self._value


def _structure_of(value):
    def spec(v):
        if isinstance(v, _core.Tensor) or hasattr(v, "_kiln_tensor") or hasattr(type(v), "__tf_tensor__"):
            t = convert_to_tensor(v)
            return TensorSpec(t.shape, t.dtype)
        return v
    return nest.map_structure(spec, value)


class _GraphOptional(Optional):
    """tf.experimental.Optional as a variant tensor: made inside a trace, or an eager result of
    a function that returned one. Function results, cond branches and while_loop variables
    carry it as that tensor (_kiln_composite)."""

    def __init__(self, variant, structure):
        self._variant = variant
        self._element_spec = structure

    def _kiln_composite(self):
        spec = self._element_spec
        return self._variant, lambda variant: _GraphOptional(variant, spec)

    def has_value(self):
        return _core.data_optional_has_value(self._variant)

    def get_value(self):
        flat = _core.data_optional_get_value(self._variant, _core_specs(nest.flatten(self.element_spec)))
        return nest.pack_sequence_as(self.element_spec, flat)


_PYTHON_NAMES = {"CacheDataset": "CacheDataset"}


def _common_spec(a, b):
    if a.shape.rank is None or b.shape.rank is None or a.shape.rank != b.shape.rank:
        return TensorSpec(TensorShape(None), a.dtype)
    return TensorSpec([x if x == y else None for x, y in zip(a.shape.as_list(), b.shape.as_list())], a.dtype)


def _elements_dataset(elements, structure):
    """A finite dataset of elements already in memory (one group of group_by_window)."""
    def make_source():
        it = iter(elements)

        def pull():
            try:
                return nest.flatten(next(it))
            except StopIteration:
                return None

        return pull

    return Dataset(_python_source(nest.flatten(structure), make_source, len(elements)), structure, "VariantDataset")


def _chosen(datasets, make_choices, stop_on_empty, weights=None):
    """A dataset whose k-th element comes from datasets[choice k] (Python per element)."""
    structure = datasets[0].element_spec
    for d in datasets[1:]:
        if repr(d.element_spec) != repr(structure):
            raise TypeError("Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
                            "element_spec=%r.\nDataset element_spec=%r." % (structure, d.element_spec))
    specs = nest.flatten(structure)

    def make_source():
        iters = [iter(d) for d in datasets]
        alive = [True] * len(iters)
        choices = make_choices()
        w = None if weights is None else np.array(weights, dtype=np.float64)

        def pull():
            for choice in choices:
                if not 0 <= choice < len(iters):
                    _raise_invalid("Selector index out of range: %d >= %d" % (choice, len(iters)))
                if not alive[choice]:
                    if weights is not None:
                        continue
                    if stop_on_empty:
                        return None
                    continue
                try:
                    return nest.flatten(next(iters[choice]))
                except StopIteration:
                    alive[choice] = False
                    if stop_on_empty or not any(alive):
                        return None
                    if w is not None:
                        w[choice] = 0.0
                        if w.sum() == 0:
                            return None
            return None

        return pull

    core = _python_source(specs, make_source, UNKNOWN_CARDINALITY)
    return Dataset(core, structure, "DirectedInterleaveDataset")


def _raise_invalid(message):
    from .. import errors
    raise errors.InvalidArgumentError(None, None, message)


def _require_concrete(tensors):
    if any(t.is_symbolic for t in tensors):
        raise NotImplementedError("kiln.data: a Dataset made from a symbolic tensor (inside a traced function) is "
                                  "not implemented yet; make it outside the function and use it inside")


def _python_int(value):
    if isinstance(value, int):
        return value
    try:
        return int(convert_to_tensor(value).numpy())
    except AttributeError:  # a symbolic tensor has no value
        raise NotImplementedError("kiln.data: a Dataset made from a symbolic tensor (inside a traced function, such "
                                  "as a map function returning a dataset) is not implemented yet") from None


def _as_python(value):
    return value.numpy() if isinstance(value, _core.Tensor) else value


def _generated_element(value, structure, specs):
    """A generator's value as the element its signature says: each leaf converted to the
    spec's dtype and checked against its shape (InvalidArgumentError, as TensorFlow's)."""
    try:
        leaves = _flatten_up_to(structure, value, broadcast=False)
        out = []
        for leaf, spec in zip(leaves, specs):
            t = convert_to_tensor(leaf, spec.dtype)
            if t.dtype != spec.dtype:
                raise TypeError("%s is not %s" % (t.dtype.name, spec.dtype.name))
            if not spec.shape.is_compatible_with(t.shape):
                _raise_invalid("`generator` yielded an element of shape %s where an element of shape %s was "
                               "expected." % (t.shape, spec.shape))
            out.append(t)
        return out
    except (TypeError, ValueError) as e:
        _raise_invalid("TypeError: `generator` yielded an element that did not match the expected structure. The "
                       "expected structure was %r, but the yielded element was %r. (%s)" % (structure, value, e))


def _flatten_up_to(structure, value, broadcast=True):
    """value's parts at structure's leaves (a shape like (2, 3) stays one part where structure
    has a leaf); a value that is not nested where structure is goes to every leaf below."""
    if not nest.is_nested(structure):
        return [value]
    if isinstance(structure, collections.abc.Mapping):
        if not isinstance(value, collections.abc.Mapping):
            if not broadcast:
                raise ValueError("expected a mapping")
            return [value for _ in nest.flatten(structure)]
        return [x for k in sorted(structure) for x in _flatten_up_to(structure[k], value[k], broadcast)]
    if not isinstance(value, (tuple, list)) or len(value) != len(structure):
        if not broadcast:
            raise ValueError("expected a sequence of %d" % len(structure))
        return [value for _ in nest.flatten(structure)]
    return [x for sub, v in zip(structure, value) for x in _flatten_up_to(sub, v, broadcast)]


def _shape_list(shape):
    if shape is None:
        return None
    s = TensorShape(shape)
    return None if s.rank is None else [d for d in s.as_list()]


def _check_predicate(traced):
    outs = traced.concrete.outputs
    if len(outs) != 1 or outs[0].dtype.name != "bool" or outs[0].shape.rank != 0:
        spec = TensorSpec(outs[0].shape, outs[0].dtype) if len(outs) == 1 else traced.output
        raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return "
                         "type is %r." % (spec,))


def _inner_structure(map_func, outer):
    """The element_spec of the datasets map_func returns. TensorFlow traces map_func; kiln calls
    it on zeros of the outer element's spec, and again on ones: a dimension the two inner
    datasets disagree on depends on the element's value and is None, as a trace would leave it."""
    try:
        inner = _call_with_element(map_func, nest.map_structure(_zeros_of, outer.element_spec))
    except Exception:  # noqa: BLE001 -- zeros may not be a valid input (a file name): try a real element
        inner = None
        for element in outer.take(1):
            inner = _call_with_element(map_func, element)
    if not isinstance(inner, Dataset):
        raise TypeError("`map_func` must return a `Dataset` object. Got %s" % type(inner).__name__)
    spec = inner.element_spec
    try:
        other = _call_with_element(map_func, nest.map_structure(_ones_of, outer.element_spec)).element_spec
        nest.assert_same_structure(spec, other)
    except Exception:  # noqa: BLE001 -- ones may not be a valid input either: keep the first spec
        return spec
    return nest.map_structure(lambda a, b: _common_spec(a, b) if isinstance(a, TensorSpec) and
                              isinstance(b, TensorSpec) and a.dtype == b.dtype else a, spec, other)


def _scan_structure(scan_func, state, structure):
    sample = nest.map_structure(_zeros_of, structure)
    result = scan_func(state, sample)
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError("The scan function must return a pair comprising the new state and the output value.")
    new_state, out = _normalize(result[0]), _normalize(result[1])
    nest.assert_same_structure(state, new_state)
    return new_state, nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), out)


def _ones_of(spec):
    if _is_dataset_spec(spec) or spec.dtype == string or spec.dtype.is_bool:
        return _zeros_of(spec)
    dims = [1 if d is None else d for d in (spec.shape.as_list() if spec.shape.rank is not None else [])]
    return convert_to_tensor(np.ones(dims, dtype=spec.dtype.as_numpy_dtype), spec.dtype)


def _zeros_of(spec):
    if _is_dataset_spec(spec):
        return Dataset.from_tensors(nest.map_structure(_zeros_of, spec.element_spec)).take(0)
    dims = [1 if d is None else d for d in (spec.shape.as_list() if spec.shape.rank is not None else [])]
    if spec.dtype == string:
        return convert_to_tensor(np.full(dims, b"", dtype=object), string)
    return convert_to_tensor(np.zeros(dims, dtype=spec.dtype.as_numpy_dtype), spec.dtype)


def _iterator_call_fields(iterator):
    return iterator._it.handle, repr(iterator._structure)


_function.register_iterator_type(Iterator, _iterator_call_fields)
