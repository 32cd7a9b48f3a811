"""kiln.ragged (tf.ragged): constant, map_flat_values, row_splits_to_segment_ids; the class is
kiln.RaggedTensor (python/kiln/_ragged.py)."""
from ._ragged import constant, map_flat_values, row_splits_to_segment_ids  # noqa: F401

__all__ = ["constant", "map_flat_values", "row_splits_to_segment_ids"]
