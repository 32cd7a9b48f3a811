"""kiln.map_fn (tf.map_fn): fn applied to each element along the first axis of elems (a
tensor or a nest of tensors), the results stacked. Eagerly, and inside a trace when the first
dimension is known, it loops in Python (a traced function then holds one copy of fn's ops per
element); with an unknown first dimension inside a trace it is a kiln.while_loop writing a
kiln.TensorArray per output, as TensorFlow's map_fn is."""
from . import _dtypes, nest
from ._convert import convert_to_tensor


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    from ._ragged import RaggedTensor
    if isinstance(elems, RaggedTensor):
        return _map_rows(fn, elems, fn_output_signature if fn_output_signature is not None else dtype)
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors. Got %s" % (elems,))
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    signature = fn_output_signature if fn_output_signature is not None else dtype
    n = flat[0].shape[0]

    def element(i):
        return nest.pack_sequence_as(elems, [e[i] for e in flat])

    if n is not None:
        from ._ops import stack
        results = [fn(element(i)) for i in range(n)]
        if n == 0:
            return _empty_result(flat, signature, fn, elems)
        structure = results[0]
        per_output = list(zip(*[[convert_to_tensor(r) for r in nest.flatten(res)] for res in results]))
        stacked = [stack(list(values)) for values in per_output]
        return nest.pack_sequence_as(structure, stacked)
    return _while_map(fn, element, flat, signature)


def _map_rows(fn, rt, signature):
    """map_fn over a RaggedTensor's rows (eagerly): a RaggedTensor of the results, as TensorFlow's
    default output signature (the input's) gives, or a dense stack for a dtype signature."""
    from ._ops import concat, stack
    from ._ragged import RaggedTensor
    results = [convert_to_tensor(fn(row)) for row in rt]
    if signature is not None and not isinstance(signature, (list, tuple, dict)) and \
            not isinstance(signature, type(rt)) and not hasattr(signature, "ragged_rank"):
        return stack(results) if results else _empty_result([rt.flat_values], signature)
    if any(r.shape.rank == 0 for r in results):
        raise ValueError("The output of map_fn over a RaggedTensor's rows is ragged unless fn_output_signature "
                         "names a dtype: fn returned a scalar")
    lengths = [int(r.shape[0]) for r in results]
    values = concat(results, 0) if results else rt.flat_values[:0]
    return RaggedTensor.from_row_lengths(values, lengths)


def _empty_result(flat, signature, fn=None, elems=None):
    from ._ops import zeros
    if fn is not None and signature is None:
        # TensorFlow's shapes: fn traced once on an element's spec (as its while loop traces it),
        # and no row of each of its outputs.
        from ._function import function
        from ._spec import TensorSpec
        specs = nest.pack_sequence_as(elems, [TensorSpec(e.shape[1:], e.dtype) for e in flat])
        out = function(lambda x: fn(x), autograph=False).get_concrete_function(specs).structured_outputs
        return nest.map_structure(lambda t: zeros([0] + [d or 0 for d in t.shape.as_list()], t.dtype), out)
    dtype = _dtypes.as_dtype(signature) if signature is not None and not isinstance(signature, (list, tuple)) \
        else flat[0].dtype
    return zeros([0], dtype)


def _while_map(fn, element, flat, signature):
    from ._control_flow import while_loop
    from ._ops import shape as shape_of
    from ._tensor_array import TensorArray
    n = shape_of(flat[0])[0]
    probe = fn(element(0)) if signature is None else None  # fixes the output structure and dtypes
    if signature is None:
        dtypes = [convert_to_tensor(r).dtype for r in nest.flatten(probe)]
        structure = probe
    else:
        flat_sig = nest.flatten(signature)
        dtypes = [getattr(s, "dtype", None) or _dtypes.as_dtype(s) for s in flat_sig]
        structure = signature
    arrays = [TensorArray(d, size=n) for d in dtypes]

    def body(i, *tas):
        out = [convert_to_tensor(r) for r in nest.flatten(fn(element(i)))]
        return (i + 1,) + tuple(ta.write(i, o) for ta, o in zip(tas, out))

    results = while_loop(lambda i, *tas: i < n, body, (convert_to_tensor(0),) + tuple(arrays))
    return nest.pack_sequence_as(structure, [ta.stack() for ta in results[1:]])



def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """tf.scan: the running application of fn(accumulator, element) along elems' first axis,
    every accumulator stacked. Eagerly and with a known first dimension it loops in Python
    (as map_fn does); otherwise it is a kiln.while_loop over TensorArrays."""
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    import kiln as k
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors")

    def element(i):
        return nest.pack_sequence_as(elems, [e[i] for e in flat])

    n = flat[0].shape[0]
    if initializer is None:
        acc = element(-1 if reverse else 0)
        first = 1
    else:
        acc = initializer
        first = 0
    if n is not None:
        order = range(n - 1 - first, -1, -1) if reverse else range(first, n)
        outs = [] if initializer is not None else [acc]
        for i in order:
            acc = fn(acc, element(i))
            outs.append(acc)
        if reverse:
            outs = outs[::-1]
        if not outs:  # no elements: no accumulators, each shaped as the initializer's part
            return nest.map_structure(lambda a: k.zeros((0,) + tuple(convert_to_tensor(a).shape),
                                                        convert_to_tensor(a).dtype), initializer)
        flat_outs = [nest.flatten(o) for o in outs]
        stacked = [k.stack([o[j] for o in flat_outs]) for j in range(len(flat_outs[0]))]
        return nest.pack_sequence_as(acc, stacked)
    raise NotImplementedError("kiln.scan over a first dimension unknown at trace time is not implemented; give the "
                              "input a static first dimension")


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """tf.foldl: the last accumulator of scan."""
    out = scan(fn, elems, initializer)
    if initializer is not None and nest.flatten(out)[0].shape[0] == 0:
        return initializer  # no elements: the initial accumulator, as TensorFlow's
    return nest.map_structure(lambda t: t[-1], out)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """tf.foldr: foldl from the end."""
    out = scan(fn, elems, initializer, reverse=True)
    if initializer is not None and nest.flatten(out)[0].shape[0] == 0:
        return initializer
    return nest.map_structure(lambda t: t[0], out)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """tf.vectorized_map: fn over elems' first axis. kiln runs it as map_fn (one application per
    element, results stacked): the same values as TensorFlow's vectorized form, without its
    vectorization."""
    del fallback_to_while_loop, warn
    return map_fn(fn, elems)
