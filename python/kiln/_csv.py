"""tf.io.decode_csv, tf.data.experimental.CsvDataset and make_csv_dataset: CSV records parsed
by one KilnDecodeCSV node (eagerly, or in a Dataset.map graph), files read by kiln.data's
TextLineDataset."""
import collections
import glob as _glob

import numpy as np

from . import _core
from ._convert import convert_to_tensor
from ._dtypes import as_dtype, float32, int32, string


def _default(value, dtype_allowed=True):
    """A record default as TensorFlow takes it: a tensor, a one-element list, an empty list
    (required) or, for CsvDataset, a dtype (required, of that type)."""
    if hasattr(value, "as_numpy_dtype"):
        if not dtype_allowed:
            raise ValueError("Attempt to convert a value (%r) with an unsupported type (%s) to a Tensor."
                             % (value, type(value)))
        return convert_to_tensor(np.zeros([0], object if as_dtype(value) == string else as_dtype(value).as_numpy_dtype),
                                 as_dtype(value))
    if isinstance(value, _core.Tensor):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 0:
        raise ValueError("An empty record default needs a dtype: pass the dtype itself (tf.int32) for a required "
                         "column")
    return convert_to_tensor(value)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """One tensor per column, each of the records' shape (tf.io.decode_csv)."""
    del name
    if select_cols is not None and any(b <= a for a, b in zip(select_cols, select_cols[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    defaults = [_default(d, dtype_allowed=False) for d in record_defaults]
    return _core.decode_csv(convert_to_tensor(records, string), defaults, field_delim, bool(use_quote_delim),
                            na_value, list(select_cols or []))


def CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None, header=False, field_delim=",",
               use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None, name=None):
    """tf.data.experimental.CsvDataset: each line of the files as a tuple of column tensors
    (a header line skipped per file when header=True)."""
    del buffer_size, name
    from .data import TextLineDataset
    from .data._dataset import _filenames
    if exclude_cols is not None:
        raise NotImplementedError("kiln.data: CsvDataset(exclude_cols=...) is not implemented yet; use select_cols")
    files = _filenames(filenames)
    if not files:
        raise ValueError("CsvDataset needs at least one file")
    lines = None
    for f in files:
        one = TextLineDataset(f, compression_type=compression_type)
        if header:
            one = one.skip(1)
        lines = one if lines is None else lines.concatenate(one)
    defaults = [_default(d) for d in record_defaults]
    return lines.map(lambda line: tuple(decode_csv(line, defaults, field_delim, use_quote_delim, na_value=na_value,
                                                   select_cols=select_cols)))


def _infer_type(values):
    """TensorFlow's make_csv_dataset inference: int32 if every value is an int, else float32 if
    every value is a number, else string (empty values do not vote)."""
    kind = int32
    for v in values:
        if v == "":
            continue
        try:
            int(v)
            continue
        except ValueError:
            pass
        try:
            float(v)
            kind = float32
        except ValueError:
            return string
    return kind


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """tf.data.experimental.make_csv_dataset: batches of ({column: values}, label) or {column:
    values} from CSV files with a header, column types inferred as TensorFlow infers them."""
    del prefetch_buffer_size, num_parallel_reads, sloppy
    import csv

    from .data import AUTOTUNE
    if ignore_errors:
        raise NotImplementedError("kiln.data: make_csv_dataset(ignore_errors=True) is not implemented yet")
    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    files = sorted(f for p in patterns for f in _glob.glob(str(p)))
    if not files:
        raise ValueError("No files match `file_pattern` %s." % (file_pattern,))
    with open(files[0], encoding=encoding, newline="") as f:
        rows = list(csv.reader(f, delimiter=field_delim))[:num_rows_for_inference + 1]
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        column_names = rows[0]
    body = rows[1:] if header else rows
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    if select_columns is not None:
        indices = sorted(column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns)
    else:
        indices = list(range(len(column_names)))
    names = [column_names[i] for i in indices]
    if label_name is not None and label_name not in names:
        raise ValueError("`label_name` provided must be one of the columns: %s" % (names,))
    if column_defaults is None:
        defaults = []
        for i in indices:
            dtype = _infer_type([r[i] for r in body if i < len(r)])
            defaults.append(convert_to_tensor([b""] if dtype == string else [0], dtype))
    else:
        defaults = [_default(d) for d in column_defaults]
    ds = CsvDataset(files, defaults, compression_type=compression_type, header=header, field_delim=field_delim,
                    use_quote_delim=use_quote_delim, na_value=na_value,
                    select_cols=indices if select_columns is not None else None)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    ds = ds.batch(batch_size)

    def to_dict(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    return ds.map(to_dict, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)
