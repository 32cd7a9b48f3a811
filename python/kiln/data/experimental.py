"""kiln.data.experimental: the names of tf.data.experimental that programs still reach for."""
from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .._csv import CsvDataset, make_csv_dataset


def cardinality(dataset):
    """tf.data.experimental.cardinality: the dataset's cardinality as an int64 scalar."""
    return dataset.cardinality()


__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality", "CsvDataset",
           "make_csv_dataset"]
