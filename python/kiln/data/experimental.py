"""kiln.data.experimental: the names of tf.data.experimental that programs still reach for."""
from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .._csv import CsvDataset, make_csv_dataset


def Counter(start=0, step=1, dtype=None):
    """tf.data.experimental.Counter: start, start + step, ... forever (int64 by default)."""
    from .._dtypes import int64
    return Dataset.counter(start, step, int64 if dtype is None else dtype)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def cardinality(dataset):
    """tf.data.experimental.cardinality: the dataset's cardinality as an int64 scalar."""
    return dataset.cardinality()


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """tf.data.experimental.save: Dataset.save."""
    return dataset.save(path, compression, shard_func, checkpoint_args)


def load(path, element_spec=None, compression=None, reader_func=None):
    """tf.data.experimental.load: Dataset.load."""
    return Dataset.load(path, element_spec, compression, reader_func)


__all__ = ["save", "load", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality", "Counter", "sample_from_datasets",
           "choose_from_datasets", "CsvDataset",
           "make_csv_dataset"]
