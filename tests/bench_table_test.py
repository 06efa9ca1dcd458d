#!/usr/bin/python3
"""Where scripts/bench-table puts a table in docs/performance.md: a run on the same machine
with the same case list replaces its section; a new case list on a machine goes right after
that machine's other sections (an Intel machine's random-layout table used to land at the top
of the file, above every hand-written section); a new machine goes before the first
hand-written "## Where the time went" or "## Notes"; hand-written text is kept throughout.
With --traffic, the "walk traffic" column holds the fastest walk without the permute as a ratio
to memcpy, "-" where none ran, and the summary line compares iotx with it (made-up medians).

Usage: bench_table_test.py SOURCE_DIR
"""
import os
import sys

from script_module import load_script


def section(key, body):
    return f"<!-- bench-table section: {key} -->\n{body}\n<!-- bench-table end: {key} -->"


def main():
    bt = load_script(os.path.join(sys.argv[1], "scripts", "bench-table"), "bench_table")
    doc = ("# Permute kernel performance\n\nintro\n\n"
           + section("AMD | suite.txt", "amd suite") + "\n\n"
           + section("Intel | suite.txt", "intel suite") + "\n\nintel notes\n\n"
           + "## Notes\n\nhand-written\n")
    failures = []

    def expect(got, want, what):
        if got != want:
            failures.append(f"{what}:\n--- got\n{got}\n--- want\n{want}")

    expect(bt.replace_section(doc, "AMD | suite.txt", section("AMD | suite.txt", "new")),
           doc.replace("amd suite", "new"), "a section replaced in place")
    random = section("Intel | random.txt", "intel random")
    expect(bt.replace_section(doc, "Intel | random.txt", random),
           doc.replace(section("Intel | suite.txt", "intel suite"),
                       section("Intel | suite.txt", "intel suite") + "\n\n" + random),
           "a machine's second list after its first")
    arm = section("Arm | suite.txt", "arm suite")
    expect(bt.replace_section(doc, "Arm | suite.txt", arm),
           doc.replace("## Notes", arm + "\n\n## Notes"), "a new machine before the notes")
    cases = {"s3": {"dtype": "i8", "shape": "2048,2048", "perm": "1,0", "bytes": 4 << 20,
                    "order": 0},
             "n1": {"dtype": "f32", "shape": "32,3,224,224", "perm": "0,2,3,1",
                    "bytes": 19267584, "order": 1}}
    med = {"memcpy/s3/threads:1": 40e9, "iotx/s3/threads:1": 12e9,
           "tiles_traffic/s3/threads:1": 14e9, "tiles_traffic_stream/s3/threads:1": 13e9,
           "staged_traffic/s3/threads:1": 16e9, "staged_traffic_stream/s3/threads:1": 8e9,
           "memcpy/s3/threads:2": 80e9, "iotx/s3/threads:2": 24e9,
           "memcpy/n1/threads:1": 20e9, "iotx/n1/threads:1": 25e9}
    rows, summary = bt.build_table(cases, med, [1, 2], traffic=True)
    expect(rows[0].endswith("| oneDNN | walk traffic |"), True, "the traffic column's header")
    expect(rows[1], "|" + "---|" * 12, "the header rule of 12 columns")
    expect(rows[2], "| s3 | i8 | 2048,2048 | 1,0 | 4 | 1 | 40.00 | 0.30 | - | - | - | 0.40 |",
           "the fastest walk (staged, 16 of memcpy's 40 GB/s)")
    expect(rows[3].endswith("| 2 | 80.00 | 0.30 | - | - | - | - |"), True, "no walk on two threads")
    expect(rows[4].endswith("| 1.25 | - | - | - | - |"), True, "no walk for a case without one")
    expect(bt.traffic_line(summary),
           ["- iotx / walk traffic, 1 runs: geometric mean 0.75; min 0.75; below its walks' "
            "traffic: s3 0.75"], "the summary over the runs with a walk")
    plain, _ = bt.build_table(cases, med, [1], traffic=False)
    expect(plain[2], "| s3 | i8 | 2048,2048 | 1,0 | 4 | 1 | 40.00 | 0.30 | - | - | - |",
           "no traffic column without --traffic")
    if failures:
        sys.exit("FAIL: " + "\n".join(failures))
    print("bench-table: sections where expected, traffic column as measured")


if __name__ == "__main__":
    main()
