"""tf.IndexedSlices: a sparse set of rows of a tensor (values [N, ...] for the rows `indices` [N]
of a tensor of shape dense_shape), as TensorFlow's gradients of gathers are. kiln's own
gradients are dense tensors; this type exists for programs and libraries that build or test for
it. Converting it to a tensor sums repeated rows, as TensorFlow does."""
from ._convert import convert_to_tensor


class IndexedSlices:
    def __init__(self, values, indices, dense_shape=None):
        self._values = convert_to_tensor(values)
        self._indices = convert_to_tensor(indices)
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)

    @property
    def shape(self):
        from ._shape import TensorShape
        if self._dense_shape is None or self._dense_shape.is_symbolic:
            return TensorShape([None]).concatenate(self._values.shape[1:])
        return TensorShape([int(d) for d in self._dense_shape.numpy()])

    def _kiln_tensor(self):
        import kiln
        if self._dense_shape is None:
            raise ValueError("Converting an IndexedSlices without dense_shape to a Tensor needs its dense_shape")
        rows = kiln.cast(self._dense_shape[0], self._indices.dtype)
        return kiln.math.unsorted_segment_sum(self._values, self._indices, rows)

    def __repr__(self):
        return "IndexedSlices(indices=%r, values=%r%s)" % (
            self._indices, self._values, "" if self._dense_shape is None else ", dense_shape=%r" % self._dense_shape)
