"""tf.train.Example, Features, Feature, BytesList, FloatList and Int64List: TensorFlow's
example.proto and feature.proto messages in pure Python (protobuf's wire format, no protobuf
package): built with keyword arguments, serialized with SerializeToString, read with
FromString/ParseFromString, printed in protobuf's text format. Parsing treats the bytes as
hostile: a malformed message is a DecodeError (ValueError), never a crash."""
import struct


class DecodeError(ValueError):
    """A serialized message that is not a valid one (google.protobuf.message.DecodeError)."""


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DecodeError("Truncated message.")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("Too many bytes when decoding varint.")


def _fields(data):
    """(field number, wire type, value) of each field; a length-delimited value as bytes."""
    data = bytes(data)
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("Field number 0 is invalid.")
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            if pos + 8 > len(data):
                raise DecodeError("Truncated message.")
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _read_varint(data, pos)
            if pos + n > len(data):
                raise DecodeError("Truncated message.")
            value, pos = data[pos:pos + n], pos + n
        elif wire == 5:
            if pos + 4 > len(data):
                raise DecodeError("Truncated message.")
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise DecodeError("Unexpected wire type %d." % wire)
        yield number, wire, value


def _length_delimited(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class _Message:
    """What every message class shares: FromString, ByteSize, str as the text format."""

    def __str__(self):
        return repr(self)

    def ByteSize(self):
        return len(self.SerializeToString())

    @classmethod
    def FromString(cls, data):
        msg = cls()
        msg.ParseFromString(data)
        return msg


class _List(_Message):
    def __init__(self, value=None):
        self.value = list(value) if value is not None else []

    def __eq__(self, other):
        return type(self) is type(other) and self.value == other.value

    def __repr__(self):
        return "".join("value: %s\n" % self._text(v) for v in self.value)

    def ListFields(self):
        return [("value", self.value)] if self.value else []


class BytesList(_List):
    def _text(self, v):
        return '"%s"' % "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else "\\%03o" % c for c in v)

    def SerializeToString(self):
        return b"".join(_length_delimited(1, v.encode() if isinstance(v, str) else bytes(v)) for v in self.value)

    def ParseFromString(self, data):
        self.value = [bytes(v) for n, w, v in _fields(data) if n == 1 and w == 2]
        return len(data)


class FloatList(_List):
    def __init__(self, value=None):
        # A float field holds float32: values read back rounded, as protobuf's do.
        super().__init__([struct.unpack("<f", struct.pack("<f", float(v)))[0] for v in (value or [])])

    def _text(self, v):
        """protobuf's text form of a float: %.6g when that reads back as the same float32, else %.9g."""
        f = struct.unpack("<f", struct.pack("<f", v))[0]
        text = "%.6g" % f
        return text if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f else "%.9g" % f

    def SerializeToString(self):
        if not self.value:
            return b""
        return _length_delimited(1, struct.pack("<%df" % len(self.value), *self.value))

    def ParseFromString(self, data):
        out = []
        for n, w, v in _fields(data):
            if n != 1:
                continue
            if w == 2:
                if len(v) % 4:
                    raise DecodeError("A packed float field's length is not a multiple of 4.")
                out.extend(struct.unpack("<%df" % (len(v) // 4), v))
            elif w == 5:
                out.append(struct.unpack("<f", v)[0])
        self.value = out
        return len(data)


class Int64List(_List):
    def _text(self, v):
        return str(v)

    def SerializeToString(self):
        if not self.value:
            return b""
        return _length_delimited(1, b"".join(_varint(int(v)) for v in self.value))

    def ParseFromString(self, data):
        out = []
        for n, w, v in _fields(data):
            if n != 1:
                continue
            if w == 2:
                pos = 0
                while pos < len(v):
                    x, pos = _read_varint(v, pos)
                    out.append(x - (1 << 64) if x >= 1 << 63 else x)
            elif w == 0:
                out.append(v - (1 << 64) if v >= 1 << 63 else v)
        self.value = out
        return len(data)


class Feature(_Message):
    """One of bytes_list, float_list, int64_list."""

    _KINDS = (("bytes_list", BytesList, 1), ("float_list", FloatList, 2), ("int64_list", Int64List, 3))

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [(k, v) for k, v in (("bytes_list", bytes_list), ("float_list", float_list),
                                     ("int64_list", int64_list)) if v is not None]
        if len(given) > 1:
            raise ValueError("A Feature holds one of bytes_list, float_list and int64_list")
        self._kind, self._value = given[0] if given else (None, None)

    def WhichOneof(self, name):
        return self._kind

    def HasField(self, name):
        return self._kind == name

    def __getattr__(self, name):
        for kind, cls, _ in Feature._KINDS:
            if name == kind:
                return self._value if self._kind == kind else cls()
        raise AttributeError(name)

    def __eq__(self, other):
        return type(other) is Feature and self._kind == other._kind and self._value == other._value

    def __repr__(self):
        if self._kind is None:
            return ""
        inner = "".join("  " + line + "\n" for line in repr(self._value).splitlines())
        return "%s {\n%s}\n" % (self._kind, inner)


    def SerializeToString(self):
        for kind, _, number in Feature._KINDS:
            if self._kind == kind:
                return _length_delimited(number, self._value.SerializeToString())
        return b""

    def ParseFromString(self, data):
        self._kind = self._value = None
        for n, w, v in _fields(data):
            for kind, cls, number in Feature._KINDS:
                if n == number and w == 2:
                    self._kind, self._value = kind, cls.FromString(v)
        return len(data)


class Features(_Message):
    def __init__(self, feature=None):
        self.feature = dict(feature or {})

    def __eq__(self, other):
        return type(other) is Features and self.feature == other.feature

    def __repr__(self):
        out = ""
        for key in sorted(self.feature):
            body = "".join("    " + line + "\n" for line in repr(self.feature[key]).splitlines())
            out += 'feature {\n  key: "%s"\n  value {\n%s  }\n}\n' % (key, body)
        return out


    def SerializeToString(self):
        out = b""
        for key in sorted(self.feature):
            entry = _length_delimited(1, key.encode()) + _length_delimited(2, self.feature[key].SerializeToString())
            out += _length_delimited(1, entry)
        return out

    def ParseFromString(self, data):
        self.feature = {}
        for n, w, v in _fields(data):
            if n != 1 or w != 2:
                continue
            key, value = b"", Feature()
            for m, mw, mv in _fields(v):
                if m == 1 and mw == 2:
                    key = mv
                elif m == 2 and mw == 2:
                    value = Feature.FromString(mv)
            try:
                self.feature[key.decode()] = value
            except UnicodeDecodeError:
                raise DecodeError("A feature key is not valid UTF-8.") from None
        return len(data)


class Example(_Message):
    def __init__(self, features=None):
        self.features = features if features is not None else Features()

    def __eq__(self, other):
        return type(other) is Example and self.features == other.features

    def __repr__(self):
        body = "".join("  " + line + "\n" for line in repr(self.features).splitlines())
        return "features {\n%s}\n" % body


    def SerializeToString(self):
        return _length_delimited(1, self.features.SerializeToString())

    def ParseFromString(self, data):
        if hasattr(data, "numpy"):
            data = data.numpy()
        self.features = Features()
        for n, w, v in _fields(data):
            if n == 1 and w == 2:
                self.features = Features.FromString(v)
        return len(data)
