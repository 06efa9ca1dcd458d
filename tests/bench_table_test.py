#!/usr/bin/python3
"""Where scripts/bench-table puts a table in docs/performance.md: a run on the same machine
with the same case list replaces its section; a new case list on a machine goes right after
that machine's other sections (an Intel machine's random-layout table used to land at the top
of the file, above every hand-written section); a new machine goes before the first
hand-written "## Where the time went" or "## Notes"; hand-written text is kept throughout.

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
    if failures:
        sys.exit("FAIL: " + "\n".join(failures))
    print("bench-table: sections where expected")


if __name__ == "__main__":
    main()
