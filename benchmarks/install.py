"""Measure what installing rag-lsp takes: a fresh virtual environment's
site-packages, and the platform-specific VS Code extension.

    python benchmarks/install.py [--top 15] [--vsix] [--keep]

It makes a new virtual environment with the running Python, installs this
checkout into it the way a user does (``pip install /path``, not editable), and
prints the size of site-packages as ``du`` counts it (allocated 1,024-byte
blocks, shown in MiB as ``du -sm`` does) with and without what the empty
environment already held (pip; setuptools on Python 3.11 and older), then the
largest installed distributions, each with the files its RECORD lists.

``--vsix`` also builds the platform-specific ``.vsix`` of editors/vscode for this
machine's platform and Python (``scripts/bundle.sh``, after ``npm ci`` when its
node_modules are missing) and prints its size.

Goals: what ``pip install`` adds ≤ 180 MiB; the ``.vsix`` ≤ 45 MB.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20
INSTALL_GOAL_MIB = 180
VSIX_GOAL_MB = 45


def disk_usage(paths: list[Path]) -> int:
    """Bytes allocated to ``paths`` (files, and folders with all they hold), as
    ``du`` counts them: each file's blocks once, hard links once."""
    seen: set[tuple[int, int]] = set()
    total = 0

    def count(path: Path) -> None:
        nonlocal total
        status = os.lstat(path)
        if (status.st_dev, status.st_ino) not in seen:
            seen.add((status.st_dev, status.st_ino))
            total += status.st_blocks * 512

    for top in paths:
        count(top)
        if top.is_dir() and not top.is_symlink():
            for folder, folders, files in os.walk(top):
                for name in folders + files:
                    count(Path(folder) / name)
    return total


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages")) or sorted(venv.glob("Lib/site-packages"))
    if not found:
        raise SystemExit(f"no site-packages in {venv}")
    return found[0]


def python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def distributions(site: Path) -> dict[str, list[Path]]:
    """Each installed distribution's files (its RECORD), by its name."""
    found: dict[str, list[Path]] = {}
    for info in sorted(site.glob("*.dist-info")):
        name = info.name.removesuffix(".dist-info").rsplit("-", 1)[0]
        record = info / "RECORD"
        paths: set[Path] = {info}
        if record.is_file():
            with open(record, newline="", encoding="utf-8") as file:
                for row in csv.reader(file):
                    if row:
                        path = (site / row[0]).resolve()
                        if path.is_relative_to(site.resolve()) and path.exists():
                            paths.add(path)
        found[name] = sorted(paths)
    return found


def measure_install(top: int, keep: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="rag-lsp-install-"))
    try:
        venv = scratch / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        site = site_packages(venv)
        seeded = {name for name in distributions(site)}
        empty = disk_usage([site])
        done = subprocess.run(
            [str(python_of(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(REPO)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"pip install {REPO} failed:\n{done.stderr[-3000:]}")
        owned = distributions(site)
        total = disk_usage([site])
        pip_files = owned.get("pip", [])
        without_pip = total - disk_usage(pip_files)
        added = total - empty
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        print(f"Python {version}: pip install {REPO} into an empty virtual environment")
        print(f"  site-packages            {total / MIB:7.1f} MiB")
        print(f"  without pip              {without_pip / MIB:7.1f} MiB")
        verdict = "met" if added / MIB <= INSTALL_GOAL_MIB else "MISSED"
        print(
            f"  added by the install     {added / MIB:7.1f} MiB   goal ≤ {INSTALL_GOAL_MIB} MiB  ({verdict})"
            f"   (the empty environment held {', '.join(sorted(seeded)) or 'nothing'}: {empty / MIB:.1f} MiB)"
        )
        sizes = sorted(((disk_usage(paths), name) for name, paths in owned.items() if name not in seeded), reverse=True)
        if not top:
            sizes = []
        if sizes:
            print(f"\n  the {min(top, len(sizes))} largest of {len(sizes)} distributions installed:")
        for size, name in sizes[:top]:
            print(f"    {name:<28} {size / MIB:6.1f} MiB")
        rest = sum(size for size, _ in sizes[top:])
        if rest:
            print(f"    {'the other ' + str(len(sizes) - top):<28} {rest / MIB:6.1f} MiB")
        if keep:
            print(f"\n  kept: {venv}")
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def measure_vsix() -> None:
    here = REPO / "editors" / "vscode"
    if shutil.which("npm") is None or shutil.which("npx") is None:
        print("\n.vsix: npm is not installed; the platform-specific .vsix was not built")
        return
    if not (here / "node_modules").is_dir():
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=here, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"\n.vsix: npm ci failed, so the .vsix was not built:\n{done.stderr[-2000:]}")
            return
    machine = os.uname().machine if hasattr(os, "uname") else ""
    target = {"x86_64": "linux-x64", "aarch64": "linux-arm64"}.get(machine)
    if sys.platform != "linux" or target is None:
        print(f"\n.vsix: built here on Linux (x86_64, aarch64) only, not on {sys.platform} {machine}")
        return
    out = Path(tempfile.mkdtemp(prefix="rag-lsp-vsix-")) / f"rag-lsp-{target}.vsix"
    try:
        done = subprocess.run(
            ["bash", "scripts/bundle.sh", "--target", target, "--out", str(out)], cwd=here, capture_output=True, text=True
        )
        if done.returncode != 0 or not out.is_file():
            print(f"\n.vsix: scripts/bundle.sh failed:\n{(done.stderr or done.stdout)[-2000:]}")
            return
        size = out.stat().st_size
        verdict = "met" if size / 1e6 <= VSIX_GOAL_MB else "MISSED"
        print(f"\n.vsix ({target}, Python {sys.version_info.major}.{sys.version_info.minor})")
        print(f"  rag-lsp-{target}.vsix   {size / 1e6:7.1f} MB   goal ≤ {VSIX_GOAL_MB} MB  ({verdict})")
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=15, help="how many of the largest distributions to list")
    parser.add_argument("--vsix", action="store_true", help="also build the platform-specific .vsix and print its size")
    parser.add_argument("--keep", action="store_true", help="keep the virtual environment and say where it is")
    arguments = parser.parse_args()
    if arguments.top < 0:
        parser.error("--top must be 0 or more")
    measure_install(arguments.top, arguments.keep)
    if arguments.vsix:
        measure_vsix()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
