#!/usr/bin/env python3
"""`iotx apply` on a ~1 GiB safetensors checkpoint, next to `cp` of the same files.

Generates the checkpoint (bench/make_checkpoint.py) into a scratch dir, once as one file,
once as a sharded checkpoint (--shards, default 4 shards of ~256 MiB, and its index), and once
as one file without specs (an empty io_transposes.json: apply only copies, as it does for
most tensors of a real model), then runs for each, several times and alternately, in the same
process:
  cp             cp of the data files into copy/          (the page cache; no fsync)
  cp+sync        the same followed by `sync` of the copies (durable, like apply's output)
  apply          iotx apply --io-transposes io_transposes.json --inputs <model> --out-dir out
                 --quiet                                   (reads, permutes, writes, fsyncs)
  apply-nosync   the same with --no-sync                   (complete and renamed, not flushed)
  apply-buffered the same with --buffered-writes          (durable, through the page cache)
where <model> is model.safetensors, or model.safetensors.index.json for the sharded one.
The kernel alone: `iotx bench --json --threads <cores>` on each distinct tensor case with its
tensors stacked along a new outer dim (the same bytes as in the checkpoint, so they do not
stay in the CPU caches between repetitions any more than apply's do), its median GB/s turned
into seconds, times the threads: the CPU time of the permutes themselves, to compare with
apply's.
The targets (issue 16): apply >= 0.9 x cp+sync, apply-nosync >= 0.5 x cp, apply's CPU time
<= the kernel's plus 1.5 x the kernel's.
Before every run the outputs are deleted and `sync` flushes dirty pages, so no run pays for
its predecessor's writeback; the jobs run in a new (seeded) order every round, so that no job
always follows the same one. The input stays in the page cache for all of them, unless --cold:
then every job starts with the checkpoint's files dropped from the page cache (fsync, then
posix_fadvise DONTNEED: no root needed), so apply and cp read them from the disk, as they
would a checkpoint of tens of GB, which no page cache holds. --settle adds
a pause after the sync; it is 0 by default because in a VM with free page reporting
(Firecracker, virtio-balloon) a pause lets the guest hand the freed page cache back to the
host, and the next run then pays host faults for every page it allocates — noise that hits
whichever job comes next.
Prints each run, the medians as GB/s of tensor bytes (file bytes for cp), apply's peak RSS,
apply's throughput as a fraction of cp's, and each job's median CPU time (the process's
own; for cp+sync, the cp part; sync's waiting is not CPU).

Usage: bench/apply_vs_cp.py [--iotx build/release/tools/iotx] [--dir build/bench-apply]
                            [--runs 5] [--mib 1024] [--shards 4] [--settle 0]
                            [--only single|sharded|copy] [--cold]
       bench/apply_vs_cp.py --checkpoint MODEL --io-transposes FILE [--runs 5] [--dir ...]
                            [--cold]
With --checkpoint the same jobs run on an existing checkpoint instead (a .safetensors file or
a model.safetensors.index.json with its shards; only read: copies and outputs go under
--dir), and the kernel alone is measured on its own tensors and specs.
"""
import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


CPU = {}  # job -> [(user, sys) seconds per run]
# Bytes per element of safetensors' dtypes, and an `iotx bench` dtype of each size (only the
# size matters to the kernel).
SAFETENSORS_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2,
                     "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8,
                     "U64": 8, "F64": 8}
BENCH_DTYPE = {1: "u8", 2: "bf16", 4: "f32", 8: "f64"}


def run(argv, job):
    """Runs argv; returns (seconds, peak RSS in KiB of that child); records its CPU time."""
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}")
    CPU.setdefault(job, []).append((usage.ru_utime, usage.ru_stime))
    return seconds, usage.ru_maxrss


def clean(paths):
    for p in paths:
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    os.sync()


def evict(paths):
    """Drops the files' pages from the page cache (written back first: only clean pages go)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def kernel_cpu(args, tensors):
    """CPU seconds the permutes of tensors [(name, dtype, shape, spec)] need, from `iotx bench`."""
    threads = os.cpu_count() or 1
    cases = {}
    for _, dtype, shape, spec in tensors:
        if spec is None:
            continue
        key = (BENCH_DTYPE[SAFETENSORS_BYTES[dtype]], tuple(shape), tuple(spec[0]),
               tuple(spec[1]))
        cases[key] = cases.get(key, 0) + 1
    seconds = 0.0
    for (dtype, shape, reshape, perm), count in sorted(cases.items()):
        # `count` tensors of the case as one: an outer dim the permutation keeps in place.
        # The median of 11 repetitions: with 5, the same cases came out at 0.12 and 0.16 s of
        # CPU in one run of this script (issue 16, docs/performance.md).
        def text(values):
            return ",".join(map(str, values))
        argv = [args.iotx, "bench", "--dtype", dtype, "--shape", text((count,) + shape),
                "--reshape", text((count,) + reshape),
                "--transpose", text([0] + [p + 1 for p in perm]),
                "--threads", str(threads), "--reps", "11", "--json"]
        result = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
        seconds += result["bytes"] / (result["iotx_gbps"] * 1e9)
    return seconds * threads, threads


def read_checkpoint(model, specs):
    """An existing checkpoint (a .safetensors file or an index.json) and its specs file:
    (its data files, its tensors [(name, dtype, shape, spec or None)], their bytes)."""
    if model.endswith(".json"):
        with open(model) as f:
            weight_map = json.load(f)["weight_map"]
        here = os.path.dirname(os.path.abspath(model))
        files = [os.path.join(here, name) for name in sorted(set(weight_map.values()))]
    else:
        files = [model]
    with open(specs) as f:
        by_name = {s["input_name"]: (s["reshape"], s["transpose"]) for s in json.load(f)}
    tensors, total = [], 0
    for path in files:
        with open(path, "rb") as f:
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            begin, end = entry["data_offsets"]
            total += end - begin
            tensors.append((name, entry["dtype"], entry["shape"], by_name.get(name)))
    return files, tensors, total


def generated(args, directory, shards, with_specs):
    """Writes bench/make_checkpoint.py's checkpoint into directory (emptied first): (the
    path for --inputs, its data files, its tensors, their bytes, the specs file)."""
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    # Written by a child process: the arrays it makes would raise this script's own peak RSS,
    # and Linux hands a process's high-water mark to every command it spawns as the start of
    # theirs (ru_maxrss is kept across exec), so each apply's peak would read as the
    # generator's (161 MiB for every apply of the 1 GiB checkpoint, whose durable runs peak at
    # 99). This script stays small: it never imports numpy.
    made = subprocess.run(
        [sys.executable, "-c",
         "import json, sys; sys.path.insert(0, sys.argv[1]); import make_checkpoint as m; "
         "mib, shards = int(sys.argv[3]), int(sys.argv[4]); "
         "print(json.dumps([m.write(sys.argv[2], mib, shards), m.layout(mib)]))",
         HERE, directory, str(args.mib), str(shards)],
        check=True, capture_output=True, text=True)
    (model, files, tensor_bytes), tensors = json.loads(made.stdout)
    specs = os.path.join(directory, "io_transposes.json")
    if not with_specs:
        with open(specs, "w") as f:
            f.write("[]\n")
        tensors = [(name, dtype, shape, None) for name, dtype, shape, _ in tensors]
    return model, files, tensors, tensor_bytes, specs


def compare(args, name, model, files, tensors, tensor_bytes, specs, scratch):
    """Runs the jobs on one checkpoint (outputs and copies under scratch); prints the runs
    and the medians."""
    with_specs = any(spec is not None for *_, spec in tensors)
    os.makedirs(scratch, exist_ok=True)
    copy = os.path.join(scratch, "copy")
    out = os.path.join(scratch, "out")
    file_bytes = sum(os.path.getsize(f) for f in files)
    print(f"\n{name}: {model}, {len(files)} data file(s), {file_bytes / 2**30:.3f} GiB "
          f"({tensor_bytes / 2**30:.3f} GiB of tensors)"
          + (", read from the disk (--cold)" if args.cold else ""))
    CPU.clear()
    apply_argv = [args.iotx, "apply", "--io-transposes", specs, "--inputs", model,
                  "--out-dir", out, "--quiet"]
    # Warm-up: the input into the page cache, the tool's pages too.
    subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL)
    clean([out])
    run(apply_argv, "warm-up")

    def cp():
        os.makedirs(copy)
        return run(["cp"] + files + [copy], "cp")[0]

    def cp_sync():
        os.makedirs(copy)
        copies = [os.path.join(copy, os.path.basename(f)) for f in files]
        return run(["cp"] + files + [copy], "cp+sync")[0] + run(["sync"] + copies, "sync")[0]

    rss = {}  # per apply job: the peak RSS of each run, KiB

    def apply(extra, job):
        def go():
            t, peak = run(apply_argv + extra, job)
            rss.setdefault(job, []).append(peak)
            return t
        return go

    jobs = {"cp": cp, "cp+sync": cp_sync, "apply": apply([], "apply"),
            "apply-nosync": apply(["--no-sync"], "apply-nosync"),
            "apply-buffered": apply(["--buffered-writes"], "apply-buffered")}
    times = {k: [] for k in jobs}
    # A new order every round (seeded: the same sequence every time the bench runs). Rotating
    # one order is not enough: it keeps each job after the same one (cyclically), and in a VM
    # what the job before freed decides whether a job's fresh pages are ones the guest still
    # has or ones the host must fault in again (apply --no-sync always after the durable apply,
    # which frees no page cache, took 1.5-2.2 s where cp after a job that did took 0.17 s).
    order = list(jobs)
    shuffle = random.Random(16)
    for i in range(args.runs):
        previous = order[-1]
        while True:
            shuffle.shuffle(order)
            if len(order) < 2 or order[0] != previous:
                break
        for k in order:
            clean([copy, out])
            if args.cold:
                evict(files)
            time.sleep(args.settle)
            times[k].append(jobs[k]())
        print(f"run {i + 1} ({' '.join(order)}): "
              + ", ".join(f"{k} {times[k][-1]:.3f} s" for k in jobs))
    clean([copy, out])

    med = {k: statistics.median(v) for k, v in times.items()}
    rate = {k: (file_bytes if k.startswith("cp") else tensor_bytes) / med[k] / 1e9
            for k in jobs}
    print(f"median of {args.runs} runs:")
    for k in times:
        user = statistics.median(u for u, _ in CPU[k])
        system = statistics.median(s for _, s in CPU[k])
        print(f"  {k:14s} {med[k]:.3f} s  {rate[k]:.2f} GB/s   cpu: user {user:.2f} s, "
              f"sys {system:.2f} s")
    largest = max((math.prod(shape) * SAFETENSORS_BYTES[dtype] for _, dtype, shape, _ in tensors),
                  default=0)
    peaks = ", ".join(f"{k} {max(v) / 1024:.0f}" for k, v in rss.items())
    print(f"  peak RSS, MiB: {peaks} (largest tensor {largest / 2**20:.0f} MiB)")
    kernel, threads = kernel_cpu(args, tensors) if with_specs else (0.0, 0)
    cpu = {k: statistics.median(u + s for u, s in CPU[k]) for k in ("apply", "apply-nosync")}
    if with_specs:
        print(f"  kernel alone: cpu {kernel:.2f} s (iotx bench, {threads} threads)")
    print(f"apply / (cp+sync) = {rate['apply'] / rate['cp+sync']:.2f} (target >= 0.9), "
          f"apply-nosync / cp = {rate['apply-nosync'] / rate['cp']:.2f} (target >= 0.5), "
          f"apply / cp = {rate['apply'] / rate['cp']:.2f}, "
          f"apply-buffered / (cp+sync) = {rate['apply-buffered'] / rate['cp+sync']:.2f}")
    if with_specs:
        print(f"cpu / kernel's: apply {cpu['apply'] / kernel:.2f}, apply-nosync "
              f"{cpu['apply-nosync'] / kernel:.2f} (target <= 2.5: the kernel's own plus 1.5x)")


def main():
    root = os.path.dirname(HERE)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iotx", default=os.path.join(root, "build/release/tools/iotx"))
    parser.add_argument("--dir", default=os.path.join(root, "build/bench-apply"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--shards", type=int, default=4,
                        help="shard files of the sharded checkpoint")
    parser.add_argument("--only", choices=["single", "sharded", "copy"],
                        help="run one of the three checkpoints only")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to wait after deleting outputs and syncing")
    parser.add_argument("--cold", action="store_true",
                        help="drop the checkpoint's files from the page cache before every "
                        "job, so each reads them from the disk")
    parser.add_argument("--checkpoint", metavar="MODEL",
                        help="an existing checkpoint instead of the generated ones: a "
                        ".safetensors file or a model.safetensors.index.json (with "
                        "--io-transposes); it is only read, outputs go under --dir")
    parser.add_argument("--io-transposes", metavar="FILE",
                        help="the specs for --checkpoint")
    args = parser.parse_args()
    if (args.checkpoint is None) != (args.io_transposes is None):
        parser.error("--checkpoint and --io-transposes go together")
    if args.checkpoint is not None:
        files, tensors, tensor_bytes = read_checkpoint(args.checkpoint, args.io_transposes)
        compare(args, os.path.basename(args.checkpoint), args.checkpoint, files, tensors,
                tensor_bytes, args.io_transposes, os.path.join(args.dir, "external"))
        return
    for only, name, sub, shards, with_specs in (
            ("single", "one file", "single", 0, True),
            ("sharded", f"{args.shards} shards", "sharded", args.shards, True),
            ("copy", "one file, no specs", "copy", 0, False)):
        if args.only in (None, only):
            directory = os.path.join(args.dir, sub)
            model, files, tensors, tensor_bytes, specs = generated(args, directory, shards,
                                                                   with_specs)
            compare(args, name, model, files, tensors, tensor_bytes, specs, directory)


if __name__ == "__main__":
    main()
