"""Ops added for real models (padding, splitting, scans, one-hot, einsum, depthwise and grouped
convolutions), called through kiln.raw_ops and tf.raw_ops with the same arguments: values and
shapes must agree, eagerly and inside a kiln.function, and bad arguments must raise the same
error class. The kernel fuzz oracle covers random inputs; these are the cases models use."""
import numpy as np
import pytest

import kiln
from conftest import as_list, raw_op_outputs, raw_ops_kwargs_for_tf

tf = pytest.importorskip("tensorflow")
RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _small_ints(*shape, dtype=np.float32):
    """Whole numbers in [-3, 3]: every sum of their products is exact, so a case compares bit
    for bit whatever order either side adds in."""
    return RNG.integers(-3, 4, shape).astype(dtype)


CASES = [
    ("Pad", dict(input=_f32(2, 3), paddings=np.array([[1, 2], [0, 1]], np.int32))),
    ("Pad", dict(input=_f32(1, 4, 4, 3), paddings=np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int64))),
    ("PadV2", dict(input=_f32(2, 3), paddings=[[1, 0], [2, 2]], constant_values=np.float32(-1.5))),
    ("MirrorPad", dict(input=_f32(3, 4), paddings=[[2, 1], [3, 3]], mode="REFLECT")),
    ("MirrorPad", dict(input=_f32(3, 4), paddings=[[3, 0], [4, 4]], mode="SYMMETRIC")),
    ("MirrorPadGrad", dict(input=_f32(6, 10), paddings=[[2, 1], [3, 3]], mode="REFLECT")),
    ("MirrorPadGrad", dict(input=_f32(6, 12), paddings=[[3, 0], [4, 4]], mode="SYMMETRIC")),
    ("MirrorPadGrad", dict(input=np.arange(2 * 5 * 4, dtype=np.int32).reshape(2, 5, 4),
                           paddings=[[0, 0], [1, 2], [1, 0]], mode="SYMMETRIC")),
    ("Split", dict(axis=1, value=_f32(2, 6), num_split=3)),
    ("SplitV", dict(value=_f32(5, 2), size_splits=[2, -1, 1], axis=0, num_split=3)),
    ("Unpack", dict(value=_f32(2, 3, 4), num=3, axis=1)),
    ("Cumsum", dict(x=_f32(3, 4), axis=1, exclusive=True, reverse=True)),
    ("Cumprod", dict(x=_f32(3, 4), axis=0, reverse=True)),
    ("OneHot", dict(indices=[[0, 2], [5, -1]], depth=3, on_value=2.0, off_value=-1.0)),
    ("OneHot", dict(indices=np.array([1, 0], np.int64), depth=3, on_value=1, off_value=0, axis=0)),
    ("ArgMin", dict(input=_f32(3, 4), dimension=1, output_type=kiln.int32)),
    ("Einsum", dict(inputs=[_f32(2, 3, 4), _f32(4, 5, 6)], equation="abc,cde->abde")),
    ("Einsum", dict(inputs=[_f32(2, 5, 3, 4), _f32(2, 6, 3, 4)], equation="aecd,abcd->acbe")),
    ("Einsum", dict(inputs=[_f32(2, 1, 3, 4), _f32(5, 4, 2)], equation="...ij,...jk->...ik")),
    ("Einsum", dict(inputs=[_f32(3, 4)], equation="ij->j")),
    # Each operand read in place, read transposed, or copied (runs or elements), and the product
    # written in place or reordered: multi-head attention's two einsums, Dense over a sequence,
    # both transposed reads, one operand's sums either way, a reorder with nothing summed.
    ("Einsum", dict(inputs=[_small_ints(2, 5, 3, 4), _small_ints(2, 6, 3, 4)], equation="BTNH,BSNH->BNTS")),
    ("Einsum", dict(inputs=[_small_ints(2, 3, 5, 6), _small_ints(2, 6, 3, 4)], equation="BNTS,BSNH->BTNH")),
    ("Einsum", dict(inputs=[_small_ints(2, 7, 5), _small_ints(5, 3)], equation="abc,cd->abd")),
    ("Einsum", dict(inputs=[_small_ints(4, 5), _small_ints(3, 5)], equation="ab,cb->ac")),
    ("Einsum", dict(inputs=[_small_ints(5, 4), _small_ints(5, 3)], equation="ba,bc->ac")),
    ("Einsum", dict(inputs=[_small_ints(5, 4), _small_ints(3, 5)], equation="ba,cb->ac")),
    ("Einsum", dict(inputs=[_small_ints(3, 4, 5, dtype=np.float64), _small_ints(3, 6, 5, dtype=np.float64)],
                    equation="bij,bkj->bik")),
    ("Einsum", dict(inputs=[_small_ints(3, 4, 5)], equation="ijk->ik")),
    ("Einsum", dict(inputs=[_small_ints(3, 4, 5)], equation="ijk->ki")),
    ("Einsum", dict(inputs=[_small_ints(3, 4, 5)], equation="ijk->kji")),
    ("Einsum", dict(inputs=[_small_ints(1, 4, 1, 5), _small_ints(5, 2)], equation="aibj,jk->aibk")),
    # Attention-sized heads (at least 48^3 multiply-adds per head) are read and written in place
    # through leading dimensions: both of Keras 3's einsums, Keras 2's scores (the operands
    # swapped), float64, and a batch one operand broadcasts.
    ("Einsum", dict(inputs=[_small_ints(2, 64, 3, 48), _small_ints(2, 64, 3, 48)], equation="BTNH,BSNH->BNTS")),
    ("Einsum", dict(inputs=[_small_ints(2, 3, 64, 64), _small_ints(2, 64, 3, 48)], equation="BNTS,BSNH->BTNH")),
    ("Einsum", dict(inputs=[_small_ints(2, 64, 3, 48), _small_ints(2, 60, 3, 48)], equation="aecd,abcd->acbe")),
    ("Einsum", dict(inputs=[_small_ints(2, 64, 3, 48, dtype=np.float64), _small_ints(2, 64, 3, 48, dtype=np.float64)],
                    equation="BTNH,BSNH->BNTS")),
    ("Einsum", dict(inputs=[_small_ints(1, 64, 3, 48), _small_ints(2, 64, 3, 48)], equation="...TNH,...SNH->...NTS")),
    # Transpose copies one run (identity, or only dims of size 1 moved), runs (the innermost dim
    # kept: attention's head split), 32x32 blocks (a matrix, also behind dims of size 1), or
    # elements; any dtype, zero-sized too.
    ("Transpose", dict(x=_f32(2, 3, 4), perm=[0, 1, 2])),
    ("Transpose", dict(x=_f32(1, 5, 1, 3), perm=[2, 1, 0, 3])),
    ("Transpose", dict(x=_f32(2, 7, 3, 4), perm=[0, 2, 1, 3])),
    ("Transpose", dict(x=_f32(37, 70), perm=[1, 0])),
    ("Transpose", dict(x=_f32(1, 37, 1, 70), perm=[3, 2, 0, 1])),
    ("Transpose", dict(x=_f32(3, 5, 6), perm=[0, 2, 1])),
    ("Transpose", dict(x=_f32(2, 3, 4, 5, 2), perm=[4, 2, 0, 3, 1])),
    ("Transpose", dict(x=np.array([[b"a", b"bc"], [b"", b"d"]]), perm=[1, 0])),
    ("Transpose", dict(x=np.arange(24).reshape(2, 3, 4) % 3 == 0, perm=[2, 0, 1])),
    ("Transpose", dict(x=np.zeros([2, 0, 3], np.int64), perm=[2, 1, 0])),
    ("DepthwiseConv2dNative", dict(input=_f32(2, 7, 7, 3), filter=_f32(3, 3, 3, 2), strides=[1, 2, 2, 1],
                                   padding="SAME")),
    ("DepthwiseConv2dNative", dict(input=_f32(1, 6, 6, 4), filter=_f32(3, 3, 4, 1), strides=[1, 1, 1, 1],
                                   padding="VALID", dilations=[1, 2, 2, 1])),
    ("Conv2D", dict(input=_f32(1, 5, 5, 4), filter=_f32(3, 3, 2, 6), strides=[1, 1, 1, 1], padding="SAME")),
    ("Conv2D", dict(input=_f32(2, 5, 5, 6), filter=_f32(7, 7, 1, 6), strides=[1, 1, 1, 1], padding="SAME")),
    ("Conv2DBackpropInput", dict(input_sizes=[2, 8, 8, 3], filter=_f32(3, 3, 3, 4), out_backprop=_f32(2, 4, 4, 4),
                                 strides=[1, 2, 2, 1], padding="SAME")),
    ("Conv2DBackpropInput", dict(input_sizes=[1, 7, 6, 2], filter=_f32(2, 3, 2, 5), out_backprop=_f32(1, 6, 4, 5),
                                 strides=[1, 1, 1, 1], padding="VALID")),
    ("Zeta", dict(x=np.float32([1.5, 2, 3.5, 1, 0.5, 4]), q=np.float32([[0.5], [2.0], [-1.5], [-2.0]]))),
    ("Zeta", dict(x=np.linspace(1.1, 9, 12), q=np.linspace(-3.7, 20, 12))),
    ("Polygamma", dict(a=np.float32([0, 1, 2, 3, 1.5, -1]), x=np.float32([[0.7], [3.0], [-2.5], [-3.0], [40.0]]))),
    ("Polygamma", dict(a=np.array([0.0, 1, 2, 5]), x=np.linspace(-4.3, 9, 4))),
    ("ReverseV2", dict(tensor=_f32(2, 3, 4), axis=[0, -1])),
    ("ReverseV2", dict(tensor=np.arange(6, dtype=np.int64).reshape(2, 3), axis=np.array([1], np.int64))),
    ("Roll", dict(input=_f32(2, 3, 5), shift=[1, -7, 2], axis=[0, 2, -1])),
    ("Roll", dict(input=np.arange(12, dtype=np.int64).reshape(3, 4), shift=np.int64(-5), axis=np.int64(0))),
    ("Roll", dict(input=np.array([True, False, False]), shift=[2, 4], axis=[0, 0])),
    ("Roll", dict(input=np.array([b"a", b"bc", b"d"]), shift=1, axis=0)),
    ("Roll", dict(input=np.complex64([1 + 2j, 3, -1j, 4]).reshape(2, 2), shift=[1], axis=[1])),
    ("Roll", dict(input=np.zeros([2, 0, 3], np.float32), shift=[1, 2], axis=[1, 2])),
] + [(op, dict(images=images, size=size, align_corners=align, half_pixel_centers=half))
     for op in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic")
     for images, size in ((_f32(2, 3, 5, 2), [7, 4]), (np.arange(48, dtype=np.int32).reshape(1, 4, 6, 2), [2, 9]))
     for align, half in ((False, False), (True, False), (False, True))] + [
    ("ResizeArea", dict(images=images, size=size, align_corners=align))
    for images, size in ((_f32(2, 7, 9, 3), [3, 4]), (_f32(1, 5, 5, 2), [8, 7]),
                         (np.arange(2 * 9 * 6 * 2, dtype=np.uint8).reshape(2, 9, 6, 2), [5, 5]),
                         (np.arange(40, dtype=np.float64).reshape(1, 10, 2, 2), [3, 5]))
    for align in (False, True)]
# Float sums in another order: a few ulps.
ULPS = {"DepthwiseConv2dNative": 16, "Conv2D": 16, "Cumprod": 2, "Cumsum": 2, "Polygamma": 8, "Zeta": 4}
# Sums of terms of both signs (a transposed convolution's overlaps, interpolation weights): an
# ulp bound is meaningless where the result is near zero, so these compare absolutely too.
# Einsum's contractions too: TensorFlow's order of summation differs by CPU (80 and 211 ulps on
# an AVX2-only EPYC for aecd,abcd->acbe, where a few ulps on AVX-512 machines).
TOLERANCE = {"Einsum": 1e-6, "Conv2DBackpropInput": 1e-5, "MirrorPadGrad": 1e-6, "ResizeBilinear": 1e-6, "ResizeBicubic": 1e-5}




@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_values_are_tensorflows(name, kwargs, traced):
    for g, w in raw_op_outputs(name, kwargs, traced):
        if g.dtype.kind == "f" and name in TOLERANCE:
            np.testing.assert_allclose(g, w, rtol=TOLERANCE[name], atol=TOLERANCE[name])
        elif g.dtype.kind == "f":
            np.testing.assert_array_max_ulp(g, w, maxulp=ULPS.get(name, 0))
        else:
            np.testing.assert_array_equal(g, w)


BAD = [
    ("Pad", dict(input=_f32(2, 3), paddings=[[1, 1]])),
    ("Pad", dict(input=_f32(2, 3), paddings=[[0, -1], [1, 1]])),
    ("MirrorPad", dict(input=_f32(2, 3), paddings=[[0, 2], [1, 1]], mode="REFLECT")),
    ("MirrorPadGrad", dict(input=_f32(6, 9), paddings=[[2, 1], [3, 3]], mode="REFLECT")),
    ("MirrorPadGrad", dict(input=_f32(4, 3), paddings=[[0, -1], [1, 1]], mode="SYMMETRIC")),
    ("Split", dict(axis=1, value=_f32(2, 5), num_split=2)),
    ("SplitV", dict(value=_f32(5), size_splits=[-1, -1], axis=0, num_split=2)),
    ("Unpack", dict(value=_f32(2, 3), num=2, axis=1)),
    ("Cumsum", dict(x=_f32(3), axis=1)),
    ("OneHot", dict(indices=[0], depth=-1, on_value=1.0, off_value=0.0)),
    ("Einsum", dict(inputs=[_f32(2, 3), _f32(4, 5)], equation="ij,jk->ik")),
    ("Einsum", dict(inputs=[_f32(2, 3), _f32(3, 4)], equation="ij,jk")),
    ("DepthwiseConv2dNative", dict(input=_f32(1, 4, 4, 3), filter=_f32(2, 2, 4, 1), strides=[1, 1, 1, 1],
                                   padding="VALID")),
    ("Conv2D", dict(input=_f32(1, 4, 4, 4), filter=_f32(2, 2, 2, 5), strides=[1, 1, 1, 1], padding="VALID")),
    ("Roll", dict(input=_f32(2, 5), shift=[1, 2], axis=[0])),
    ("Roll", dict(input=_f32(2, 5), shift=[[1]], axis=[[0]])),
    ("Roll", dict(input=_f32(2, 5), shift=1, axis=2)),
    ("Roll", dict(input=_f32(2, 5), shift=1, axis=-3)),
    ("Roll", dict(input=np.float32(3), shift=1, axis=0)),
    ("Roll", dict(input=_f32(2, 5), shift=1.0, axis=0)),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[c[0] + str(i) for i, c in enumerate(BAD)])
def test_bad_arguments_raise_tensorflows_class(name, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(tf.raw_ops, name)(**raw_ops_kwargs_for_tf(kwargs))
    with pytest.raises(Exception) as ours:
        getattr(kiln.raw_ops, name)(**kwargs)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)


def test_einsum_output_label_missing_from_inputs_is_an_error():
    # A deliberate difference: TensorFlow 2.21's raw Einsum drops such a label (ij->ik gives a
    # [2] tensor, not [2, k]); tf.einsum's Python layer and numpy reject the equation, as kiln does.
    with pytest.raises(kiln.errors.InvalidArgumentError, match="label k not present"):
        kiln.raw_ops.Einsum(inputs=[_f32(2, 3)], equation="ij->ik")


def test_empty_and_zero_sized_inputs():
    for name, kwargs in [("Pad", dict(input=np.zeros([0, 3], np.float32), paddings=[[1, 1], [0, 0]])),
                         ("Split", dict(axis=0, value=np.zeros([0, 4], np.float32), num_split=2)),
                         ("Cumsum", dict(x=np.zeros([2, 0], np.float32), axis=1)),
                         ("Einsum", dict(inputs=[np.zeros([2, 0], np.float32), np.zeros([0, 3], np.float32)],
                                         equation="ij,jk->ik"))]:
        want = as_list(getattr(tf.raw_ops, name)(**kwargs))
        got = as_list(getattr(kiln.raw_ops, name)(**kwargs))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_roll_gradient_and_messages_are_tensorflows():
    x = _f32(3, 4)
    for m in (tf, kiln):
        v = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(v)
            y = m.roll(v, shift=[1, -3], axis=[0, 1]) * np.arange(12, dtype=np.float32).reshape(3, 4)
        if m is tf:
            want = tape.gradient(y, v).numpy()
        else:
            np.testing.assert_array_equal(tape.gradient(y, v).numpy(), want)
    for kwargs in (dict(shift=1, axis=2), dict(shift=1, axis=-3), dict(shift=[1, 2], axis=[0])):
        with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
            tf.raw_ops.Roll(input=x, **kwargs)
        with pytest.raises(kiln.errors.InvalidArgumentError) as ours:
            kiln.raw_ops.Roll(input=x, **kwargs)
        assert ours.value.message in theirs.value.message, (ours.value.message, theirs.value.message)
