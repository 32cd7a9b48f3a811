"""kiln.experimental."""
from . import dlpack

__all__ = ["dlpack"]
