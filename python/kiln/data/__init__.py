"""kiln.data: tf.data's input pipelines. A Dataset's stages run in kiln's C++ pipeline
runtime (src/data): map, filter and take_while run their function as a traced kiln graph,
prefetch and parallel map on threads of their own, without the GIL; only from_generator's
generator and the function-of-a-dataset stages (flat_map, interleave, scan) run Python per
element. See docs/data.md."""
from ._dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, DatasetSpec, Iterator, Options,
                       TextLineDataset, TFRecordDataset, ThreadingOptions)
from . import experimental

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "DatasetSpec", "Iterator", "Options",
           "TextLineDataset", "TFRecordDataset", "ThreadingOptions", "experimental"]
