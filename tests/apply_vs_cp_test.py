#!/usr/bin/python3
"""bench/apply_vs_cp.py --checkpoint on a small sharded checkpoint written here (Python's own
json and numpy): the checkpoint's tensors, specs and bytes as read back are the ones written,
every job runs, with --cold too, which drops the checkpoint's files from the page cache (checked
with util-linux's fincore on the file systems where that is sure to hold), the checkpoint itself
is left as it was, and --checkpoint without --io-transposes is a usage error.

Usage: apply_vs_cp_test.py SOURCE_DIR IOTX
"""
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SIZES = {"F32": 4, "BF16": 2, "F16": 2, "U8": 1}


def write_shard(path, tensors, rng):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in tensors:
        size = int(np.prod(shape)) * SIZES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + rng.bytes(offset))
    return offset


def digest(directory):
    return {name: hashlib.sha256(open(os.path.join(directory, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(directory))}


def cached_bytes(path):
    """The bytes of `path` in the page cache (fincore), or None where that cannot be told."""
    kind = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    if shutil.which("fincore") is None or kind.stdout.strip() not in ("ext2/ext3", "xfs"):
        return None
    r = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                       capture_output=True, text=True, check=True)
    return int(r.stdout.split()[0])


def main():
    source, iotx = sys.argv[1], sys.argv[2]
    script = os.path.join(source, "bench", "apply_vs_cp.py")
    spec = importlib.util.spec_from_file_location("apply_vs_cp", script)
    bench = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(source, "bench"))
    spec.loader.exec_module(bench)

    rng = np.random.default_rng(3)
    shards = {"model-00001-of-00002.safetensors": [("a.weight", "F32", [96, 80]),
                                                   ("a.bias", "F32", [80])],
              "model-00002-of-00002.safetensors": [("b.weight", "F16", [4, 64, 48]),
                                                   ("c.ids", "U8", [300])]}
    specs = [{"input_name": "a.weight", "reshape": [96, 80], "transpose": [1, 0]},
             {"input_name": "b.weight", "reshape": [4, 64, 48], "transpose": [0, 2, 1]}]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        os.makedirs(model)
        total = sum(write_shard(os.path.join(model, name), tensors, rng)
                    for name, tensors in shards.items())
        index = os.path.join(model, "model.safetensors.index.json")
        with open(index, "w") as f:
            json.dump({"metadata": {"total_size": total},
                       "weight_map": {t[0]: name for name, ts in shards.items() for t in ts}}, f)
        specs_path = os.path.join(model, "io_transposes.json")
        with open(specs_path, "w") as f:
            json.dump(specs, f)
        before = digest(model)

        files, tensors, tensor_bytes = bench.read_checkpoint(index, specs_path)
        assert [os.path.basename(f) for f in files] == sorted(shards), files
        by_spec = {s["input_name"]: (s["reshape"], s["transpose"]) for s in specs}
        expected = sorted((name, dtype, shape, by_spec.get(name))
                          for ts in shards.values() for name, dtype, shape in ts)
        assert sorted(tensors) == expected, tensors
        assert tensor_bytes == total, (tensor_bytes, total)

        r = subprocess.run([sys.executable, script, "--iotx", iotx, "--checkpoint", index,
                            "--io-transposes", specs_path, "--runs", "1",
                            "--dir", os.path.join(tmp, "scratch")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        for job in ("cp", "cp+sync", "apply", "apply-nosync", "apply-buffered"):
            assert f"  {job} " in r.stdout, (job, r.stdout)
        assert "2 data file(s)" in r.stdout, r.stdout
        assert "largest tensor 0 MiB" in r.stdout and "kernel alone" in r.stdout, r.stdout
        assert digest(model) == before, "the checkpoint was changed"

        # --cold: every job reads the checkpoint from the disk.
        for path in files:
            open(path, "rb").read()
        bench.evict(files)
        for path in files:
            cached = cached_bytes(path)
            assert cached in (None, 0), (path, cached)
        r = subprocess.run([sys.executable, script, "--iotx", iotx, "--checkpoint", index,
                            "--io-transposes", specs_path, "--runs", "1", "--cold",
                            "--dir", os.path.join(tmp, "scratch")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "read from the disk (--cold)" in r.stdout, r.stdout
        for job in ("cp", "cp+sync", "apply", "apply-nosync", "apply-buffered"):
            assert f"  {job} " in r.stdout, (job, r.stdout)
        assert digest(model) == before, "the checkpoint was changed"

        r = subprocess.run([sys.executable, script, "--checkpoint", index],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "go together" in r.stderr, r.stderr
    print("apply_vs_cp: ok")


if __name__ == "__main__":
    main()
