# SPDX-License-Identifier: BSD-3-Clause
"""The rxe guest of the interop suite and the link to it (docs/interop.md).

A QEMU TCG guest (test/interop/build-guest.sh: Debian's kernel with
rdma_rxe, busybox, rdma-core's tools, perftest) on a tap.  The host side of
the tap carries two endpoints: the host kernel's own address, for the TCP
exchanges of perftest and pingpong, and mwpath's port (net_af_packet on the
same tap) with its own MAC and addresses, which the guest finds by ARP and
neighbour discovery.

    link = Link()            # the tap and the host kernel's addresses
    guest = Guest(link, work_dir, [extra binaries])
    guest.boot()             # READY: rxe0 and its RoCE v2 GIDs
    job = guest.start("ibv_rc_pingpong -d rxe0 -g 1", timeout=60)
    status, output = guest.wait(job)
    guest.quit()

The guest is driven over its second serial port (a unix socket here): one
line per command and per answer, outputs in base64 (guest-init.sh).  Every
read has a time limit; a guest that does not answer in time raises
GuestError with the tail of its console log, and QEMU itself runs under
`timeout`, so nothing here can hang the suite.
"""
import base64
import os
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))

TAP = "mwpi0"
PREFIX4, PREFIX6 = "10.77.0.", "fd77::"
HOST_IP4, HOST_IP6 = PREFIX4 + "1", PREFIX6 + "1"    # host kernel: TCP
MWPATH_IP4, MWPATH_IP6 = PREFIX4 + "2", PREFIX6 + "2"  # mwpath's port: RoCE
GUEST_IP4, GUEST_IP6 = PREFIX4 + "3", PREFIX6 + "3"  # the guest: TCP and RoCE
MWPATH_MAC = "02:00:00:77:00:02"
GUEST_MAC = "52:54:00:77:00:03"


class GuestError(Exception):
    pass


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Link:
    """The tap between the guest and the host, with the host kernel's
    addresses on it.  mwpath attaches to it with net_af_packet."""

    def __init__(self, tap=TAP):
        self.tap = tap
        sh("ip", "link", "del", tap, check=False)
        sh("ip", "tuntap", "add", tap, "mode", "tap")
        sh("ip", "link", "set", tap, "up")
        sh("ip", "addr", "add", HOST_IP4 + "/24", "dev", tap)
        sh("ip", "addr", "add", HOST_IP6 + "/64", "dev", tap, "nodad")

    def close(self):
        sh("ip", "link", "del", self.tap, check=False)

    def device_config(self, path, mtu=1024, extra="", vdev_args=""):
        """An mwpath configuration whose device mwpath0 is a port on the
        tap with mwpath's own MAC and addresses (vdev_args: more of
        net_af_packet's, ",key=value")."""
        with open(path, "w") as f:
            f.write("[device 0]\n"
                    "eal = --no-huge --no-pci --no-shconf -m 256"
                    " --vdev=net_af_packet0,iface=%s%s\n%s\n"
                    "[port 0]\nmac = %s\nipv4 = %s\nipv6 = %s\nmtu = %d\n"
                    % (self.tap, vdev_args, extra, MWPATH_MAC, MWPATH_IP4, MWPATH_IP6, mtu))
        return path


class Guest:
    BOOT_TIMEOUT = 90     # seconds to READY (6-11 s measured; a loaded host)
    LIFETIME = 1200       # QEMU's own limit: the whole suite runs in one boot

    def __init__(self, link, work, extra=()):
        self.link = link
        self.work = work
        self.extra = list(extra)
        self.console = os.path.join(work, "console.log")
        self.sock_path = os.path.join(work, "ctl.sock")
        self.qemu = None
        self.sock = None
        self.buf = b""
        self.jobs = 0
        self.gid4 = self.gid6 = None

    def build(self):
        r = subprocess.run([os.path.join(HERE, "build-guest.sh"), self.work]
                           + self.extra, capture_output=True, text=True)
        if r.returncode != 0:
            raise GuestError("build-guest.sh failed:\n" + r.stdout + r.stderr)

    def boot(self):
        self.build()
        for p in (self.console, self.sock_path):
            if os.path.exists(p):
                os.unlink(p)
        append = ("console=ttyS0 panic=-1 mwp.ip4=%s/24 mwp.ip6=%s/64"
                  % (GUEST_IP4, GUEST_IP6))
        cmd = ["timeout", "-s", "KILL", str(self.LIFETIME),
               "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "768", "-smp", "1",
               "-display", "none", "-monitor", "none", "-no-reboot",
               "-kernel", os.path.join(self.work, "vmlinuz"),
               "-initrd", os.path.join(self.work, "initrd.gz"),
               "-append", append,
               "-serial", "file:" + self.console,
               "-chardev", "socket,id=ctl,path=%s,server=on,wait=off" % self.sock_path,
               "-serial", "chardev:ctl",
               "-netdev", "tap,id=n0,ifname=%s,script=no,downscript=no" % self.link.tap,
               "-device", "virtio-net-pci,netdev=n0,mac=%s,romfile=" % GUEST_MAC]
        self.qemu = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock_path):
            if self.qemu.poll() is not None or time.monotonic() > deadline:
                raise GuestError("QEMU did not start: %s"
                                 % self.qemu.stdout.read().decode(errors="replace"))
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.sock_path)
        words = self._line(self.BOOT_TIMEOUT, "boot").split()
        if words[0] != "READY":
            raise GuestError("guest failed to start: %s\n%s"
                             % (" ".join(words), self.console_tail()))
        self.gid4, self.gid6 = int(words[1]), int(words[2])

    def console_tail(self, lines=60):
        try:
            with open(self.console, errors="replace") as f:
                tail = f.read().splitlines()[-lines:]
        except OSError as e:
            return "(no console log: %s)" % e
        return "--- guest console (last %d lines) ---\n%s" % (len(tail), "\n".join(tail))

    def _line(self, timeout, what):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GuestError("guest did not answer %s within %d s\n%s"
                                 % (what, timeout, self.console_tail()))
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise GuestError("guest went away during %s\n%s"
                                 % (what, self.console_tail()))
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def start(self, command, timeout):
        """Run COMMAND (sh syntax) in the guest in the background, killed
        after TIMEOUT seconds; returns a job to wait for."""
        self.jobs += 1
        job = "j%d" % self.jobs
        self.sock.sendall(("RUN %s %d %s\n" % (
            job, timeout, base64.b64encode(command.encode()).decode())).encode())
        line = self._line(20, "RUN " + job)
        if line != "STARTED " + job:
            raise GuestError("unexpected answer to RUN: %r" % line)
        return (job, timeout)

    def wait(self, job):
        """(exit status, output) of a job; 137 when its time ran out."""
        name, timeout = job
        self.sock.sendall(("WAIT %s\n" % name).encode())
        words = self._line(timeout + 30, "WAIT " + name).split(" ")
        if words[:2] != ["DONE", name]:
            raise GuestError("unexpected answer to WAIT: %r" % " ".join(words[:3]))
        out = base64.b64decode(words[3]) if len(words) > 3 else b""
        return int(words[2]), out.decode(errors="replace")

    def stuck(self, job, grace):
        """Waits up to GRACE seconds for JOB; if it still runs, returns
        what its processes are blocked in (their kernel stacks) and rxe0's
        counters, for a failure message; else ''."""
        name = job[0]
        st, out = self.run(
            "i=0; while [ ! -e /tmp/%s.st ] && [ $i -lt %d ]; do sleep 0.1; i=$((i+1)); done;"
            " [ -e /tmp/%s.st ] && exit 0;"
            " for p in /proc/[0-9]*; do case $(cat $p/cmdline 2>/dev/null | tr '\\0' ' ') in"
            " *ib_*|*ibv_*|*mw_peer*) for t in $p/task/*; do echo \"== $t: $(tr '\\0' ' ' <$p/cmdline)\";"
            " cat $t/stack; done;; esac; done;"
            " echo '== rxe0 counters:'; cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep . *"
            % (name, grace * 10, name), grace + 20)
        return out

    def run(self, command, timeout=60):
        return self.wait(self.start(command, timeout))

    def quit(self):
        if self.qemu is None:
            return
        try:
            if self.sock is not None:
                self.sock.sendall(b"QUIT\n")
            self.qemu.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.qemu.kill()
            self.qemu.wait()
        self.qemu = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None
