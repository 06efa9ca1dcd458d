#!/usr/bin/env python3
"""iotx.apply against numpy (and PyTorch, when importable) on the suite's cases, same process.

For each case of bench/bench-cases.txt (id dtype shape perm; the shape is after the reshape),
one source array in C order, and the best of --repeats timed calls of each contender, in two
forms. "new": each call makes its result, as a user's call would (every call then also pays
the page faults of a fresh allocation, which on this machine cost about what a copy does):
  iotx    iotx.apply(a, shape, perm)
  numpy   np.ascontiguousarray(a.reshape(shape).transpose(perm))
  torch   torch.permute(t, perm).contiguous()    (when torch imports; t shares a's memory)
"into": the same work into one preallocated output (the kernels alone):
  iotx    iotx.apply(a, shape, perm, out=out)
  numpy   np.copyto(out, a.reshape(shape).transpose(perm))   (ascontiguousarray's own copy)
  torch   out_t.copy_(t.permute(perm))
plus a copy of the same bytes (np.copyto of contiguous arrays) as the machine's yardstick.
numpy's slowest layouts take seconds per call, so its calls are timed --numpy-repeats times.
Speed-ups are ratios measured in the same run. Then the call overhead: iotx.apply on a 64x64
f32 array, best mean of 10 batches of 20000 calls, next to an empty Python call's cost.

Usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/python_bench.py [--cases FILE]
       [--min-mb 0] [--repeats 5] [--markdown]
"""
import argparse
import math
import pathlib
import sys
import time

import numpy as np

import iotx

try:
    import torch
except ImportError:  # optional: Debian's python3-torch is not in install-deps
    torch = None

DTYPES = {"f32": np.float32, "f64": np.float64, "bf16": np.dtype("<V2"), "f16": np.float16,
          "i8": np.int8, "u8": np.uint8, "i32": np.int32, "c128": np.complex128}


def best(fn, repeats, warm=True):
    if warm:
        fn()  # first-touch of the output, plans
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def read_cases(path):
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cid, dtype, shape, perm = line.split()
        yield cid, dtype, [int(n) for n in shape.split(",")], [int(p) for p in perm.split(",")]


def overhead(calls=20000, batches=10):
    a = np.ones((64, 64), np.float32)
    out = np.empty((64, 64), np.float32)
    shape, perm = [64, 64], [1, 0]

    def run_iotx():
        for _ in range(calls):
            iotx.apply(a, shape, perm, out=out)

    def run_alloc():
        for _ in range(calls):
            iotx.apply(a, shape, perm)

    def run_empty():
        f = len
        for _ in range(calls):
            f(shape)

    return [min(best(fn, 1) for _ in range(batches)) / calls * 1e6
            for fn in (run_iotx, run_alloc, run_empty)]


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=here / "bench-cases.txt")
    parser.add_argument("--min-mb", type=float, default=0.0, help="skip smaller cases")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--numpy-repeats", type=int, default=2)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    cols = ["case", "dtype", "MB", "copy GB/s", "iotx new", "numpy new", "iotx/numpy new",
            "iotx into", "numpy into", "iotx/numpy into"]
    if torch is not None:
        cols += ["torch new", "iotx/torch new", "torch into", "iotx/torch into"]
    print(f"iotx {iotx.__version__}, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch is not None else ", torch not installed"))
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    else:
        print("  ".join(f"{c:>11}" for c in cols))
    big_ratios, all_ratios = [], []
    for cid, dtype, shape, perm in read_cases(args.cases):
        dt = np.dtype(DTYPES[dtype])
        count = math.prod(shape)
        nbytes = count * dt.itemsize
        if nbytes < args.min_mb * 1e6:
            continue
        raw = np.random.default_rng(1).integers(0, 256, nbytes, dtype=np.uint8)
        a = raw.view(dt).reshape(count)
        out = np.empty([shape[p] for p in perm], dt)
        flat = out.reshape(count)
        t_copy = best(lambda: np.copyto(flat, a), args.repeats)
        t_iotx_new = best(lambda: iotx.apply(a, shape, perm), args.repeats)
        t_iotx = best(lambda: iotx.apply(a, shape, perm, out=out), args.repeats)
        nr = args.numpy_repeats
        t_np_new = best(lambda: np.ascontiguousarray(a.reshape(shape).transpose(perm)), nr, False)
        t_np = best(lambda: np.copyto(out, a.reshape(shape).transpose(perm)), nr, False)
        if iotx.apply(a, shape, perm).tobytes() != out.tobytes():
            sys.exit(f"{cid}: iotx and numpy disagree")
        gbs = lambda t: nbytes / t / 1e9
        row = [cid, dtype, f"{nbytes / 1e6:.0f}", f"{gbs(t_copy):.1f}", f"{gbs(t_iotx_new):.2f}",
               f"{gbs(t_np_new):.2f}", f"{t_np_new / t_iotx_new:.1f}x", f"{gbs(t_iotx):.2f}",
               f"{gbs(t_np):.2f}", f"{t_np / t_iotx:.1f}x"]
        all_ratios.append((t_np_new / t_iotx_new, t_np / t_iotx))
        if nbytes >= 64 * 2**20:
            big_ratios.append((t_np_new / t_iotx_new, t_np / t_iotx))
        if torch is not None:
            t = torch.from_numpy(a.view(np.int16) if dtype == "bf16" else a).reshape(shape)
            out_t = torch.from_numpy(out.view(np.int16) if dtype == "bf16" else out)
            t_torch_new = best(lambda: t.permute(perm).contiguous(), args.repeats)
            t_torch = best(lambda: out_t.copy_(t.permute(perm)), args.repeats)
            row += [f"{gbs(t_torch_new):.2f}", f"{t_torch_new / t_iotx_new:.1f}x",
                    f"{gbs(t_torch):.2f}", f"{t_torch / t_iotx:.1f}x"]
        if args.markdown:
            print("| " + " | ".join(row) + " |")
        else:
            print("  ".join(f"{c:>11}" for c in row))
        sys.stdout.flush()
        del raw, a, out, flat

    geo = lambda r: math.exp(sum(map(math.log, r)) / len(r)) if r else float("nan")
    for k, form in enumerate(("new", "into")):
        every = [r[k] for r in all_ratios]
        big = [r[k] for r in big_ratios]
        print(f"\niotx/numpy ({form}): geometric mean {geo(big):.1f}x over the {len(big)} cases "
              f">= 64 MiB, {geo(every):.1f}x over all {len(every)}, lowest {min(every):.2f}x", end="")
    print()
    o_out, o_alloc, o_empty = overhead()
    print(f"call overhead, 64x64 f32: {o_out:.2f} us with out=, {o_alloc:.2f} us allocating the "
          f"result (an empty Python call in the same loop: {o_empty:.2f} us)")


if __name__ == "__main__":
    main()
