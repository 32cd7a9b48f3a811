"""Which OpenBLAS libkiln loads (src/kernels/blas_loader.cc loads it itself, at first use).
Where the scipy-openblas32 wheel is installed (kiln's wheel depends on it), its OpenBLAS is
used, system library or not: found here without importing it, and named by
KILN_OPENBLAS_LIBRARY, which the loader tries first. Imports nothing of kiln: the `kiln`
console command (_kiln_cli) runs this file on its own."""
import importlib.util
import os


def point_at_wheel_openblas():
    if os.environ.get("KILN_OPENBLAS_LIBRARY"):
        return
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    names = sorted(n for n in (os.listdir(lib) if os.path.isdir(lib) else ()) if n.startswith("libscipy_openblas"))
    if names:
        os.environ["KILN_OPENBLAS_LIBRARY"] = os.path.join(lib, names[0])
