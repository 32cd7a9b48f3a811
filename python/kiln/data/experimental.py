"""kiln.data.experimental: the names of tf.data.experimental that programs still reach for."""
from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, Optional
from .._csv import CsvDataset, make_csv_dataset
import enum


class ExternalStatePolicy(enum.Enum):
    """What serializing a pipeline does with stateful functions (TensorFlow's values). kiln does
    not serialize pipelines, so the policy is recorded in Options and has no effect."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutoShardPolicy(enum.IntEnum):
    """How tf.distribute shards a pipeline across workers (TensorFlow's values). kiln's
    multi-worker training shards explicitly (Dataset.shard); the policy is recorded only."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


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


__all__ = ["Optional", "ExternalStatePolicy", "AutoShardPolicy", "save", "load", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality", "Counter", "sample_from_datasets",
           "choose_from_datasets", "CsvDataset",
           "make_csv_dataset"]
