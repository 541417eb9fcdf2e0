"""The newest glibc symbol version each shipped binary needs, against the floor we promise.

    python3 tests/packaging/glibc.py [--max 2.17] ARTIFACT...

An ARTIFACT is an ELF file (the C library, the command line) or an archive that holds some: a
wheel or a jar (zip), an npm tarball (tar.gz). Every ELF file inside is checked. Prints one line
per binary, `<artifact>:<member> needs GLIBC_x.y`, and exits 1 if any needs more than --max (our
release artifacts are linked against glibc 2.17 by scripts/zig-cc.sh: manylinux2014, RHEL/UBI 7,
Amazon Linux 2) or if an artifact holds no binary at all.
"""
import argparse
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ELF = b"\x7fELF"


def members(path):
    """(name, bytes) of every ELF file in PATH (PATH itself if it is one)."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head == ELF:
        with open(path, "rb") as f:
            yield "", f.read()
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                data = z.read(n)
                if data[:4] == ELF:
                    yield n, data
    elif tarfile.is_tarfile(path):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    data = t.extractfile(m).read()
                    if data[:4] == ELF:
                        yield m.name, data
    else:
        sys.exit(f"glibc.py: {path} is neither an ELF file nor a zip or tar archive")


def newest_glibc(data):
    """The newest GLIBC_x.y version among the dynamic symbols and version needs of an ELF image."""
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        out = subprocess.run(["objdump", "-T", "-p", f.name], check=True, capture_output=True, text=True).stdout
    versions = {(int(a), int(b)) for a, b in re.findall(r"GLIBC_(\d+)\.(\d+)", out)}
    return max(versions) if versions else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", default="2.17", help="the newest glibc the binaries may need")
    ap.add_argument("artifacts", nargs="+")
    args = ap.parse_args()
    floor = tuple(int(x) for x in args.max.split("."))
    bad = 0
    for path in args.artifacts:
        found = 0
        for name, data in members(path):
            found += 1
            need = newest_glibc(data)
            label = f"{path}:{name}" if name else path
            shown = "no versioned glibc symbol" if need is None else f"GLIBC_{need[0]}.{need[1]}"
            over = need is not None and need > floor
            print(f"{label} needs {shown}{'  <-- newer than ' + args.max if over else ''}")
            bad += over
        if not found:
            print(f"{path}: holds no ELF binary")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
