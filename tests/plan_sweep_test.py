#!/usr/bin/python3
"""scripts/plan-sweep against two stand-in iotx binaries whose plans and ratios are known:
the old one stages every layout, the new one walks 8-byte layouts in place; the old one's
bench answers 0.5 and the new one's 0.75. So exactly the f64 layouts are benchmarked, each
at 1.50x, and the layouts are reproducible by seed and within the size range asked for.

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

STAND_IN = """#!{python}
import sys
args = sys.argv[1:]
dtype = args[args.index("--dtype") + 1]
if args[0] == "plan":
    wide = {new} and dtype == "f64"
    print("strategy: " + ("tiles" if wide else "staged-tiles") + " (why)")
    print("stores:   regular (output 1 MiB)")
    print("          dim 0: n=512 driver in blocks of 256, tile columns")
elif args[0] == "bench":
    print("  ratio           " + ("0.75" if {new} else "0.50") + "  (iotx / memcpy)")
"""


def main():
    script = os.path.join(sys.argv[1], "scripts", "plan-sweep")
    sweep = load_script(script, "plan_sweep")
    first = sweep.random_layouts(60, 1e6, 4e6, seed=7)
    assert first == sweep.random_layouts(60, 1e6, 4e6, seed=7), "not reproducible by seed"
    assert first != sweep.random_layouts(60, 1e6, 4e6, seed=8), "the seed changes nothing"
    for dtype, shape, perm in first:
        dims = [int(n) for n in shape.split(",")]
        size = math.prod(dims) * sweep.ELEMENT_BYTES[dtype]
        assert 1e6 <= size <= 4e6, (dtype, shape, size)
        order = [int(p) for p in perm.split(",")]
        assert sorted(order) == list(range(len(dims))) and order != sorted(order), perm
    f64 = sum(1 for layout in first if layout[0] == "f64")
    assert 0 < f64 < len(first), "every layout of one dtype"

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
             "--count", "60", "--min-mb", "1", "--max-mb", "4", "--seed", "7",
             "--threads", "1,2", "--rounds", "1"],
            capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        assert f"{2 * f64} of 120 plans differ" in out, out
        lines = [line for line in out.splitlines() if re.match(r"\s*\d\.\d\d  ", line)]
        assert len(lines) == 2 * f64, out
        assert all(line.split()[1] == "f64" and line.split()[0] == "1.50" for line in lines), out
        for t in (1, 2):
            assert (f"{t} thread(s): {f64} changed, geometric mean new / old 1.500, 0 slower "
                    f"and {f64} faster") in out, out

        bad = subprocess.run([sys.executable, script, "--old", binaries["old"], "--new",
                              binaries["new"], "--min-mb", "4", "--max-mb", "4"],
                             capture_output=True, text=True)
        assert bad.returncode == 2 and "--min-mb" in bad.stderr, bad.stderr
    print("plan-sweep: ok")


if __name__ == "__main__":
    main()
