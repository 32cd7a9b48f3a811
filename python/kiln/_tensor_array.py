"""kiln.TensorArray (tf.TensorArray) over TensorFlow's TensorList ops, eagerly and in traced
functions alike: the array is a scalar variant tensor holding an immutable list, so a write
makes a new list. Eagerly the array object takes the new list (TensorFlow's eager arrays
change in place); inside a trace write returns a new TensorArray, as TensorFlow's graph arrays
do, and an array is a loop variable of kiln.while_loop (AutoGraph's loops) through its list.

Unwritten elements stack as zeros once the element shape is known (from element_shape= or
the first write). What differs: gradients through an array are not implemented yet, and
concat needs elements of one shape."""
import numpy as np

from . import _core, _dtypes, errors, raw_ops
from . import _public_name
from ._convert import convert_to_tensor
from ._shape import TensorShape

Tensor = _core.Tensor


def _shape_tensor(shape):
    if shape.rank is None:
        return convert_to_tensor(-1, dtype=_dtypes.int32)
    return convert_to_tensor([-1 if d is None else d for d in shape.as_list()], dtype=_dtypes.int32)


class _ShapeCell:
    """The element shape, shared by the arrays made from one array."""

    def __init__(self, shape):
        self.shape = shape


class TensorArray:
    """tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None,
                 colocate_with_first_write_call=True, name=None):
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        # Eagerly TensorFlow forgets an element once read (it stacks as zeros after); its
        # graph arrays ignore this, and so does kiln inside a trace.
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        # One list cell shared by every array made from this one (writes, loops), so a shape
        # learnt from a write inside a loop body is known after the loop, as in TensorFlow.
        self._shape_cell = element_shape if isinstance(element_shape, _ShapeCell) else \
            _ShapeCell(TensorShape(element_shape))
        if flow is not None or handle is not None:
            self._list = flow if flow is not None else handle
            return
        if size is None:
            size = 0 if self._dynamic_size else None
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is enabled."
                             if not _core.tracing_active() else "Size must be provided if handle is not provided")
        self._list = raw_ops.TensorListReserve(element_shape=_shape_tensor(self._element_shape),
                                               num_elements=convert_to_tensor(size, dtype=_dtypes.int32),
                                               element_dtype=self._dtype)

    # -- what TensorFlow's arrays expose ------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._shape_cell.shape

    @property
    def _element_shape(self):
        return self._shape_cell.shape

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def flow(self):
        return self._list

    handle = flow

    def size(self, name=None):
        return raw_ops.TensorListLength(input_handle=self._list)

    def identity(self):
        return self._next(self._list)

    def mark_used(self):
        pass

    def close(self, name=None):
        pass

    # -- reads and writes -----------------------------------------------------------------------
    def read(self, index, name=None):
        index = convert_to_tensor(index, dtype=_dtypes.int32)
        if not _core.tracing_active():
            n = int(self.size().numpy())
            i = int(index.numpy())
            if i < 0 or i >= n:
                raise errors.OutOfRangeError(None, None, "Tried to read from index %d but array size is: %d " % (i, n))
        value = raw_ops.TensorListGetItem(input_handle=self._list, index=index,
                                          element_shape=_shape_tensor(self._element_shape), element_dtype=self._dtype)
        if self._clear_after_read and not _core.tracing_active():
            from ._ops import zeros_like
            self._list = raw_ops.TensorListSetItem(input_handle=self._list, index=index, item=zeros_like(value))
        return value

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        index = convert_to_tensor(index, dtype=_dtypes.int32)
        if not _core.tracing_active() and not self._dynamic_size:
            n, i = int(self.size().numpy()), int(index.numpy())
            if i >= n:
                raise errors.OutOfRangeError(None, None, "Tried to write to index %d but array is not resizeable and "
                                                         "size is: %d " % (i, n))
        self._check_element(value.shape)
        new = raw_ops.TensorListSetItem(input_handle=self._list, index=index, item=value,
                                        resize_if_index_out_of_bounds=self._dynamic_size)
        return self._next(new)

    def stack(self, name=None):
        if (not _core.tracing_active() and self._element_shape.rank is None
                and int(self.size().numpy()) == 0):
            return convert_to_tensor(np.zeros([0], self._dtype.as_numpy_dtype))
        return raw_ops.TensorListStack(input_handle=self._list, element_shape=_shape_tensor(self._element_shape),
                                       element_dtype=self._dtype, num_elements=-1)

    def gather(self, indices, name=None):
        from ._ops import gather
        return gather(self.stack(), indices)

    def concat(self, name=None):
        from ._ops import reshape, shape
        stacked = self.stack()
        rest = stacked.shape[2:]
        if rest.rank is None:
            raise NotImplementedError("kiln.TensorArray.concat needs elements of known rank")
        return reshape(stacked, [-1] + [(-1 if d is None else d) for d in rest.as_list()]) if rest.rank else \
            reshape(stacked, [-1])

    def unstack(self, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape.rank is not None and value.shape.rank > 0:
            self._check_element(value.shape[1:])
        new = raw_ops.TensorListFromTensor(tensor=value, element_shape=_shape_tensor(self._element_shape))
        return self._next(new)

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        out = self
        for k, i in enumerate(np.asarray(convert_to_tensor(indices).numpy()).reshape(-1).tolist()):
            out = out.write(int(i), value[k])
        return out

    def split(self, value, lengths, name=None):
        from ._ops import split
        out = self
        for i, piece in enumerate(split(convert_to_tensor(value, dtype=self._dtype), lengths)):
            out = out.write(i, piece)
        return out

    # -- helpers ------------------------------------------------------------------------------
    def _check_element(self, shape):
        if not self._infer_shape:
            return
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError("Incompatible shape for value (%s), expected (%s)" % (shape, self._element_shape))
        self._shape_cell.shape = self._element_shape.merge_with(shape)

    def _next(self, new_list):
        if not _core.tracing_active():
            self._list = new_list  # eagerly an array changes in place, as TensorFlow's
            return self
        return TensorArray(self._dtype, dynamic_size=self._dynamic_size, infer_shape=self._infer_shape,
                           element_shape=self._shape_cell, flow=new_list)

    def _kiln_composite(self):
        """(tensor, rebuild): how a loop carries the array (its list) and makes it again."""
        dtype, dynamic, infer, shape = self._dtype, self._dynamic_size, self._infer_shape, self._shape_cell
        return self._list, lambda t: TensorArray(dtype, dynamic_size=dynamic, infer_shape=infer,
                                                 element_shape=shape, flow=t)

    def __repr__(self):
        return "<%s.TensorArray dtype=%s size=%s element_shape=%s>" % (_public_name.prefix, 
            self._dtype.name, "?" if _core.tracing_active() else int(self.size().numpy()), self._element_shape)
