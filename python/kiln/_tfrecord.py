"""tf.io.TFRecordWriter and TFRecordOptions: TensorFlow's record files (length, masked CRC-32C,
data, masked CRC-32C), plain or GZIP/ZLIB compressed, written by kiln's C++ writer."""
from . import _core


class TFRecordOptions:
    """tf.io.TFRecordOptions: the compression of a record file ("", "GZIP" or "ZLIB")."""

    compression_type_map = {None: "", "": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        del flush_mode, input_buffer_size, output_buffer_size, window_bits, compression_level
        del compression_method, mem_level, compression_strategy
        if compression_type not in self.compression_type_map:
            raise ValueError('Unsupported compression_type: %s. Supported compression types are "GZIP", "ZLIB" and ""'
                             % (compression_type,))
        self.compression_type = compression_type

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.compression_type_map[options.compression_type]
        return cls.compression_type_map[cls(options).compression_type]


class TFRecordWriter:
    """tf.io.TFRecordWriter: `with TFRecordWriter(path) as w: w.write(serialized)`."""

    def __init__(self, path, options=None):
        compression = TFRecordOptions.get_compression_type_string(options)
        self._core = _core.TFRecordWriterCore(str(path), compression)

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        elif isinstance(record, _core.Tensor):
            record = record.numpy()
        self._core.write(bytes(record))

    def flush(self):
        self._core.flush()

    def close(self):
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
