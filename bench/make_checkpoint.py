#!/usr/bin/env python3
"""Writes a ~1 GiB safetensors checkpoint and its io_transposes.json for bench/apply_vs_cp.py.

Mixed like a real model: 2-D bf16 weights transposed [1, 0], 4-D f32 tensors with an
inner-dim-preserving and an inner-dim-moving permutation, the source document's p0-style
6-D spec on bf16, and small 1-D f32 tensors without a spec (copied). The data is random
bytes (the content does not matter to a permute). Nothing here is committed.

With --shards N the same tensors go into N shard files model-0000K-of-0000N.safetensors (in
name order, each about the same size, as transformers' save_pretrained splits a model) and a
model.safetensors.index.json ({"metadata": {"total_size": ...}, "weight_map": {...}}).

Usage: python3 bench/make_checkpoint.py DIR [--mib 1024] [--shards N]
"""
import argparse
import json
import os

import numpy as np

ALIGN = {"BF16": 2, "F32": 4}


def layout(total_mib):
    """(name, dtype, shape, spec) entries adding up to about total_mib MiB."""
    tensors = []
    scale = total_mib / 1024
    for i in range(max(1, round(12 * scale))):  # 12 x 32 MiB = 384 MiB of bf16 2-D weights
        tensors.append((f"layers.{i}.mlp.weight", "BF16", [4096, 4096],
                        ([4096, 4096], [1, 0])))
    for i in range(max(1, round(4 * scale))):  # 4 x 64 MiB, inner dim preserved
        tensors.append((f"layers.{i}.attn.kv_cache", "F32", [64, 64, 32, 128],
                        ([64, 64, 32, 128], [0, 2, 1, 3])))
    for i in range(max(1, round(4 * scale))):  # 4 x 64 MiB, inner dim moved
        tensors.append((f"layers.{i}.conv.weight", "F32", [128, 128, 32, 32],
                        ([128, 128, 32, 32], [0, 3, 1, 2])))
    for i in range(max(1, round(20 * scale))):  # 20 x 6 MiB, the source document's spec
        tensors.append((f"layers.{i}.p0", "BF16", [6144, 512],
                        ([3, 16, 128, 2, 4, 64], [0, 4, 5, 3, 1, 2])))
    for i in range(max(1, round(64 * scale))):  # small f32 vectors without a spec
        tensors.append((f"layers.{i}.norm.weight", "F32", [4096], None))
    return tensors


def nbytes(dtype, shape):
    return int(np.prod(shape)) * ALIGN[dtype]


def write_safetensors(path, tensors, rng):
    """Writes tensors [(name, dtype, shape, spec)] to path; returns their data bytes."""
    # The reference writer's order: descending alignment, then name; contiguous offsets.
    ordered = sorted(tensors, key=lambda t: (-ALIGN[t[1]], t[0]))
    header, offset = {"__metadata__": {"format": "pt", "made_by": "bench/make_checkpoint.py"}}, 0
    for name, dtype, shape, _ in ordered:
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name, dtype, shape, _ in ordered:
            f.write(rng.bytes(nbytes(dtype, shape)))
    return offset


def write(directory, total_mib, shards=0):
    """Writes the checkpoint (one file, or `shards` shards and an index) and the specs.

    Returns (the path to give iotx apply's --inputs, the data files, tensor bytes)."""
    tensors = layout(total_mib)
    rng = np.random.default_rng(7)
    if shards == 0:
        path = os.path.join(directory, "model.safetensors")
        total = write_safetensors(path, tensors, rng)
        files = [path]
    else:
        # Greedy split in name order into shards of about total / shards bytes each.
        by_name = sorted(tensors, key=lambda t: t[0])
        target = sum(nbytes(t[1], t[2]) for t in tensors) / shards
        groups, size = [[]], 0
        for t in by_name:
            if size >= target * len(groups) and len(groups) < shards:
                groups.append([])
            groups[-1].append(t)
            size += nbytes(t[1], t[2])
        files, weight_map, total = [], {}, 0
        for k, group in enumerate(groups):
            name = f"model-{k + 1:05d}-of-{len(groups):05d}.safetensors"
            files.append(os.path.join(directory, name))
            total += write_safetensors(files[-1], group, rng)
            weight_map.update({t[0]: name for t in group})
        path = os.path.join(directory, "model.safetensors.index.json")
        with open(path, "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    specs = [{"input_name": name, "reshape": spec[0], "transpose": spec[1]}
             for name, _, _, spec in tensors if spec is not None]
    with open(os.path.join(directory, "io_transposes.json"), "w") as f:
        json.dump(specs, f)
    return path, files, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--shards", type=int, default=0,
                        help="write N shard files and an index instead of one file")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path, files, size = write(args.dir, args.mib, args.shards)
    print(f"wrote {path} ({len(files)} data files): {size / 2**20:.1f} MiB of tensor data")


if __name__ == "__main__":
    main()
