#!/usr/bin/python3
"""scripts/plan-sweep against two stand-in iotx binaries whose plans and ratios are known:
the old one stages every layout, the new one walks 8-byte layouts in place, runs 2-byte ones
on narrower vectors, cuts 1-byte ones by another dim and orders 4-byte ones' loops otherwise;
the old one's bench answers 0.5 and the new one's 0.75. So exactly the f64, bf16, i8 and f32
layouts are benchmarked (a strategy, a tile, a driver and a loop order that differ), each at
1.50x, and the layouts are reproducible by seed, within the size range and of the ranks asked
for; --survey benchmarks every layout with one of them.

Usage: plan_sweep_test.py SOURCE_DIR
"""
import math
import os
import re
import stat
import subprocess
import sys
import tempfile

from script_module import load_script

STAND_IN = """#!{python} -IS
import sys
args = sys.argv[1:]
dtype = args[args.index("--dtype") + 1]
if args[0] == "plan":
    wide = {new} and dtype == "f64"
    print("strategy: " + ("tiles" if wide else "staged-tiles") + " (why)")
    print("tile:     16 x 16 on " + ("32" if {new} and dtype == "bf16" else "64") + "-byte vectors")
    print("stores:   regular (output 1 MiB)")
    cut = 1 if {new} and dtype == "i8" else 0
    print(f"          dim {{cut}}: n=512 driver in blocks of 256, tile columns")
    if {new} and dtype == "f32":
        print("loops:    per item, outer -> inner (source memory order, but dim 1 innermost: "
              "it continues the destination): dim 0 (n=4), dim 1 (n=8)")
    else:
        print("loops:    per item, outer -> inner (source memory order): dim 1 (n=8), dim 0 (n=4)")
    print("driver:   2 item(s) (why)")
elif args[0] == "bench":
    print("  ratio           " + ("0.75" if {new} else "0.50") + "  (iotx / memcpy)")
"""


# Layouts per sweep: enough for every dtype of seed 7 (asserted below), few enough that the
# stand-ins, a Python start each, do not make this the suite's slowest test.
COUNT = 16


def main():
    script = os.path.join(sys.argv[1], "scripts", "plan-sweep")
    sweep = load_script(script, "plan_sweep")
    first = sweep.random_layouts(COUNT, 1e6, 4e6, seed=7)
    assert first == sweep.random_layouts(COUNT, 1e6, 4e6, seed=7), "not reproducible by seed"
    assert first != sweep.random_layouts(COUNT, 1e6, 4e6, seed=8), "the seed changes nothing"
    for dtype, shape, perm in first:
        dims = [int(n) for n in shape.split(",")]
        size = math.prod(dims) * sweep.ELEMENT_BYTES[dtype]
        assert 1e6 <= size <= 4e6, (dtype, shape, size)
        order = [int(p) for p in perm.split(",")]
        assert sorted(order) == list(range(len(dims))) and order != sorted(order), perm
    for dtype, shape, perm in sweep.random_layouts(40, 1e6, 4e6, seed=7, ranks=[5, 6]):
        assert len(shape.split(",")) in (5, 6), shape
    changed_dtypes = ("f64", "bf16", "i8", "f32")
    changed = sum(1 for layout in first if layout[0] in changed_dtypes)
    assert 0 < changed < len(first), "every layout of the changed dtypes"
    assert all(any(layout[0] == d for layout in first) for d in changed_dtypes), "a dtype missing"

    with tempfile.TemporaryDirectory() as tmp:
        binaries = {}
        for name, new in (("old", False), ("new", True)):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(STAND_IN.format(python=sys.executable, new=new))
            os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
            binaries[name] = path
        done = subprocess.run(
            [sys.executable, script, "--old", binaries["old"], "--new", binaries["new"],
             "--count", str(COUNT), "--min-mb", "1", "--max-mb", "4", "--seed", "7",
             "--threads", "1,2", "--rounds", "1"],
            capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        assert f"{2 * changed} of {2 * COUNT} plans differ" in out, out
        lines = [line for line in out.splitlines() if re.match(r"\s*\d\.\d\d  ", line)]
        assert len(lines) == 2 * changed, out
        assert all(line.split()[1] in changed_dtypes and line.split()[0] == "1.50"
                   for line in lines), out
        for t in (1, 2):
            assert (f"{t} thread(s): {changed} changed, geometric mean new / old 1.500, 0 slower "
                    f"and {changed} faster") in out, out

        # --survey: every layout with one build, worst first, with its strategy.
        for name, value, below, how in (("old", "0.50", COUNT, "staged-tiles"),
                                        ("new", "0.75", 0, None)):
            done = subprocess.run(
                [sys.executable, script, "--survey", binaries[name], "--count", str(COUNT),
                 "--min-mb", "1", "--max-mb", "4", "--seed", "7", "--threads", "1,2",
                 "--reps", "1"],
                capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            out = done.stdout
            rows = [line for line in out.splitlines() if re.match(r"\s*\d\.\d\d  ", line)]
            assert len(rows) == 2 * COUNT and all(row.split()[0] == value for row in rows), out
            if how:
                assert all(row.split()[-1] == how for row in rows), out
            else:  # the new stand-in walks f64 in place and stages the rest
                assert {row.split()[-1] for row in rows} == {"tiles", "staged-tiles"}, out
            for t in (1, 2):
                assert (f"{t} thread(s): {COUNT} layouts, geometric mean {value}0, {below} below "
                        f"0.6, minimum {value}") in out, out
        for argv in (["--survey", binaries["new"], "--old", binaries["old"], "--new",
                      binaries["new"]], ["--old", binaries["old"]], []):
            wrong = subprocess.run([sys.executable, script] + argv, capture_output=True, text=True)
            assert wrong.returncode == 2 and "--survey" in wrong.stderr, wrong.stderr

        bad = subprocess.run([sys.executable, script, "--old", binaries["old"], "--new",
                              binaries["new"], "--min-mb", "4", "--max-mb", "4"],
                             capture_output=True, text=True)
        assert bad.returncode == 2 and "--min-mb" in bad.stderr, bad.stderr
        for option, value in (("--ranks", "1,3"), ("--ranks", "4,x"), ("--ranks", "4.5"),
                              ("--threads", "1,x")):
            bad = subprocess.run([sys.executable, script, "--survey", binaries["new"], option,
                                  value], capture_output=True, text=True)
            assert bad.returncode == 2 and option in bad.stderr, (option, value, bad.stderr)
            assert "Traceback" not in bad.stderr, bad.stderr
    print("plan-sweep: ok")


if __name__ == "__main__":
    main()
