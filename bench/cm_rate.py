#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Connection setup through the RDMA CM (docs/cm.md): Debian's unmodified
cmtime (rdmacm-utils) between two mwpath processes joined by net_memif,
each through mwpath-run.  cmtime times each step of its connections --
create id, resolve address and route, create QP, connect, disconnect --
over all of them at once; with one connection that is the time of one
connect (REQ, REP, RTU and both QPs moved), with many the rate.

    bench/cm_rate.py [BUILD_DIR] [RUNS] [--conns N] [--quick] [--json FILE]
                                             (default: build, 3, 200)

Each figure is the median of RUNS runs.  The first address resolution
of a run starts the device (DPDK, the port): it is reported apart and is
not a connection's cost.  The machine is shared: compare ratios between
runs of one machine, as for every benchmark here.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchjson  # noqa: E402

EAL = "--no-huge --no-pci --no-shconf -m 256 --log-level=pmd.net.memif:error"
STEPS = ("create id", "resolve addr", "resolve route", "create qp", "connect", "disconnect",
         "destroy")


def config(path, mac, ip, sock, role):
    with open(path, "w") as f:
        f.write("[device 0]\neal = %s --vdev=net_memif0,role=%s,socket=%s\n"
                "[port 0]\nmac = %s\nipv4 = %s\n" % (EAL, role, sock, mac, ip))


def steps(out):
    """cmtime's table: {step: (total ms, max ms, min us, us a connection)}."""
    got = {}
    for line in out.splitlines():
        m = re.match(r"^(\w[\w ]*?)\s*:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
        if m and m.group(1) in STEPS:
            got[m.group(1)] = tuple(float(m.group(i)) for i in range(2, 6))
    return got


def one_run(build, tmp, conns):
    run = os.path.join(build, "provider", "mwpath-run")
    sock = os.path.join(tmp, "memif.sock")
    srv_cfg, cli_cfg = os.path.join(tmp, "s.ini"), os.path.join(tmp, "c.ini")
    config(srv_cfg, "02:00:00:00:00:01", "192.0.2.1", sock, "server")
    config(cli_cfg, "02:00:00:00:00:02", "192.0.2.2", sock, "client")
    # cmtime's server serves until it is stopped
    srv = subprocess.Popen([run, "-c", srv_cfg, "--", "cmtime", "-c", str(conns)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.5)
        cli = subprocess.run([run, "-c", cli_cfg, "--", "cmtime", "-s", "192.0.2.1", "-c",
                              str(conns)], capture_output=True, text=True, timeout=300)
    finally:
        srv.kill()
        srv.communicate()
    got = steps(cli.stdout)
    if cli.returncode != 0 or "connect" not in got:
        sys.exit("cmtime -c %d failed (exit %d):\n%s\n%s" % (conns, cli.returncode,
                                                             cli.stdout, cli.stderr))
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("runs", nargs="?", type=int, default=3)
    ap.add_argument("--conns", type=int, default=200, help="connections of the rate runs")
    ap.add_argument("--quick", action="store_true", help="one short run of each")
    ap.add_argument("--json", metavar="FILE", help="write the figures as a result document")
    a = ap.parse_args()
    runs, conns = (1, 20) if a.quick else (a.runs, a.conns)
    single, many = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            single.append(one_run(a.build, tmp, 1))
            many.append(one_run(a.build, tmp, conns))

    def med(rows, step, col):
        return statistics.median(r[step][col] for r in rows)
    one_ms = med(single, "connect", 0)
    disc_ms = med(single, "disconnect", 0)
    total_ms = med(many, "connect", 0)
    rate = conns / (total_ms / 1000.0)
    start_ms = med(single, "resolve addr", 1)
    print("# cmtime between two mwpath devices on memif, median of %d runs" % runs)
    print("one connection: connect %.2f ms (REQ to ESTABLISHED), disconnect %.2f ms"
          % (one_ms, disc_ms))
    print("%d connections at once: connect %.1f ms in all, %.0f connections/s, "
          "%.1f us a connection" % (conns, total_ms, rate, med(many, "connect", 3)))
    print("device start (the first address resolution): %.0f ms" % start_ms)
    results = [
        {"name": "connect_1", "connect_ms": one_ms, "disconnect_ms": disc_ms,
         "device_start_ms": start_ms},
        {"name": "connect_%d" % conns, "connections": conns, "connect_total_ms": total_ms,
         "connections_per_s": rate, "us_per_connection": med(many, "connect", 3),
         "disconnect_total_ms": med(many, "disconnect", 0)},
    ]
    if a.json:
        benchjson.write(a.json, benchjson.document("cm_rate", results, a.build))


if __name__ == "__main__":
    main()
