#!/usr/bin/python3
"""Proves that the build enforces the layer graph (cmake/IotxLayers.cmake).

For every layer L and every layer M, preprocesses a probe with the flags the build uses for one
of L's own sources (from compile_commands.json): the probe includes a header of M. The header
must be found when M is L or a layer L depends on (directly or through its dependencies), and
the probe must fail with "No such file" otherwise. A layer that could reach a layer above it, or a sibling it does not
declare, fails this test.

Usage: check_layering.py BUILD_DIR
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile


def check_picture(graph):
    """docs/layers.dot (scripts/layer-graph) must show the declared graph: its edges between
    layers are the transitive reduction of iotx-layers.txt."""
    import re
    docs = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "layers.dot")
    with open(docs, encoding="utf-8") as f:
        drawn = {(a.removeprefix("iotx_"), b.removeprefix("iotx_"))
                 for a, b in re.findall(r"(iotx_\w+) -> (iotx_\w+);", f.read())
                 if a != "iotx_cli"}

    def reaches(a, b, skip_edge):
        todo, seen = [a], set()
        while todo:
            n = todo.pop()
            for d in graph[n]:
                if (n, d) == skip_edge or d in seen:
                    continue
                if d == b:
                    return True
                seen.add(d)
                todo.append(d)
        return False

    reduced = {(a, b) for a in graph for b in graph[a] if not reaches(a, b, (a, b))}
    if drawn == reduced:
        print(f"ok   docs/layers.dot shows the declared graph ({len(reduced)} edges)")
        return 0
    print(f"FAIL docs/layers.dot differs from the declared graph: drawn but not declared "
          f"{sorted(drawn - reduced)}, declared but not drawn {sorted(reduced - drawn)}; "
          f"run scripts/layer-graph")
    return 1


def main():
    build = sys.argv[1]
    graph = {}
    with open(os.path.join(build, "iotx-layers.txt"), encoding="utf-8") as f:
        for line in f:
            name, deps = line.split(":", 1)
            graph[name.strip()] = deps.split()

    def reach(layer):
        seen, todo = set(), [layer]
        while todo:
            for dep in graph[todo.pop()]:
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen | {layer}

    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.load(f)
    scopes = os.path.join(os.path.realpath(build), "include-scopes")
    # One header per layer to include, and one real compile command per layer.
    header, command = {}, {}
    for layer in graph:
        folder = os.path.join(scopes, layer, layer)
        header[layer] = sorted(h for h in os.listdir(folder) if h.endswith(".h"))[0]
        src = os.path.realpath(folder)
        # A source of the layer's own folder, or in a unity build a batch of them.
        unity = os.sep + os.path.join(f"iotx_{layer}.dir", "Unity") + os.sep
        for c in commands:
            own = os.path.dirname(os.path.realpath(c["file"])) == src and c["file"].endswith(".cc")
            if own or (unity in c["file"] and c["file"].endswith(".cxx")):
                command[layer] = c
                break
        else:
            sys.exit(f"no compile command for a source of layer {layer}")

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for layer, c in command.items():
            args = shlex.split(c["command"]) if "command" in c else list(c["arguments"])
            # Keep the compiler and its flags; compile the probe instead of the source.
            flags = [a for a in args[1:] if a not in ("-c",)]
            cleaned, skip = [], False
            for a in flags:
                if skip:
                    skip = False
                    continue
                if a in ("-o", "-MF", "-MT", "-MQ"):
                    skip = True
                    continue
                if a == c["file"] or a.endswith(os.path.basename(c["file"])) or a in ("-MD", "-MMD"):
                    continue
                cleaned.append(a)
            allowed = reach(layer)
            for other in graph:
                probe = os.path.join(tmp, f"{layer}_includes_{other}.cc")
                with open(probe, "w", encoding="utf-8") as f:
                    f.write(f'#include "{other}/{header[other]}"\n')
                # Preprocessing is where an include is found or not (and a visible header's
                # own includes with it); parsing the headers would add minutes, not checks.
                proc = subprocess.run([args[0], *cleaned, "-E", "-o", os.devnull, probe],
                                      cwd=c["directory"], capture_output=True, text=True)
                visible = proc.returncode == 0
                hidden = "No such file" in proc.stderr
                want = other in allowed
                ok = visible if want else hidden
                verdict = "found" if visible else ("not found" if hidden else "error")
                print(f"{'ok  ' if ok else 'FAIL'} {layer:9} includes {other}/{header[other]}: "
                      f"{verdict} (expected {'found' if want else 'not found'})")
                if not ok:
                    failures += 1
                    if not hidden and not visible:
                        print(proc.stderr[:2000])
    failures += check_picture(graph)
    print(f"layering: {len(graph)} layers, {failures} violation(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
