"""`import tensorflow` resolving to kiln: the import hook behind kiln.install_as_tensorflow().

A finder placed first on sys.meta_path answers every `tensorflow` and `tensorflow.X.Y` import, so
the real TensorFlow, installed or not, is never loaded in the process:
- `tensorflow` is kiln, `tensorflow.X.Y` is kiln's module `kiln.X.Y` (or the module object kiln
  exposes as the attribute `kiln.X.Y`);
- TensorFlow's internal modules that libraries import (`tensorflow.python.eager.context`, ...) map
  to kiln modules through INTERNAL_MODULES; the packages above them are empty stand-ins;
- anything else raises ModuleNotFoundError naming the TensorFlow module kiln lacks, rather than
  falling through to another finder.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from . import _public_name

from ._tf_internal import MODULES as INTERNAL_MODULES

_ROOT = "tensorflow"


class _Alias(importlib.abc.Loader):
    """Loads an existing module object under a TensorFlow name (no new module is made). The import
    system stamps its spec and loader on the module; exec_module puts kiln's back, so the module
    stays kiln's own (importlib.reload, tools reading __spec__) under both names."""

    def __init__(self, module):
        self._module = module
        self._own = {k: module.__dict__[k] for k in ("__spec__", "__loader__") if k in module.__dict__}

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        module.__dict__.update(self._own)


def _stand_in(fullname):
    """An empty package for `tensorflow.python` and the like: it only holds mapped submodules."""
    module = types.ModuleType(fullname, "TensorFlow's %s, as far as kiln provides it." % fullname)
    module.__path__ = []
    module.__kiln_stand_in__ = True

    def missing(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("module '%s' has no attribute '%s' (kiln does not provide TensorFlow's %s.%s)"
                             % (fullname, name, fullname, name))

    module.__getattr__ = missing
    return module


def _kiln_module(rest):
    """kiln's module for `tensorflow.<rest>`, or None."""
    import kiln
    if not rest:
        return kiln
    name = "kiln." + rest
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or not name.startswith(e.name):
            raise  # a module that exists failed to import something else: not ours to hide
    obj = kiln
    for part in rest.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, types.ModuleType) else None


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ROOT and not fullname.startswith(_ROOT + "."):
            return None
        rest = fullname[len(_ROOT) + 1:]
        if fullname in INTERNAL_MODULES:
            module = importlib.import_module(INTERNAL_MODULES[fullname])
        elif any(name.startswith(fullname + ".") for name in INTERNAL_MODULES):
            module = _kiln_module(rest) or _stand_in(fullname)
        else:
            module = _kiln_module(rest)
        if module is None:
            raise ModuleNotFoundError("No module named '%s' (kiln does not provide TensorFlow's %s)"
                                      % (fullname, fullname), name=fullname)
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _Alias(module), is_package=is_package)


_finder = _Finder()


def install(reprs_say_tf=True):
    """Makes every later `import tensorflow` in this process give kiln, and (by default) reprs
    say `tf.`."""
    import kiln
    loaded = sorted(name for name, module in sys.modules.items()
                    if (name == _ROOT or name.startswith(_ROOT + ".")) and module is not None
                    and not _is_ours(module))
    if loaded:
        raise RuntimeError("kiln.install_as_tensorflow(): the real TensorFlow is already imported in this process "
                           "(%s, from %s); call it before anything imports tensorflow"
                           % (loaded[0], getattr(sys.modules[loaded[0]], "__file__", "?")))
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    sys.modules[_ROOT] = kiln
    # `from tensorflow.experimental import dtensor` asks the parent by its own name (kiln's),
    # so a mapped module under a kiln module must already be the parent's attribute.
    for name, target in INTERNAL_MODULES.items():
        parent, _, child = name.rpartition(".")
        parent_module = _kiln_module(parent[len(_ROOT) + 1:])
        if parent_module is not None and not hasattr(parent_module, child):
            setattr(parent_module, child, importlib.import_module(target))
    _take_tensorflow_class_paths()
    if reprs_say_tf:
        _public_name.set_prefix("tf")


def _take_tensorflow_class_paths():
    """kiln's tensor, dataset, ragged and sparse classes report TensorFlow's module paths:
    libraries recognize TensorFlow's types by class name and module (Keras's data adapters test
    for "tensorflow.python." in a class's module), and in this process those classes are
    TensorFlow's."""
    import kiln
    from .data._dataset import DatasetV2
    paths = {kiln.Tensor: "tensorflow.python.framework.tensor",
             DatasetV2: "tensorflow.python.data.ops.dataset_ops",
             kiln.RaggedTensor: "tensorflow.python.ops.ragged.ragged_tensor",
             kiln.SparseTensor: "tensorflow.python.framework.sparse_tensor",
             kiln.Variable: "tensorflow.python.ops.variables",
             kiln.IndexedSlices: "tensorflow.python.framework.indexed_slices"}
    for cls, module in paths.items():
        cls.__module__ = module


def _is_ours(module):
    name = getattr(module, "__name__", "")
    return name == "kiln" or name.startswith("kiln.") or getattr(module, "__kiln_stand_in__", False)
