"""nicmatrix: what NIC offloads and MTU buy, in throughput and CPU, from Python."""
import json as _json

from . import _nicmatrix
from ._nicmatrix import Error

__version__ = _nicmatrix.__version__

__all__ = ["Error", "__version__", "lab"]


def lab(name="nmlab"):
    """The built-in lab NAME as a dict (namespaces, interfaces, addresses); raises Error if it is not up."""
    return _json.loads(_nicmatrix.lab_describe_json(name))
