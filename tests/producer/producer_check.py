#!/usr/bin/env python3
"""Independent reference for the producer tests: builds compiler work dirs and checkpoints
with numpy, and checks what `iotx materialize` / `iotx apply` wrote against numpy, Python's
pickle and json, and an implementation of SPEC section 2's folding rule written here from
the rule's text (it shares nothing with src/).

Commands (each prints OK or fails with a message):
  make DIR ORIG.json --seed S [--protocol P] [--tensors N]
        random tensors (assorted dtypes, ranks, zero-sized ones) pickled into DIR/inp-000.p,
        random specs for most of them in DIR/io_transposes.json (copied to ORIG.json),
        partition dirs sg00/ sg01/ nc0/sg00/ nc1/sg02/
  example DIR ORIG.json      the source document's p0 [6144, 256] float16 + weight_7
  big DIR ORIG.json          ~72 MB of tensors, for killing a run midway
  check DIR ORIG.json [--verify]
        the rewritten io_transposes.json is json.dumps of the list simplified here; with
        --verify every transposed_inputs/value_<name>.npy is
        np.ascontiguousarray(np.transpose(a.reshape(R), P)) of the ORIGINAL spec (values,
        dtype, and the simplified spec's shape), transposed_inputs/inp-000.p holds them in
        the input's order, and every partition dir links every *.npy / *.npy.meta to its
        real path
  intact DIR     what a killed run may leave: every final-named file complete and loadable
  snapshot DIR   a digest of every file's bytes and every link's target (for idempotence)
  checkpoint DIR --seed S [--format safetensors|pickle] [--protocol P]
        tensors + specs for `iotx apply` (DIR/in.*, DIR/io_transposes.json)
  check-apply DIR OUT [--format npy|safetensors] [--name NAME]
        OUT's files hold the device layout of DIR's tensors per the original specs
  sharded DIR --seed S [--shards N]
        a sharded checkpoint as transformers saves one: DIR/model-0000K-of-0000N.safetensors
        (each with its own __metadata__), DIR/model.safetensors.index.json
        ({"metadata": {"total_size"}, "weight_map"}, indent=2, sorted keys) and
        DIR/io_transposes.json with specs for most tensors
  check-sharded DIR OUT
        OUT holds the same shard files, each with the same tensors (device layout per the
        original specs, same dtype names) and __metadata__ plus "iotx.io_transposes" (the
        simplified specs of its tensors), and an index identical to DIR's
"""
import argparse
import glob
import hashlib
import json
import os
import pickle
import struct
import sys

import numpy as np

DTYPES = ["<f2", "<f4", "|i1", "<f8", "|V2", "<c16", "|b1", "<i2", "<u4"]
NAMES = ["p0", "weight_7", "w\u00ebight \u00fc", "-dash", "a.b", "x" * 100, "emb tok", "k=v",
         "tab\there", "\u4e2d\u6587", "q", "bias", "layer.0.attn", "$HOME", "'quote\"", "n"]


# --- SPEC section 2, from its text ---------------------------------------------------------
def simplify(reshape, transpose, orig):
    """Merge reshape dims i, i+1 that appear as neighbours (i, i+1) in transpose unless
    prod(R[0..i]) is an interior boundary prod(orig[0..j]), 0 <= j < len(orig) - 1."""
    bounds, p = set(), 1
    for d in orig[:-1]:
        p *= d
        bounds.add(p)
    prefix, p = [], 1
    for d in reshape:
        p *= d
        prefix.append(p)
    joins_next = [False] * len(reshape)
    for a, b in zip(transpose, transpose[1:]):
        if b == a + 1 and prefix[a] not in bounds:
            joins_next[a] = True
    group_of, groups = [], []
    for i, d in enumerate(reshape):
        if i > 0 and joins_next[i - 1]:
            groups[-1] *= d
        else:
            groups.append(d)
        group_of.append(len(groups) - 1)
    new_transpose = []
    for axis in transpose:
        if axis == 0 or not joins_next[axis - 1]:
            new_transpose.append(group_of[axis])
    return groups, new_transpose


def device(a, reshape, transpose):
    return np.ascontiguousarray(np.transpose(a.reshape(reshape), transpose))


def first_specs(specs):
    first = {}
    for s in specs:
        first.setdefault(s["input_name"], s)
    return first


def simplified_json(specs, tensors):
    out = []
    for name, s in first_specs(specs).items():
        r, t = simplify(s["reshape"], s["transpose"], list(tensors[name].shape))
        out.append({"input_name": name, "reshape": r, "transpose": t})
    return json.dumps(out)


# --- random inputs -------------------------------------------------------------------------
def applied_record(specs, tensors):
    """What iotx apply records in a safetensors output's __metadata__ under
    "iotx.io_transposes": the simplified specs of the file's tensors, sorted by name, as
    json.dumps writes them."""
    first, out = first_specs(specs), []
    for name in sorted(tensors):
        if name in first:
            s = first[name]
            r, t = simplify(s["reshape"], s["transpose"], list(tensors[name].shape))
            out.append({"input_name": name, "reshape": r, "transpose": t})
    return json.dumps(out)


def output_metadata(source_metadata, specs, tensors):
    meta = dict(source_metadata or {})
    meta["iotx.io_transposes"] = applied_record(specs, tensors)
    return meta


def random_array(rng, shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.frombuffer(rng.bytes(n), dtype=dtype).reshape(shape).copy()


def factor(rng, d):
    if d <= 1:
        return [d] if rng.random() < 0.7 else [d, 1]
    primes, x, f = [], d, 2
    while f * f <= x:
        while x % f == 0:
            primes.append(f)
            x //= f
        f += 1
    if x > 1:
        primes.append(x)
    rng.shuffle(primes)
    dims = []
    for q in primes:
        if dims and rng.random() < 0.5:
            dims[-1] *= q
        else:
            dims.append(q)
    return dims


def random_spec(rng, shape):
    dims = []
    for d in shape:
        dims += factor(rng, d)
    if not dims:
        dims = [1]
    # Sometimes merge neighbours across an original boundary: still a valid reshape.
    if len(dims) > 2 and rng.random() < 0.3:
        i = int(rng.integers(0, len(dims) - 1))
        dims[i:i + 2] = [dims[i] * dims[i + 1]]
    # A permutation of shuffled consecutive blocks, so neighbour pairs (merges) happen.
    axes, blocks = list(range(len(dims))), []
    while axes:
        k = int(rng.integers(1, len(axes) + 1))
        blocks.append(axes[:k])
        axes = axes[k:]
    rng.shuffle(blocks)
    return dims, [a for b in blocks for a in b]


def random_shape(rng):
    rank = int(rng.integers(0, 5))
    shape = [int(rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 30, 64])) for _ in range(rank)]
    if rng.random() < 0.08 and shape:
        shape[int(rng.integers(0, rank))] = 0
    while np.prod(shape, dtype=np.int64) > 200000:
        shape[0] = max(1, shape[0] // 2)
    return shape


def make_partitions(d):
    for p in ["sg00", "sg01", "nc0/sg00", "nc1/sg02"]:
        os.makedirs(os.path.join(d, p), exist_ok=True)


def write_workdir(d, orig_path, tensors, specs, protocol):
    with open(os.path.join(d, "inp-000.p"), "wb") as f:
        pickle.dump(tensors, f, protocol=protocol)
    text = json.dumps(specs, indent=1)  # not the simplified form's bytes
    for path in (os.path.join(d, "io_transposes.json"), orig_path):
        with open(path, "w") as f:
            f.write(text)
    make_partitions(d)


def cmd_make(args):
    rng = np.random.default_rng(args.seed)
    tensors, specs = {}, []
    names = list(NAMES)
    rng.shuffle(names)
    for name in names[:args.tensors]:
        shape = random_shape(rng)
        a = random_array(rng, shape, str(rng.choice(DTYPES)))
        layout = rng.random()
        if layout < 0.15:  # the reader converts these to C order
            a = np.asfortranarray(a)
        elif layout < 0.25 and a.dtype.kind in "fiuc" and a.dtype.itemsize > 1:
            a = a.astype(a.dtype.newbyteorder(">"))  # ... and to little-endian
        tensors[name] = a
        if rng.random() < 0.8:
            r, t = random_spec(rng, shape)
            specs.append({"input_name": name, "reshape": r, "transpose": t})
    rng.shuffle(specs)
    write_workdir(args.dir, args.orig, tensors, specs, args.protocol)


def cmd_example(args):
    rng = np.random.default_rng(1)
    tensors = {"p0": random_array(rng, [6144, 256], "<f2"),
               "weight_7": random_array(rng, [768, 768], "|V2"),
               "ids": random_array(rng, [4, 16], "<i4")}
    specs = [{"input_name": "p0", "reshape": [3, 16, 128, 2, 2, 64],
              "transpose": [0, 4, 5, 3, 1, 2]},
             {"input_name": "weight_7", "reshape": [768, 768], "transpose": [1, 0]}]
    write_workdir(args.dir, args.orig, tensors, specs, args.protocol)


def cmd_big(args):
    """Several tens of MB: eight 8 MiB tensors with specs, one without."""
    rng = np.random.default_rng(3)
    tensors, specs = {}, []
    for i in range(8):
        tensors[f"t{i}"] = random_array(rng, [1024, 2048], "<f4")
        specs.append({"input_name": f"t{i}", "reshape": [16, 64, 2048], "transpose": [2, 0, 1]})
    tensors["plain"] = random_array(rng, [4096, 512], "<f2")
    write_workdir(args.dir, args.orig, tensors, specs, args.protocol)


# --- checks --------------------------------------------------------------------------------
def fail(msg):
    sys.exit("FAIL: " + msg)


def expect_equal(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def little_endian(a):
    return a.astype(a.dtype.newbyteorder("<")) if a.dtype.byteorder == ">" else a


def check_tensor(what, got, a, spec):
    a = little_endian(a)
    if spec is None:
        want, want_shape = a, list(a.shape)
    else:
        want = device(a, spec["reshape"], spec["transpose"])
        r, t = simplify(spec["reshape"], spec["transpose"], list(a.shape))
        want_shape = [r[i] for i in t]
    expect_equal(what + " dtype", got.dtype.str, a.dtype.str)
    expect_equal(what + " shape", list(got.shape), want_shape)
    if got.tobytes() != want.tobytes():
        fail(what + ": bytes differ from numpy's transpose")


def partition_dirs(d):
    return sorted(p for p in glob.glob(os.path.join(d, "sg*/")) +
                  glob.glob(os.path.join(d, "nc*/sg*/")))


def cmd_check(args):
    d = args.dir
    specs = json.load(open(args.orig))
    tensors = pickle.load(open(os.path.join(d, "inp-000.p"), "rb"))
    expect_equal("io_transposes.json", open(os.path.join(d, "io_transposes.json")).read(),
                 simplified_json(specs, tensors))
    first = first_specs(specs)
    ti = os.path.join(d, "transposed_inputs")
    if args.verify:
        values = {}
        for name, a in tensors.items():
            path = os.path.join(ti, f"value_{name}.npy")
            check_npy_complete(path)  # as `intact` does: neither short nor with trailing bytes
            values[name] = np.load(path)
            check_tensor(path, values[name], a, first.get(name))
        substituted = pickle.load(open(os.path.join(ti, "inp-000.p"), "rb"))
        expect_equal("transposed inp-000.p keys", list(substituted), list(tensors))
        for name, v in substituted.items():
            if v.dtype.str != values[name].dtype.str or v.shape != values[name].shape or \
                    v.tobytes() != values[name].tobytes():
                fail(f"transposed inp-000.p[{name!r}] differs from value_{name}.npy")
    sources = sorted(glob.glob(os.path.join(glob.escape(ti), "*.npy")) +
                     glob.glob(os.path.join(glob.escape(ti), "*.npy.meta")))
    if args.verify and len([s for s in sources if s.endswith(".npy")]) < len(tensors):
        fail("transposed_inputs lacks value files")
    for part in partition_dirs(d):
        for src in sources:
            link = os.path.join(part, os.path.basename(src))
            if not os.path.islink(link):
                fail(f"{link} is not a symlink")
            expect_equal(link, os.readlink(link), os.path.realpath(src))
    print("OK")


def check_npy_complete(path):
    """The header parses and the file holds exactly the bytes it announces: a truncated file is
    short, and trailing bytes are caught too. The values are not read: a kill test checks tens of
    MB after every kill, and a complete file's values are compared by `check`."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        shape, _, dtype = np.lib.format._read_array_header(f, version)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        data_start = f.tell()
        f.seek(0, 2)
        if f.tell() != data_start + nbytes:
            fail(f"{path}: {f.tell()} bytes, want {data_start + nbytes}")


def cmd_intact(args):
    d = args.dir
    json.load(open(os.path.join(d, "io_transposes.json")))
    ti = os.path.join(d, "transposed_inputs")
    for path in glob.glob(os.path.join(glob.escape(ti), "*.npy")):
        check_npy_complete(path)
    if os.path.exists(os.path.join(ti, "inp-000.p")):
        pickle.load(open(os.path.join(ti, "inp-000.p"), "rb"))
    for part in partition_dirs(d):
        for link in glob.glob(os.path.join(glob.escape(part), "*.npy")):
            check_npy_complete(link)
    print("OK")


def cmd_snapshot(args):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(args.dir)):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(root, name)
            h.update(os.path.relpath(p, args.dir).encode("utf-8", "surrogateescape"))
            if os.path.islink(p):
                h.update(b"->" + os.readlink(p).encode("utf-8", "surrogateescape"))
            elif os.path.isfile(p):
                h.update(open(p, "rb").read())
    print(h.hexdigest())


# --- apply ---------------------------------------------------------------------------------
ST_DTYPE = {"<f2": "F16", "<f4": "F32", "|i1": "I8", "<f8": "F64", "|V2": "BF16",
            "<c8": "C64", "|b1": "BOOL", "<i2": "I16", "<u4": "U32", "<i4": "I32",
            "|u1": "U8"}
NP_DTYPE = {v: k for k, v in ST_DTYPE.items()}


def write_safetensors(path, tensors, metadata):
    header, offset, blobs = {}, 0, []
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, a in tensors.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": ST_DTYPE[a.dtype.str], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for name, h in header.items():
        s, e = h["data_offsets"]
        a = np.frombuffer(data[8 + n + s:8 + n + e], dtype=NP_DTYPE[h["dtype"]])
        tensors[name] = (h["dtype"], a.reshape(h["shape"]))
    return tensors, metadata


def cmd_checkpoint(args):
    rng = np.random.default_rng(args.seed)
    tensors, specs = {}, []
    for i in range(8):
        shape = random_shape(rng) or [3]
        dtype = str(rng.choice(["<f2", "<f4", "|V2", "|i1", "<f8", "<i4"]))
        name = f"model.layers.{i}.w"
        tensors[name] = random_array(rng, shape, dtype)
        if i % 4 != 3:
            r, t = random_spec(rng, shape)
            specs.append({"input_name": name, "reshape": r, "transpose": t})
    if args.large:
        # Megabytes each, sizes no multiple of a disk block: files of 8 MiB or more are written
        # directly, these tensors from the kernel's buffers (with and without a spec), the
        # small ones via staging; .npy files of the first two are 8 MiB too.
        for name, shape, dtype, perm in (("model.large.copied", [2049, 2051], "<f2", None),
                                         ("model.large.moved", [1001, 2099], "<f4", [1, 0]),
                                         ("model.large.bytes", [3, 700001], "|i1", [1, 0])):
            tensors[name] = random_array(rng, shape, dtype)
            if perm:
                specs.append({"input_name": name, "reshape": shape, "transpose": perm})
    with open(os.path.join(args.dir, "io_transposes.json"), "w") as f:
        json.dump(specs, f)
    if args.format == "safetensors":
        write_safetensors(os.path.join(args.dir, "in.safetensors"), tensors,
                          {"format": "pt", "note": "\u00fc"})
    elif args.format == "pickle":
        with open(os.path.join(args.dir, "in.p"), "wb") as f:
            pickle.dump(tensors, f, protocol=args.protocol)
    else:
        for name, a in tensors.items():
            np.save(os.path.join(args.dir, name + ".npy"), a)
    print("OK")


def shard_name(k, n):
    return f"model-{k:05d}-of-{n:05d}.safetensors"


def cmd_sharded(args):
    rng = np.random.default_rng(args.seed)
    specs, weight_map, total = [], {}, 0
    for k in range(1, args.shards + 1):
        tensors = {}
        for i in range(int(rng.integers(1, 4))):
            shape = random_shape(rng) or [3]
            dtype = str(rng.choice(["<f2", "<f4", "|V2", "|i1", "<f8", "<i4"]))
            name = f"model.layers.{k}.{['q', 'k', 'v'][i]}_proj.weight"
            tensors[name] = random_array(rng, shape, dtype)
            total += tensors[name].nbytes
            weight_map[name] = shard_name(k, args.shards)
            if rng.random() < 0.75:
                r, t = random_spec(rng, shape)
                specs.append({"input_name": name, "reshape": r, "transpose": t})
        write_safetensors(os.path.join(args.dir, shard_name(k, args.shards)), tensors,
                          {"format": "pt", "shard": str(k)})
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(args.dir, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    with open(os.path.join(args.dir, "io_transposes.json"), "w") as f:
        json.dump(specs, f)
    print("OK")


def cmd_check_sharded(args):
    index_name = "model.safetensors.index.json"
    index = json.load(open(os.path.join(args.dir, index_name)))
    shards = sorted(set(index["weight_map"].values()))
    expect_equal("files", sorted(os.listdir(args.out)), sorted(shards + [index_name]))
    expect_equal("index bytes", open(os.path.join(args.out, index_name), "rb").read(),
                 open(os.path.join(args.dir, index_name), "rb").read())
    specs = json.load(open(os.path.join(args.dir, "io_transposes.json")))
    first = first_specs(specs)
    for shard in shards:
        want, want_meta = read_safetensors(os.path.join(args.dir, shard))
        got, got_meta = read_safetensors(os.path.join(args.out, shard))
        expect_equal(shard + " metadata", got_meta,
                     output_metadata(want_meta, specs, {n: a for n, (_, a) in want.items()}))
        expect_equal(shard + " tensors", sorted(got), sorted(want))
        for name, (dtype, a) in want.items():
            expect_equal(name + " dtype name", got[name][0], dtype)
            check_tensor(name, got[name][1], a, first.get(name))
    print("OK")


def load_inputs(d):
    if os.path.exists(os.path.join(d, "in.safetensors")):
        t, metadata = read_safetensors(os.path.join(d, "in.safetensors"))
        return {k: v[1] for k, v in t.items()}, metadata
    if os.path.exists(os.path.join(d, "in.p")):
        return pickle.load(open(os.path.join(d, "in.p"), "rb")), None
    return {os.path.basename(p)[:-4]: np.load(p)
            for p in sorted(glob.glob(os.path.join(d, "*.npy")))}, None


def cmd_check_apply(args):
    tensors, metadata = load_inputs(args.dir)
    specs = json.load(open(os.path.join(args.dir, "io_transposes.json")))
    first = first_specs(specs)
    if args.format == "npy":
        expect_equal("files", sorted(os.listdir(args.out)),
                     sorted(f"value_{n}.npy" for n in tensors))
        for name, a in tensors.items():
            check_tensor(name, np.load(os.path.join(args.out, f"value_{name}.npy")), a,
                         first.get(name))
    else:
        expect_equal("files", os.listdir(args.out), [args.name])
        got, got_meta = read_safetensors(os.path.join(args.out, args.name))
        expect_equal("metadata", got_meta, output_metadata(metadata, specs, tensors))
        expect_equal("tensors", sorted(got), sorted(tensors))
        for name, a in tensors.items():
            expect_equal(name + " dtype name", got[name][0], ST_DTYPE[a.dtype.str])
            check_tensor(name, got[name][1], a, first.get(name))
    print("OK")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("make", "example", "big"):
        s = sub.add_parser(name)
        s.add_argument("dir")
        s.add_argument("orig")
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--protocol", type=int, default=pickle.DEFAULT_PROTOCOL)
        s.add_argument("--tensors", type=int, default=6)
    s = sub.add_parser("check")
    s.add_argument("dir")
    s.add_argument("orig")
    s.add_argument("--verify", action="store_true")
    for name in ("intact", "snapshot"):
        sub.add_parser(name).add_argument("dir")
    s = sub.add_parser("checkpoint")
    s.add_argument("dir")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--format", default="safetensors")
    s.add_argument("--protocol", type=int, default=pickle.DEFAULT_PROTOCOL)
    s.add_argument("--large", action="store_true", help="add three tensors of megabytes")
    s = sub.add_parser("check-apply")
    s.add_argument("dir")
    s.add_argument("out")
    s.add_argument("--format", default="npy")
    s.add_argument("--name", default="in.safetensors")
    s = sub.add_parser("sharded")
    s.add_argument("dir")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--shards", type=int, default=4)
    s = sub.add_parser("check-sharded")
    s.add_argument("dir")
    s.add_argument("out")
    args = p.parse_args()
    {"make": cmd_make, "example": cmd_example, "big": cmd_big, "check": cmd_check, "intact": cmd_intact,
     "snapshot": cmd_snapshot, "checkpoint": cmd_checkpoint,
     "check-apply": cmd_check_apply, "sharded": cmd_sharded,
     "check-sharded": cmd_check_sharded}[args.cmd](args)


if __name__ == "__main__":
    main()
