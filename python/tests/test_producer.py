"""materialize, apply_files, wrap on a copy of the example work dir (examples/workdir)."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import iotx

from conftest import SOURCE_DIR


@pytest.fixture
def workdir(tmp_path):
    d = tmp_path / "workdir"
    shutil.copytree(SOURCE_DIR / "examples" / "workdir", d)
    subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "make_workdir.py"), str(d)],
                   check=True, capture_output=True)
    return d


def test_materialize_verify_then_nothing_changes(workdir):
    report = iotx.materialize(workdir, verify=True)
    assert report["nothing_to_do"] is None and report["json_rewritten"] and report["pickle_written"]
    by_name = {t["name"]: t for t in report["inputs"]}
    assert by_name["p0"]["device_shape"] == [3, 128, 2, 2048] and by_name["p0"]["transposed"]
    assert not by_name["input_ids"]["transposed"]
    assert {link["outcome"] for link in report["links"]} == {"created"}
    p0 = np.load(workdir / "transposed_inputs" / "value_p0.npy")
    src = np.load(workdir / "inp-000.p", allow_pickle=True)["p0"]
    assert np.array_equal(p0, src.reshape(3, 2048, 2, 128).transpose(0, 3, 2, 1))
    assert json.loads((workdir / "io_transposes.json").read_text())[0]["reshape"] == [3, 2048, 2, 128]
    again = iotx.materialize(workdir, verify=True)
    assert not again["json_rewritten"]
    assert {link["outcome"] for link in again["links"]} == {"unchanged"}


def test_apply_files(workdir, tmp_path):
    out = tmp_path / "out"
    report = iotx.apply_files(workdir / "io_transposes.json", out, tensors=workdir / "inp-000.p")
    assert [t["name"] for t in report["tensors"]] == ["p0", "weight_7", "input_ids"]
    assert len(report["files"]) == 3 and report["total_bytes"] > 0
    w = np.load(out / "value_weight_7.npy")
    src = np.load(workdir / "inp-000.p", allow_pickle=True)["weight_7"]
    assert np.array_equal(w, src.T)
    np.save(tmp_path / "w.npy", src)
    spec = tmp_path / "w.json"
    spec.write_text(json.dumps([{"input_name": "weight_7", "reshape": [768, 768], "transpose": [1, 0]}]))
    single = iotx.apply_files(spec, tmp_path / "one", inputs={"weight_7": tmp_path / "w.npy"},
                              format="safetensors")
    assert single["files"][0].endswith(".safetensors") and single["tensors"][0]["transposed"]
    with pytest.raises(iotx.Error) as e:  # a spec for an input not given
        iotx.apply_files(workdir / "io_transposes.json", tmp_path / "two",
                         inputs={"weight_7": tmp_path / "w.npy"})
    assert e.value.code == "IOTX_E117"
    with pytest.raises(iotx.Error):
        iotx.apply_files(workdir / "io_transposes.json", out)


def test_wrap(workdir, tmp_path):
    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.skip("protoc is not installed")
    module = tmp_path / "module.pb"
    with open(SOURCE_DIR / "examples" / "module.textproto", "rb") as text, open(module, "wb") as pb:
        subprocess.run([protoc, "--encode=xla.HloModuleProto", f"-I{SOURCE_DIR / 'src' / 'hlo'}",
                        str(SOURCE_DIR / "src" / "hlo" / "hlo.proto")], stdin=text, stdout=pb,
                       check=True)
    neff = tmp_path / "model.neff"
    neff.write_bytes(b"neff")
    iotx.materialize(workdir)
    report = iotx.wrap(module, neff, tmp_path / "wrapped.pb",
                       io_transposes=workdir / "io_transposes.json")
    assert report["produced"] and report["num_transposed"] == 2 and report["neff_bytes"] == 4
    assert (tmp_path / "wrapped.pb").stat().st_size > 0
    with pytest.raises(iotx.Error):
        iotx.wrap(module, neff, tmp_path / "x.pb")


def test_apply_files_inputs_must_be_a_mapping(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(144, dtype=np.float32).reshape(12, 12))
    spec = tmp_path / "none.json"
    spec.write_text("[]")
    with pytest.raises(iotx.Error) as e:  # a list was read as no inputs at all, and "succeeded"
        iotx.apply_files(spec, tmp_path / "o1", inputs=[("x", tmp_path / "x.npy")])
    assert e.value.code == "IOTX_E400" and "not list" in str(e.value)
    assert not (tmp_path / "o1").exists()
    report = iotx.apply_files(spec, tmp_path / "o2", inputs={"x": tmp_path / "x.npy"})
    assert np.array_equal(np.load(report["files"][0]), np.load(tmp_path / "x.npy"))
