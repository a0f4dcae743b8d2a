#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""compare-runs.py A B: the answers of two mwpath runs are the same, byte
for byte: every frame of A/mwpath-out.pcap and B/mwpath-out.pcap (the
record's bytes and original length; not the capture time), and every file
of A/dump and B/dump (objects.json with its run.seconds, the time the run
took, set aside).  Prints what differs; exit 0 if nothing, 1 otherwise."""
import json
import os
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise SystemExit("%s: not a pcap file" % path)
    head, out, off = data[:24], [], 24
    while off < len(data):
        _, _, caplen, origlen = struct.unpack_from("<IIII", data, off)
        out.append((origlen, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return head, out


def dump_file(path):
    with open(path, "rb") as f:
        data = f.read()
    if os.path.basename(path) == "objects.json":
        obj = json.loads(data)
        obj.get("run", {}).pop("seconds", None)
        return json.dumps(obj, sort_keys=True).encode()
    return data


def main(a, b):
    errs = []
    ha, fa = frames(os.path.join(a, "mwpath-out.pcap"))
    hb, fb = frames(os.path.join(b, "mwpath-out.pcap"))
    if ha != hb:
        errs.append("pcap file headers differ")
    if len(fa) != len(fb):
        errs.append("frames: %d vs %d" % (len(fa), len(fb)))
    for i, (x, y) in enumerate(zip(fa, fb)):
        if x != y:
            errs.append("frame %d differs" % (i + 1))
    da, db = os.path.join(a, "dump"), os.path.join(b, "dump")
    na, nb = sorted(os.listdir(da)), sorted(os.listdir(db))
    if na != nb:
        errs.append("dump files: %s vs %s" % (na, nb))
    for n in sorted(set(na) & set(nb)):
        if dump_file(os.path.join(da, n)) != dump_file(os.path.join(db, n)):
            errs.append("dump/%s differs" % n)
    for e in errs:
        print("    " + e)
    print("%d frames, %d dump files: %s" % (len(fa), len(na), "differ" if errs else "identical"))
    return 1 if errs else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
