"""iotx: static IO transposes for the AWS Neuron compiler's inputs, from Python.

The permute kernel (``apply``), the schema (``simplify``, ``load_io_transposes``,
``validate``), the runtime (``InputTransformer``) and the compiler-side commands
(``materialize``, ``apply_files``, ``wrap``) of the iotx C++ library. Errors raise
``iotx.Error`` (a ValueError) or ``iotx.FileError`` (also an OSError) with ``.code``.

    >>> import numpy as np, iotx
    >>> a = np.arange(6144 * 256, dtype=np.float32).reshape(6144, 256)
    >>> d = iotx.apply(a, [3, 2048, 2, 128], [0, 3, 2, 1])
    >>> d.shape
    (3, 128, 2, 2048)
"""

from ._iotx import (
    Error,
    FileError,
    InputTransformer,
    __version__,
    apply,
    apply_files,
    load_io_transposes,
    materialize,
    simplify,
    validate,
    wrap,
)

__all__ = [
    "Error",
    "FileError",
    "InputTransformer",
    "__version__",
    "apply",
    "apply_files",
    "load_io_transposes",
    "materialize",
    "simplify",
    "validate",
    "wrap",
]
