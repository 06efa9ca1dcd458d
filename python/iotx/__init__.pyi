# Type stubs for the iotx package (the compiled iotx._iotx re-exported by __init__.py).
import os
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence, TypedDict, TypeVar, Union

_PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Array = TypeVar("_Array")  # numpy.ndarray, torch.Tensor, ... (the result has the input's kind)

__version__: str

class Error(ValueError):
    code: str  # "IOTX_E401", "NCC_IHNW003", ...
    message: str
    file: Optional[str]
    element: Optional[int]
    key: Optional[str]

class FileError(Error, OSError): ...

class Problem(TypedDict):
    code: str
    file: Optional[str]
    element: Optional[int]
    key: Optional[str]
    message: str

class Spec(TypedDict):
    reshape: list[int]
    transpose: list[int]

class Validation(TypedDict):
    ok: bool
    problems: list[Problem]
    warnings: list[Problem]
    summaries: list[str]
    specs: dict[str, dict[str, Spec]]
    combined: dict[str, Spec]

class TensorReport(TypedDict):
    name: str
    shape: list[int]
    device_shape: list[int]
    type: str
    bytes: int
    transposed: bool
    file: Optional[str]

class LinkReport(TypedDict):
    link: str
    target: str
    outcome: Literal["created", "replaced", "unchanged"]

class MaterializeReport(TypedDict):
    root: str
    nothing_to_do: Optional[str]
    spec_count: int
    json_rewritten: bool
    pickle_written: bool
    stale_temps_removed: int
    inputs: list[TensorReport]
    links: list[LinkReport]
    warnings: list[Problem]

class ApplyReport(TypedDict):
    tensors: list[TensorReport]
    files: list[str]
    total_bytes: int
    warnings: list[Problem]
    skipped: list[str]
    shards: int
    incomplete: list[str]
    index: Optional[str]

class WrapReport(TypedDict):
    produced: bool
    output: Optional[str]
    num_parameters: int
    num_transposed: int
    num_zero_sized: int
    neff_bytes: int
    warnings: list[Problem]

def apply(
    array: _Array,
    reshape: Sequence[int],
    transpose: Sequence[int],
    *,
    out: Optional[Any] = None,
    threads: Optional[int] = None,
) -> _Array: ...
def simplify(
    shape: Sequence[int], reshape: Sequence[int], transpose: Sequence[int]
) -> tuple[list[int], list[int]]: ...
def load_io_transposes(
    path: Optional[_PathLike] = None,
    *,
    modular: Optional[Sequence[_PathLike]] = None,
    netlist: Optional[_PathLike] = None,
) -> dict[str, Spec]: ...
def validate(
    path: Union[_PathLike, Sequence[_PathLike], None] = None,
    netlist: Optional[_PathLike] = None,
    modular: Optional[Sequence[_PathLike]] = None,
) -> Validation: ...
def materialize(workdir: _PathLike, verify: bool = False) -> MaterializeReport: ...
def apply_files(
    io_transposes: _PathLike,
    out_dir: _PathLike,
    *,
    inputs: Optional[Mapping[str, _PathLike]] = None,
    tensors: Optional[_PathLike] = None,
    format: Optional[Literal["npy", "safetensors"]] = None,
) -> ApplyReport: ...
def wrap(
    hlo: _PathLike,
    neff: _PathLike,
    output: _PathLike,
    *,
    io_transposes: Optional[_PathLike] = None,
    modular: Optional[Sequence[_PathLike]] = None,
    netlist: Optional[_PathLike] = None,
) -> WrapReport: ...

# A parameter: (shape, dtype), (name, shape, dtype), {"name"?, "shape", "dtype"} or an array.
_Parameter = Any

class InputTransformer:
    @staticmethod
    def from_attributes(
        valid_inputs: str,
        required_transpose: str,
        neff_input_names: str,
        parameters: Sequence[_Parameter],
        *,
        threads: Optional[int] = None,
    ) -> InputTransformer: ...
    @staticmethod
    def from_json(
        json: Union[str, bytes],
        parameters: Sequence[_Parameter],
        *,
        threads: Optional[int] = None,
        ignore_unmatched: bool = False,
    ) -> InputTransformer: ...
    @property
    def num_inputs(self) -> int: ...
    def input_name(self, i: int) -> str: ...
    def is_fed(self, i: int) -> bool: ...
    def has_transpose(self, i: int) -> bool: ...
    def changes_layout(self, i: int) -> bool: ...
    def input_shape(self, i: int) -> tuple[int, ...]: ...
    def output_shape(self, i: int) -> tuple[int, ...]: ...
    def dtype(self, i: int) -> Any: ...
    def describe(self, i: int) -> str: ...
    def apply(self, i: int, x: _Array, out: Optional[Any] = None) -> _Array: ...
    def apply_all(self, xs: Iterable[Any]) -> list[Any]: ...
