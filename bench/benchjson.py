# SPDX-License-Identifier: BSD-3-Clause
"""The JSON result document of a benchmark run, as bench/bench_json.c
writes it for the C benchmarks:

    {"bench": NAME,
     "meta": {"commit", "build": {...}, "cpu_model", "cores", "date", "argv"},
     "results": [{"name": ..., figures with their units in their keys}, ...]}

The commit and the build options come from BUILD/bench/bench-build.json,
which the build writes (bench/meson.build); without it, the commit is
`git describe` of the source and the build "unknown"."""
import datetime
import json
import os
import subprocess
import sys

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class BadResults(Exception):
    """A file that is not a benchmark result document (its message says why)."""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _git_describe():
    try:
        r = subprocess.run(["git", "-C", SRC, "describe", "--always", "--dirty"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"


def meta(build=None):
    """The meta of a run now, of the build in directory `build`."""
    commit, opts = None, "unknown"
    if build is not None:
        try:
            with open(os.path.join(build, "bench", "bench-build.json")) as f:
                b = json.load(f)
            commit, opts = b.get("commit") or None, b.get("build", "unknown")
        except (OSError, ValueError):
            pass
    return {
        "commit": commit or _git_describe(),
        "build": opts,
        "cpu_model": cpu_model(),
        "cores": os.sysconf("SC_NPROCESSORS_ONLN"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": list(sys.argv),
    }


def document(bench, results, build=None, **extra):
    doc = {"bench": bench, "meta": meta(build), "results": results}
    doc.update(extra)
    return doc


def write(path, doc):
    """Write doc to path; a message and exit 1 if it cannot be written."""
    if path is None:
        return
    try:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    except OSError as e:
        sys.exit("%s: cannot write %s: %s" % (doc.get("bench", "bench"), path, e.strerror))


def load(path):
    """A result document from path; BadResults if it cannot be read or is
    not one."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise BadResults("%s: %s" % (path, e.strerror)) from None
    except ValueError as e:
        raise BadResults("%s: not JSON (%s)" % (path, e)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list) or \
            not isinstance(doc.get("bench"), str):
        raise BadResults("%s: not a benchmark result (no \"bench\" and \"results\")" % path)
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            raise BadResults("%s: result %d has no name" % (path, i))
    doc.setdefault("meta", {})
    return doc


def figures(result):
    """The numeric figures of a result: {key: value}, booleans left out."""
    return {k: v for k, v in result.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}
