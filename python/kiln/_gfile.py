"""tf.io.gfile for local files: GFile (a file object, text or binary by mode), exists, isdir,
listdir, glob, makedirs, mkdir, remove, rmtree, rename, copy, stat. Errors are TensorFlow's
classes: NotFoundError for a missing path, AlreadyExistsError when a rename or copy would
overwrite without overwrite=True."""
import glob as _glob
import os
import shutil

from . import errors


def _path(p):
    return os.fspath(p.decode() if isinstance(p, bytes) else p)


def _not_found(path):
    return errors.NotFoundError(None, None, "%s; No such file or directory" % path)


class GFile:
    """A local file (tf.io.gfile.GFile): read, readline, readlines, write, seek, tell, size,
    iteration, close, and use as a context manager."""

    def __init__(self, name, mode="r"):
        self.name, self.mode = _path(name), mode
        try:
            self._f = open(self.name, mode)
        except FileNotFoundError:
            raise _not_found(self.name) from None

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()

    def readlines(self):
        return self._f.readlines()

    def write(self, data):
        self._f.write(data)

    def flush(self):
        self._f.flush()

    def seek(self, offset=None, whence=0, position=None):
        self._f.seek(position if position is not None else offset, whence)

    def tell(self):
        return self._f.tell()

    def size(self):
        return os.path.getsize(self.name)

    def close(self):
        self._f.close()

    def __iter__(self):
        return iter(self._f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


Open = GFile


def exists(path):
    return os.path.exists(_path(path))


def isdir(path):
    return os.path.isdir(_path(path))


def listdir(path):
    path = _path(path)
    if not os.path.isdir(path):
        raise _not_found(path)
    return sorted(os.listdir(path))


def glob(pattern):
    return sorted(_glob.glob(_path(pattern)))


def makedirs(path):
    os.makedirs(_path(path), exist_ok=True)


def mkdir(path):
    path = _path(path)
    if os.path.exists(path):
        raise errors.AlreadyExistsError(None, None, "%s; File exists" % path)
    os.mkdir(path)


def remove(path):
    path = _path(path)
    if not os.path.exists(path):
        raise _not_found(path)
    os.remove(path)


def rmtree(path):
    path = _path(path)
    if not os.path.exists(path):
        raise _not_found(path)
    shutil.rmtree(path)


def _transfer(src, dst, overwrite, move):
    """rename (move) or copy src to dst, refusing to overwrite unless asked."""
    src, dst = _path(src), _path(dst)
    if not os.path.exists(src):
        raise _not_found(src)
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    os.replace(src, dst) if move else shutil.copyfile(src, dst)


def rename(src, dst, overwrite=False):
    _transfer(src, dst, overwrite, move=True)


def copy(src, dst, overwrite=False):
    _transfer(src, dst, overwrite, move=False)


class _Stat:
    def __init__(self, st):
        self.length, self.mtime_nsec, self.is_directory = st.st_size, st.st_mtime_ns, None


def stat(path):
    path = _path(path)
    if not os.path.exists(path):
        raise _not_found(path)
    s = _Stat(os.stat(path))
    s.is_directory = os.path.isdir(path)
    return s


def join(path, *paths):
    return os.path.join(_path(path), *[_path(p) for p in paths])


__all__ = ["GFile", "Open", "exists", "isdir", "listdir", "glob", "makedirs", "mkdir", "remove", "rmtree", "rename",
           "copy", "stat", "join"]
