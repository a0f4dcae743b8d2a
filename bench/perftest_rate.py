#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debian's unmodified perftest between two mwpath processes (the
libibverbs device, docs/verbs-device.md), joined by net_memif, beside the
responder alone (bench_resp: one lcore, no ethdev) measured in the same
run: the ratio is what to compare between builds and machines.

    bench/perftest_rate.py [BUILD_DIR] [RUNS] [--quick] [--json FILE]
                                                  (default: build, 3)

Message rates are perftest's MsgRate (64 B, RC); bandwidths its BW
average; latencies ib_write_lat's and ib_send_lat's t_typical (their
median).  Bandwidths are set beside memcpy of the same size, measured here
(libc's memmove through ctypes, a call's own cost subtracted).  Each
figure is the median of RUNS runs, each long enough (0.1 s of traffic or
more) for the steady state to make it.  "64 KiB WRITE 4K" runs both
devices at a path MTU of 4096 (perftest's --mtu=4096; memif bsize=8192),
as on a link with jumbo frames.  "1 proc WRITE" is not perftest but
loop_verbs_bench: one process, two QPs of one device connected through
the port's own address, posting and polling through libibverbs.  Both
processes and
their progress threads share this machine's cores with perftest's own
polling threads, so the pair's rate is far below what one polling lcore
answers: the ratio says how much of the responder's rate reaches an
unmodified program through ibv_post_send, the wire (memif), and
ibv_poll_cq.
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchjson  # noqa: E402

EAL = "--no-huge --no-pci --no-shconf -m 256 --log-level=pmd.net.memif:error"
TESTS = [
    # (label, tool and args, size, figure: 'rate' Mpps, 'bw' MB/s or 'lat' us
    # (median), baseline: a bench_resp result or "memcpy" (of the size), name
    # in the JSON).  Runs long enough (0.1 s of traffic or more) that the
    # steady state, not the first round trips, makes the figure.
    ("64 B WRITE", ["ib_write_bw", "-n", "1000000"], 64, "rate", "write_64B_1024keys",
     "write_64B"),
    ("64 B READ", ["ib_read_bw", "-n", "500000"], 64, "rate", "read_8B_1024keys",
     "read_64B"),
    ("64 B SEND", ["ib_send_bw", "-n", "1000000"], 64, "rate", "write_64B_1024keys",
     "send_64B"),
    ("FETCH_ADD", ["ib_atomic_bw", "-A", "FETCH_AND_ADD", "-n", "500000"], 8, "rate",
     "fetch_add_1024keys", "fetch_add"),
    ("4 KiB WRITE", ["ib_write_bw", "-n", "200000"], 4096, "bw", None, "write_4096B"),
    ("64 KiB WRITE", ["ib_write_bw", "-n", "15000"], 65536, "bw", "memcpy", "write_65536B"),
    # the path MTU of a link with jumbo frames (mtu = 4096, memif bsize=8192)
    ("64 KiB WRITE 4K", ["ib_write_bw", "-n", "25000", "--mtu=4096"], 65536, "bw", "memcpy",
     "write_65536B_mtu4096"),
    ("64 B WRITE lat", ["ib_write_lat", "-n", "5000"], 64, "lat", None, "write_lat_64B"),
    ("64 B SEND lat", ["ib_send_lat", "-n", "5000"], 64, "lat", None, "send_lat_64B"),
    # one process, not perftest: bench/loop_verbs_bench.c's two QPs of one
    # device, connected through the port's own address (no wire)
    ("1 proc WRITE", ["loop_verbs_bench", "-n", "3000000"], 64, "rate",
     "write_64B_1024keys", "one_process_write_64B"),
]
# --quick: three tests, short
QUICK = [("64 B WRITE", ["ib_write_bw", "-n", "2000"], 64, "rate", "write_64B_1024keys",
          "write_64B"),
         ("64 KiB WRITE", ["ib_write_bw", "-n", "100"], 65536, "bw", "memcpy", "write_65536B"),
         ("64 B SEND lat", ["ib_send_lat", "-n", "200"], 64, "lat", None, "send_lat_64B"),
         ("1 proc WRITE", ["loop_verbs_bench", "-n", "30000"], 64, "rate",
          "write_64B_1024keys", "one_process_write_64B")]


def config(path, mac, ip, sock, role, mtu):
    """A device on one end of the memif link; a path MTU above 1024 gets
    memif buffers that hold its frames whole (docs/configuration.md)."""
    with open(path, "w") as f:
        f.write("[device 0]\neal = %s --vdev=net_memif0,role=%s,socket=%s%s\n"
                "[port 0]\nmac = %s\nipv4 = %s\nmtu = %d\n"
                % (EAL, role, sock, ",bsize=8192" if mtu > 1024 else "", mac, ip, mtu))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pair(run, tmp, args):
    """perftest on both sides, on a memif link of their own; the client's
    output, or None if either side failed or took over a minute."""
    sock = tempfile.mktemp(prefix="memif", dir=tmp)
    server, client = os.path.join(tmp, "s.ini"), os.path.join(tmp, "c.ini")
    # --mtu=N (perftest's own option) also sets both devices' path MTU
    mtu = next((int(a.split("=")[1]) for a in args if a.startswith("--mtu=")), 1024)
    config(server, "02:00:00:00:00:01", "192.0.2.1", sock, "server", mtu)
    config(client, "02:00:00:00:00:02", "192.0.2.2", sock, "client", mtu)
    args = args + ["-d", "mwpath0", "-x", "0", "-p", str(free_port())]
    srv = subprocess.Popen([run, "-c", server, "--"] + args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    cli = None
    try:
        cli = subprocess.run([run, "-c", client, "--"] + args + ["localhost"],
                             capture_output=True, text=True, timeout=60)
        srv.wait(timeout=30)
    except subprocess.TimeoutExpired:
        cli = None
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    if cli is None or cli.returncode != 0 or srv.returncode != 0:
        print("# %s: failed or timed out" % " ".join(args), file=sys.stderr)
        return None
    return cli.stdout


def one_process(run, build, tmp, args, size):
    """M operations a second of loop_verbs_bench (64 B WRITEs between two
    QPs of one device, post to completion) on a net_null port, as
    bench/run.sh runs it; None if it failed."""
    cfg, out = os.path.join(tmp, "loop.ini"), os.path.join(tmp, "loop.json")
    with open(cfg, "w") as f:
        f.write("[device 0]\neal = %s --vdev=net_null0,no-rx=1\n[port 0]\n"
                "mac = 02:00:00:00:00:01\nipv4 = 192.0.2.1\n" % EAL)
    r = subprocess.run([run, "-c", cfg, "--", os.path.join(build, "bench", args[0])] +
                       args[1:] + ["--sizes", str(size), "--op", "write", "--json", out],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print("# %s: failed: %s" % (args[0], r.stderr.strip()[-300:]), file=sys.stderr)
        return None
    with open(out) as f:
        return json.load(f)["results"][0]["mpps"]


def figure(out, size, kind):
    """rate: MsgRate; bw: BW average; lat: t_typical (the third figure of
    both kinds of table)."""
    m = re.search(r"^\s*%d\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)" % size, out or "", re.M)
    if m is None:
        return None
    return float(m.group(2)) if kind == "bw" else float(m.group(3))


def memcpy_mb_per_s(size, seconds=0.3):
    """libc memmove of size bytes between two buffers, MB/s: calls through
    ctypes for `seconds`, less the same number of calls copying nothing."""
    import ctypes
    libc = ctypes.CDLL(None)
    src, dst = ctypes.create_string_buffer(size), ctypes.create_string_buffer(size)
    mm = libc.memmove

    def timed(n, nbytes):
        t = time.perf_counter()
        for _ in range(n):
            mm(dst, src, nbytes)
        return time.perf_counter() - t

    n = 1000
    while timed(n, size) < seconds:
        n *= 2
    best = min(timed(n, size) - timed(n, 0) for _ in range(3))
    return n * size / best / 1e6


def bench_resp(build, tmp):
    """Mpps of bench_resp's results (--quick: 1024 keys, 64 B WRITEs), by
    name, from its JSON."""
    path = os.path.join(tmp, "bench_resp.json")
    subprocess.run([os.path.join(build, "bench", "bench_resp"), "--quick", "--json", path],
                   capture_output=True, text=True, check=True)
    with open(path) as f:
        return {r["name"]: r["mpps"] for r in json.load(f)["results"] if "mpps" in r}


def main():
    ap = argparse.ArgumentParser(
        description="Debian's unmodified perftest between two mwpath processes (the "
                    "libibverbs device over net_memif), beside bench_resp in the same run; "
                    "medians of RUNS runs, and the ratios.")
    ap.add_argument("build", nargs="?", default="build",
                    help="the meson build directory (build)")
    ap.add_argument("runs", nargs="?", type=int, default=3, help="runs per figure (3)")
    ap.add_argument("--quick", action="store_true",
                    help="one run of two short tests (a smoke test, not a figure)")
    ap.add_argument("--json", metavar="FILE", help="write the figures, with the build and "
                    "the machine, to FILE as JSON")
    a = ap.parse_args()
    build, runs = a.build, (1 if a.quick else a.runs)
    tests = QUICK if a.quick else TESTS
    if runs < 1:
        ap.error("RUNS must be at least 1")
    run = os.path.join(build, "provider", "mwpath-run")
    if not os.path.exists(run):
        ap.error("no %s" % run)
    with tempfile.TemporaryDirectory() as tmp:
        figures = {t[0]: [] for t in tests}
        resp = {}
        for _ in range(runs):
            for label, args, size, kind, _row, _name in tests:
                if args[0] == "loop_verbs_bench":
                    v = one_process(run, build, tmp, args, size)
                else:
                    v = figure(pair(run, tmp, args + ["-s", str(size)]), size, kind)
                if v is not None:
                    figures[label].append(v)
            for k, v in bench_resp(build, tmp).items():
                resp.setdefault(k, []).append(v)
            resp.setdefault("memcpy", []).append(memcpy_mb_per_s(65536))
    print("# perftest_rate: two mwpath processes on net_memif (perftest unmodified), "
          "bench_resp in the same run; medians of %d" % runs)
    print("%-16s %14s %22s %8s" % ("test", "perftest", "baseline", "ratio"))
    results, failed = [], 0
    for label, args, size, kind, row, name in tests:
        vals = figures[label]
        if not vals:
            print("%-16s %14s" % (label, "FAILED"))
            failed += 1
            continue
        if len(vals) < runs:
            print("# %s: %d of %d runs failed" % (label, runs - len(vals), runs))
        v = statistics.median(vals)
        unit = {"rate": "Mpps", "bw": "MB/s", "lat": "us"}[kind]
        res = {"name": name, "series": args[0], "what": label, "payload": size,
               "runs": len(vals)}
        res[{"rate": "mpps", "bw": "mb_per_s", "lat": "median_us"}[kind]] = v
        if row == "memcpy" and resp.get(row):
            r = statistics.median(resp[row])
            print("%-16s %9.3f %s %11.0f MB/s memcpy %8.3f" % (label, v, unit, r, v / r))
            res.update({"memcpy_mb_per_s": r, "ratio": v / r})
        elif row is not None and resp.get(row):
            r = statistics.median(resp[row])
            print("%-16s %9.3f %s %10.2f Mpps bench_resp %8.3f" % (label, v, unit, r, v / r))
            res.update({"bench_resp": row, "bench_resp_mpps": r, "ratio": v / r})
        else:
            print("%-16s %9.3f %-4s %22s %8s" % (label, v, unit, "-", "-"))
        results.append(res)
    benchjson.write(a.json, benchjson.document("perftest_rate", results, build))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
