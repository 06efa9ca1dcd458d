#!/usr/bin/python3
"""The guard behind `scripts/install-deps --check`: proves the package list is complete.

A CMake configure finds files outside the tree: the package config files and find modules it
reads (listed in build.ninja as the inputs that re-run CMake) and the tools, libraries and
include dirs it records in CMakeCache.txt. Each of those files belongs to a Debian package
(`dpkg -S`). Every such package must be one that install-deps names, or be in the Depends
closure of one (`apt-cache depends --recurse`, Recommends and Suggests not followed, since
install-deps installs with --no-install-recommends). Anything else was installed by hand on
this machine and would be missing on a fresh one: it is printed with the file that needed it,
and the check fails.

Usage: check-deps.py BUILD_DIR PACKAGE...   (install-deps passes its own list)
"""
import os
import re
import subprocess
import sys

# Cache entries that name where things go, not what the build uses.
IGNORED_CACHE_PREFIXES = ("CMAKE_INSTALL_",)
# Directories that every package in the base system shares; they prove nothing.
SHARED_DIRS = {"/", "/usr", "/usr/include", "/usr/lib", "/usr/bin", "/usr/share", "/lib",
               "/usr/lib/x86_64-linux-gnu", "/usr/local", "/usr/local/include"}


def ninja_inputs(build_dir):
    """The files whose change re-runs CMake: every CMakeLists, module and config file read."""
    path = os.path.join(build_dir, "build.ninja")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("build build.ninja: RERUN_CMAKE"):
                files = line.split("|", 1)[1] if "|" in line else ""
                # Ninja escapes a space in a path as "$ ".
                return [p.replace("\0", " ") for p in files.replace("$ ", "\0").split()]
    sys.exit(f"check-deps: {path} has no RERUN_CMAKE rule (not a Ninja build dir?)")


def cache_paths(build_dir):
    """(variable, path) of every FILEPATH/PATH entry of CMakeCache.txt that exists."""
    entry = re.compile(r"^([A-Za-z0-9_.+-]+):(FILEPATH|PATH)=(.*)$")
    out = []
    with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
        for line in f:
            m = entry.match(line.rstrip("\n"))
            if not m or m.group(1).startswith(IGNORED_CACHE_PREFIXES):
                continue
            for value in m.group(3).split(";"):
                if os.path.isabs(value) and os.path.exists(value):
                    out.append((m.group(1), value))
    return out


def candidates(path):
    """Spellings dpkg may know a path by, best first: as given, then resolved; each also across
    the merged /usr. The path as given comes first because a development link
    (libfoo.so -> libfoo.so.1) belongs to the -dev package, which is what the build needed."""
    seen = []
    for p in (path, os.path.realpath(path)):
        for q in (p, p[4:] if p.startswith("/usr/") else "/usr" + p):
            if q not in seen:
                seen.append(q)
    return seen


def owners(paths):
    """path -> set of owning packages, for every spelling dpkg answers for."""
    result = {}
    queries = sorted({c for p in paths for c in candidates(p)})
    for i in range(0, len(queries), 500):
        proc = subprocess.run(["dpkg", "-S", *queries[i:i + 500]], capture_output=True,
                              text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("diversion ") or ": " not in line:
                continue
            pkgs, where = line.split(": ", 1)
            names = {p.strip().split(":")[0] for p in pkgs.split(",")}
            result.setdefault(where, set()).update(names)
    return {p: next((result[c] for c in candidates(p) if c in result), set()) for p in paths}


def depends_closure(packages):
    """Every package reachable from `packages` through Depends and Pre-Depends."""
    proc = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages],
        capture_output=True, text=True, check=True)
    closure = set(packages)
    for line in proc.stdout.splitlines():
        name = line.strip().lstrip("|")
        if ":" in name:  # "Depends: foo" -> foo
            name = name.split(":", 1)[1].strip()
        name = name.strip("<>").split(":")[0]
        if name:
            closure.add(name)
    return closure


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build_dir = os.path.realpath(sys.argv[1])
    listed = sys.argv[2:]
    tree = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))

    def outside(p):
        r = os.path.realpath(p)
        return not (r.startswith(tree + "/") or r.startswith(build_dir + "/"))

    needs = {}  # path -> what needed it
    for f in ninja_inputs(build_dir):
        if os.path.isabs(f) and outside(f):
            needs.setdefault(f, "read by configure")
    for var, p in cache_paths(build_dir):
        if outside(p) and os.path.realpath(p) not in SHARED_DIRS:
            needs.setdefault(p, f"CMakeCache.txt {var}")

    closure = depends_closure(listed)
    owned = owners(list(needs))
    offenders = []
    for path, why in sorted(needs.items()):
        pkgs = owned[path]
        if os.path.isdir(path):
            # A directory is shared by packages; it is covered if any of them is.
            if pkgs and not pkgs & closure:
                offenders.append((sorted(pkgs)[0], path, why))
            continue
        if not pkgs:
            offenders.append(("(no Debian package)", path, why))
        elif not pkgs & closure:
            offenders.append((sorted(pkgs)[0], path, why))

    print(f"check-deps: {len(needs)} files found by configure outside the tree, "
          f"{len(listed)} packages listed, {len(closure)} in their Depends closure")
    if not offenders:
        print("check-deps: every one comes from a listed package or its dependencies")
        return 0
    for pkg, path, why in offenders:
        print(f"check-deps: missing from install-deps: {pkg}  (needed for {path}, {why})")
    print(f"check-deps: {len(offenders)} file(s) come from packages a fresh machine would not "
          "have; add them to scripts/install-deps", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
