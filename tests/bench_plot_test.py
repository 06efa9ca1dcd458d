#!/usr/bin/python3
"""scripts/bench-plot on a made-up Google Benchmark report whose answers are known by
construction: each ratio is the median of an implementation's repetitions over memcpy's median
of the same case and thread count; a peer missing from a case has no row; the PNG is drawn when
matplotlib is installed (scripts/install-deps --plot), and its absence is a clear error.

Usage: bench_plot_test.py SOURCE_DIR
"""
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def main():
    script = os.path.join(sys.argv[1], "scripts", "bench-plot")
    # Three repetitions each; medians: memcpy 10 and 20 GB/s, iotx 5 (1 thread) and 30 (2).
    reps = {
        "memcpy/q1/threads:1": [10e9, 9e9, 12e9],
        "iotx/q1/threads:1": [5e9, 1e9, 7e9],
        "stream_copy/q1/threads:1": [11e9, 11e9, 11e9],
        "memcpy/q1/threads:2": [20e9, 25e9, 15e9],
        "iotx/q1/threads:2": [30e9, 31e9, 29e9],
        "eigen/q1/threads:2": [2e9, 2e9, 2e9],
    }
    benchmarks = [{"name": name + "/real_time", "run_name": name + "/real_time",
                   "run_type": "iteration", "bytes_per_second": v}
                  for name, values in reps.items() for v in values]
    # Aggregates (bench-table asks for repetitions) must not count as repetitions.
    benchmarks.append({"name": "iotx/q1/threads:1/real_time_median", "run_type": "aggregate",
                       "bytes_per_second": 1e15})
    expected = {("q1", "1", "iotx"): 0.5, ("q1", "1", "stream_copy"): 11 / 10,
                ("q1", "2", "iotx"): 1.5, ("q1", "2", "eigen"): 0.1}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "made-up.json")
        with open(report, "w") as f:
            json.dump({"context": {}, "benchmarks": benchmarks}, f)
        out_csv = os.path.join(tmp, "ratios.csv")
        r = run(script, report, "--csv", out_csv, "--no-plot")
        if r.returncode != 0:
            sys.exit(f"FAIL: bench-plot --csv --no-plot exited {r.returncode}: {r.stderr}")
        with open(out_csv) as f:
            got = {(row["case"], row["threads"], row["impl"]): float(row["ratio"])
                   for row in csv.DictReader(f)}
        if set(got) != set(expected):
            failures.append(f"rows {sorted(got)} != {sorted(expected)}")
        for key, want in expected.items():
            if key in got and abs(got[key] - want) > 1e-3:
                failures.append(f"{key}: {got[key]} != {want}")

        png = os.path.join(tmp, "plot.png")
        r = run(script, report, "-o", png, "--title", "test")
        if importlib.util.find_spec("matplotlib") is not None:
            if r.returncode != 0:
                failures.append(f"drawing failed: {r.stderr}")
            else:
                with open(png, "rb") as f:
                    if f.read(8) != b"\x89PNG\r\n\x1a\n":
                        failures.append("the plot is not a PNG")
        elif r.returncode == 0 or "install-deps --plot" not in r.stderr:
            failures.append(f"without matplotlib: exit {r.returncode}, stderr {r.stderr!r}")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("bench-plot: ratios as expected")


if __name__ == "__main__":
    main()
