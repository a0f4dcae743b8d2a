# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for fuzz_parse: distinct frames (up to 40 per file) of every
capture in ../shared/captures, written to OUTDIR (never into the repo:
the captures carry no licence).  Usage: make_corpus.py CAPTURES OUTDIR"""
import hashlib
import os
import sys

from scapy.utils import RawPcapReader

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
n = 0
for folder in sorted(os.listdir(src)):
    d = os.path.join(src, folder)
    if not os.path.isdir(d):
        continue
    for name in sorted(os.listdir(d)):
        if not name.endswith(".pcap"):
            continue
        seen = set()
        rd = RawPcapReader(os.path.join(d, name))
        for data, _ in rd:
            key = (len(data), data[:64])
            if key in seen:
                continue
            seen.add(key)
            h = hashlib.sha1(data).hexdigest()
            with open(os.path.join(out, h), "wb") as f:
                f.write(data)
            n += 1
            if len(seen) >= 40:
                break
        rd.close()
print(f"make_corpus: {n} seeds in {out}")
