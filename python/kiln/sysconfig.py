"""kiln.sysconfig (tf.sysconfig): how this kiln was built and what it runs on."""
import collections

from . import _core

__all__ = ["get_build_info"]


def get_build_info():
    """As TensorFlow's: a dict of build facts. kiln has no CUDA, ROCm or TensorRT build; its
    own keys say which instruction set its kernels run on this CPU ("avx512", "avx2",
    "baseline": picked when the library loads, lowered by KILN_CPU_ISA) and the highest the
    CPU supports, "gemm_library": the library large float products run on ("openblas
    (<core>)" or "eigen"), and "convolution_library": the library float32 convolutions run on
    ("onednn <version> (<isa>)" where libdnnl.so.2 is installed, else "kiln (<why>)")."""
    return collections.OrderedDict([
        ("is_cuda_build", False),
        ("is_rocm_build", False),
        ("is_tensorrt_build", False),
        ("cpu_isa", _core.cpu_isa()),
        ("cpu_isa_supported", _core.cpu_isa_supported()),
        ("gemm_library", _core.gemm_library()),
        ("convolution_library", _core.convolution_library()),
    ])
