"""tf.image.flip_left_right, flip_up_down, crop_to_bounding_box against TensorFlow's; the
random ones (random_flip_left_right, random_crop) by what TensorFlow promises: each result is
the image or its mirror, a crop is a window of the image, and bad sizes are TensorFlow's errors."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

IMG = np.arange(2 * 4 * 3, dtype=np.uint8).reshape(2, 4, 3)
BATCH = np.arange(3 * 2 * 4 * 3, dtype=np.float32).reshape(3, 2, 4, 3)

CASES = [
    lambda m: m.image.flip_left_right(IMG),
    lambda m: m.image.flip_left_right(BATCH),
    lambda m: m.image.flip_up_down(IMG),
    lambda m: m.image.flip_up_down(BATCH),
    lambda m: m.image.crop_to_bounding_box(IMG, 1, 1, 1, 2),
    lambda m: m.image.crop_to_bounding_box(BATCH, 0, 2, 2, 2),
    lambda m: m.image.flip_left_right(np.zeros([4, 3])),
    lambda m: m.image.random_crop(IMG, [3, 2, 3]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_flips_and_crops_are_tensorflows(oracle, case):
    oracle(CASES[case], where="case %d" % case)


def test_random_flip_gives_the_image_or_its_mirror_per_image():
    seen = set()
    for seed in range(20):
        out = kiln.image.random_flip_left_right(BATCH, seed=seed).numpy()
        for i in range(3):
            same, mirror = np.array_equal(out[i], BATCH[i]), np.array_equal(out[i], BATCH[i][:, ::-1])
            assert same or mirror
            seen.add(same)
    assert seen == {True, False}


def test_random_crop_is_a_window_inside_a_traced_map():
    ds = kiln.data.Dataset.from_tensors(IMG).repeat(30).map(lambda x: kiln.image.random_crop(x, [1, 2, 3]))
    offsets = set()
    for crop in ds:
        c = crop.numpy()
        hits = [(r, k) for r in range(2) for k in range(3) if np.array_equal(IMG[r:r + 1, k:k + 2], c)]
        assert len(hits) == 1
        offsets.add(hits[0])
    assert len(offsets) > 1
