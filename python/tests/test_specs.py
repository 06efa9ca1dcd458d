"""simplify, load_io_transposes, validate, the module's surface (version, errors, help)."""
import json
import os
import pathlib

import numpy as np
import pytest

import iotx

from conftest import SOURCE_DIR


def test_version_matches_the_library():
    version_h = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert f"VERSION {iotx.__version__}\n" in version_h


def test_error_classes():
    assert issubclass(iotx.Error, ValueError)
    assert issubclass(iotx.FileError, iotx.Error) and issubclass(iotx.FileError, OSError)


def test_help_is_useful():
    doc = iotx.apply.__doc__
    assert doc.startswith("apply(array, reshape, transpose, *, out=None, threads=None)")
    for word in ("__dlpack__", "strides", "NCC_IHNW003", "GIL"):
        assert word in doc
    stubs = pathlib.Path(iotx.__file__).with_name("__init__.pyi")
    assert stubs.exists() and pathlib.Path(iotx.__file__).with_name("py.typed").exists()
    assert "def apply(" in stubs.read_text()


def test_simplify_the_source_documents_example():
    assert iotx.simplify([6144, 256], [3, 16, 128, 2, 2, 64], [0, 4, 5, 3, 1, 2]) == (
        [3, 2048, 2, 128], [0, 3, 2, 1])
    assert iotx.simplify((768, 768), np.array([768, 768]), [1, 0]) == ([768, 768], [1, 0])
    with pytest.raises(iotx.Error) as e:
        iotx.simplify([6144, 256], [3, 16, 128, 2, 2, 32], [0, 4, 5, 3, 1, 2])
    assert e.value.code == "NCC_IHNW003"


def test_simplified_specs_give_numpy_the_same_bytes(rng_seed):
    rng = np.random.default_rng(rng_seed)
    for _ in range(50):
        shape = [int(n) for n in rng.integers(1, 7, size=int(rng.integers(1, 4)))]
        reshape = []
        for n in shape:
            reshape += [2, n // 2] if n % 2 == 0 and n > 2 and rng.random() < 0.5 else [n]
        perm = list(rng.permutation(len(reshape)))
        r, t = iotx.simplify(shape, reshape, perm)
        a = np.arange(int(np.prod(shape))).reshape(shape)
        assert np.array_equal(iotx.apply(a, r, t).ravel(), a.reshape(reshape).transpose(perm).ravel())


def test_load_io_transposes(tmp_path):
    f = tmp_path / "io_transposes.json"
    f.write_text(json.dumps([
        {"input_name": "p0", "reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]},
        {"input_name": "w", "reshape": [768, 768], "transpose": [1, 0]},
        {"input_name": "w", "reshape": [768, 768], "transpose": [0, 1]},
    ]))
    with pytest.warns(UserWarning, match="w"):
        specs = iotx.load_io_transposes(f)
    assert specs == {"p0": {"reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]},
                     "w": {"reshape": [768, 768], "transpose": [1, 0]}}
    with pytest.raises(iotx.Error) as e:
        iotx.load_io_transposes(tmp_path / "missing.json")
    assert e.value.code == "NCC_IHNW002"


def test_validate_reports_every_problem(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps([
        {"input_name": "a", "reshape": [2, 3], "transpose": [0, 0]},
        {"input_name": "b", "reshape": "x", "transpose": [0]},
        {"input_name": "c", "reshape": [4], "transpose": [0]},
    ]))
    report = iotx.validate(f)
    assert not report["ok"]
    codes = [(p["code"], p["element"], p["key"]) for p in report["problems"]]
    assert ("IOTX_E110", 0, "transpose") in codes
    assert ("IOTX_E103", 1, "reshape") in codes
    assert all(p["file"] == str(f) for p in report["problems"])
    assert report["specs"][str(f)] == {"c": {"reshape": [4], "transpose": [0]}}
    assert report["summaries"] == [f"{f}: 2 errors"]

    good = SOURCE_DIR / "examples" / "io_transposes.json"
    report = iotx.validate([good])
    assert report["ok"] and report["problems"] == []
    missing = iotx.validate(tmp_path / "none.json")
    assert missing["problems"][0]["code"] == "IOTX_E300"


def test_validate_modular_needs_a_netlist(tmp_path):
    parts = []
    for k in range(2):
        p = tmp_path / f"sg0{k}.json"
        p.write_text(json.dumps([{"input_name": "x", "reshape": [4], "transpose": [0]}]))
        parts.append(p)
    report = iotx.validate(modular=parts)
    codes = {p["code"] for p in report["problems"]}
    assert "NCC_IHNW001" in codes and "NCC_IIOT001" in codes


def test_file_errors_are_oserrors(tmp_path):
    with pytest.raises(OSError) as e:
        iotx.materialize(tmp_path / "no-such-dir")
    assert isinstance(e.value, iotx.FileError) and e.value.code.startswith("IOTX_E3")


def test_a_side_file_with_a_byte_that_is_not_utf8_is_reported(tmp_path):
    bad = tmp_path / "io_transposes.json"
    bad.write_bytes(b'[{"input_name":"\xff","reshape":[12,12],"transpose":[1,0]}]')
    report = iotx.validate(bad)
    assert not report["ok"]
    [problem] = report["problems"]
    assert problem["code"] == "IOTX_E100" and "\\xff" in problem["message"]
    with pytest.raises(iotx.Error) as e:
        iotx.load_io_transposes(bad)
    assert e.value.code == "IOTX_E100" and "\\xff" in str(e.value)
    with pytest.raises(iotx.Error) as e:
        iotx.InputTransformer.from_json(bad.read_bytes(), [("x", (12, 12), "f4")])
    assert e.value.code == "IOTX_E100"


def test_paths_with_a_nul_byte_are_refused(tmp_path):
    good = tmp_path / "io.json"
    good.write_text(json.dumps([{"input_name": "x", "reshape": [12, 12], "transpose": [1, 0]}]))
    array = tmp_path / "x.npy"
    np.save(array, np.zeros((12, 12), np.float32))
    out = tmp_path / "out"
    for call in (lambda: iotx.load_io_transposes(str(good) + "\0other"),
                 lambda: iotx.validate(str(good) + "\0other"),
                 lambda: iotx.materialize(str(tmp_path) + "\0other"),
                 lambda: iotx.apply_files(good, str(out) + "\0other", inputs={"x": array}),
                 lambda: iotx.apply_files(good, out, inputs={"x": str(array) + "\0other"})):
        with pytest.raises(iotx.Error) as e:
            call()
        assert e.value.code == "IOTX_E400" and "NUL" in str(e.value)
    assert not out.exists()


def test_bytes_paths_name_the_file_they_spell(tmp_path):
    spec = {"x": {"reshape": [12, 12], "transpose": [1, 0]}}
    name = os.fsdecode(b"io-\xff.json")  # not UTF-8: a surrogate escape in the str
    path = tmp_path / name
    path.write_text(json.dumps([{"input_name": "x", "reshape": [12, 12], "transpose": [1, 0]}]))
    assert iotx.load_io_transposes(os.fsencode(path)) == spec
    assert iotx.load_io_transposes(path) == spec
    report = iotx.validate(os.fsencode(path))
    assert report["ok"] and list(report["specs"]) == [str(path)]
    missing = tmp_path / os.fsdecode(b"missing-\xff.json")
    with pytest.raises(iotx.Error) as e:
        iotx.load_io_transposes(missing)
    assert e.value.file == str(missing)  # the same name back, as os.fsdecode spells it
    with pytest.raises(iotx.Error) as e:
        iotx.load_io_transposes(12)
    assert e.value.code == "IOTX_E400" and "not int" in str(e.value)
