# SPDX-License-Identifier: BSD-3-Clause
"""mwpath as a libibverbs device (provider/, docs/verbs-device.md): Debian's
own unmodified ibv_devices, ibv_devinfo, ibv_rc_pingpong and perftest run on
it through mwpath-run.  Two processes, each its own DPDK (own file prefix),
are joined by net_memif and find each other by ARP; perftest's and
pingpong's TCP exchange goes over localhost.  Every tool must exit 0 on
both sides and print a result whose figures are positive.  UD and SRQs
(ibv_ud_pingpong, ibv_srq_pingpong, perftest -c UD and --use-srq), UCX
1.13 (ucx_info, ucx_perftest over rc_verbs and ud_verbs) and an MPI
program under Open MPI over UCX run the same way.

Also: the device states what its configuration says; a missing or bad
configuration fails with one clear line and no crash; every exported
function of the installed libibverbs is either defined by
libmwpath-ibverbs.so or listed, with its reason, in
provider/not-interposed.txt.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BUILD, SRC, hung_state  # noqa: E402

RUN = os.path.join(BUILD, "provider", "mwpath-run")
SHIM = os.path.join(BUILD, "provider", "libmwpath-ibverbs.so")
LIBIBVERBS = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
LIBRDMACM = "/usr/lib/x86_64-linux-gnu/librdmacm.so.1"
EAL = "--no-huge --no-pci --no-shconf -m 256 --log-level=pmd.net.memif:error"
TOOL_TIMEOUT = 60


def config(path, mac, ipv4, ipv6=None, eal=EAL, mtu=1024, extra=""):
    with open(path, "w") as f:
        f.write("[device 0]\neal = %s\n%s\n[port 0]\nmac = %s\nipv4 = %s\nmtu = %d\n"
                % (eal, extra, mac, ipv4, mtu))
        if ipv6:
            f.write("ipv6 = %s\n" % ipv6)


def sanitizer_env():
    """In a sanitized build the library needs its sanitizer's runtime
    loaded first into the (unsanitized) tools; leaks are not checked
    there: the tools are Debian's, and the device lives until exit."""
    env = dict(os.environ)
    ldd = subprocess.run(["ldd", SHIM], capture_output=True, text=True).stdout
    m = re.search(r"(\S*lib[at]san\.so\S*) => (\S+)", ldd)
    if m:
        env["LD_PRELOAD"] = m.group(2)
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env


ENV = sanitizer_env()


def run(cfg, *cmd, timeout=TOOL_TIMEOUT):
    return subprocess.run([RUN, "-c", cfg, "--"] + list(cmd), capture_output=True,
                          text=True, timeout=timeout, env=ENV)


def run_two(test, server, client, env, wait, timeout):
    """server's command, then after `wait` s client's, to their ends:
    ((rc, out, err) of the server, of the client).  A side still running
    after `timeout` s fails the test with both sides' threads and output."""
    srv = subprocess.Popen(server, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(wait)
    cli = subprocess.Popen(client, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        cout, cerr = cli.communicate(timeout=timeout)
        out, err = srv.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = "\n".join("%s: %s" % (name, hung_state(p.pid) if p.poll() is None
                                      else "(exited %d)" % p.returncode)
                         for name, p in (("server", srv), ("client", cli)))
        outs = []
        for p in (srv, cli):
            p.kill()
            outs.append("".join(p.communicate()))
        test.fail("%s hung:\n%s\nserver said:\n%s\nclient said:\n%s"
                  % (" ".join(client), hung, outs[0], outs[1]))
    finally:
        for p in (srv, cli):
            if p.poll() is None:
                p.kill()
                p.communicate()
    return (srv.returncode, out, err), (cli.returncode, cout, cerr)


def objdump_functions(lib):
    out = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if " DF .text" in line}


class Device(unittest.TestCase):
    """One process: what the device says about itself."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cfg = os.path.join(cls.tmp.name, "dev.ini")
        config(cls.cfg, "02:00:00:00:00:01", "192.0.2.1", "2001:db8::1",
               eal=EAL + " --vdev=net_null0,no-rx=1")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_ibv_devices_lists_mwpath0_with_its_guid(self):
        r = run(self.cfg, "ibv_devices")
        self.assertEqual(r.returncode, 0, r.stderr)
        # EUI-64 of 02:00:00:00:00:01
        self.assertRegex(r.stdout, r"mwpath0\s+000000fffe000001")

    def test_ibv_devinfo_states_the_configuration(self):
        r = run(self.cfg, "ibv_devinfo", "-v", "-d", "mwpath0")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout
        for want in ["hca_id:\tmwpath0", "phys_port_cnt:\t\t\t1", "MEM_WINDOW\n",
                     "MEM_WINDOW_TYPE_2B", "ATOMIC_HCA (1)", "max_qp_rd_atom:\t\t\t16",
                     "num_comp_vectors:\t\t1", "PORT_ACTIVE (4)", "active_mtu:\t\t1024 (3)",
                     "link_layer:\t\tEthernet", "gid_tbl_len:\t\t2",
                     "GID[  0]:\t\t::ffff:192.0.2.1, RoCE v2",
                     "GID[  1]:\t\t2001:db8::1, RoCE v2"]:
            self.assertIn(want, out)

    def test_an_ipv6_only_port_has_one_gid(self):
        cfg = os.path.join(self.tmp.name, "v6.ini")
        with open(cfg, "w") as f:
            f.write("[device 0]\neal = %s --vdev=net_null0,no-rx=1\n"
                    "[port 0]\nmac = 02:00:00:00:00:07\nipv6 = 2001:db8::7\nmtu = 4096\n" % EAL)
        r = run(cfg, "ibv_devinfo", "-v", "-d", "mwpath0")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("GID[  0]:\t\t2001:db8::7, RoCE v2", r.stdout)
        self.assertIn("gid_tbl_len:\t\t1", r.stdout)
        self.assertIn("active_mtu:\t\t4096 (5)", r.stdout)

    def test_verbs_out_of_order_or_with_bad_attributes_get_the_errno(self):
        """pyverbs (Debian's, unmodified) calls verbs in the wrong order
        and with bad attributes: each gets the errno rdma-core's
        providers give (rxe's checks), and the program goes on."""
        want = {
            "modify RESET to RTR, skipping INIT": "EINVAL",
            "modify RESET to RTS": "EINVAL",
            "modify RESET to INIT without its attributes": "EINVAL",
            "modify RESET to INIT on port 2 of a one-port device": "EINVAL",
            "modify RESET to INIT with P_Key index 1 of a one-entry table": "EINVAL",
            "post_send on a QP in RESET": "EINVAL",
            "post_recv on a QP in RESET": "EINVAL",
            "modify RESET to INIT": 0,
            "post_send on a QP in INIT": "EINVAL",
            "modify INIT to RTR without the attributes RTR needs": "EINVAL",
            "modify INIT to RTS, skipping RTR": "EINVAL",
            "create a QP with more send WRs than the device has": "EINVAL",
            "register an MR with remote write but not local write": "EINVAL",
            "register an MR with remote atomic but not local write": "EINVAL",
            "create a CQ with more entries than the device has": "EINVAL",
            "allocate a memory window of type 3": "EINVAL",
            "create an SRQ of 0 receives": "EINVAL",
            "create an SRQ of more receives than the device has": "EINVAL",
            "create an SRQ of more SGEs than the device has": "EINVAL",
            "create an SRQ whose limit is above its size": "EINVAL",
            "post more receives to an SRQ than it holds": "ENOMEM",
            "shrink an SRQ below the receives it holds": "EINVAL",
            "arm an SRQ's limit above its size": "EINVAL",
            "post a receive with more SGEs than the SRQ takes": "EINVAL",
            "post_recv on a QP whose receives are its SRQ's": "EINVAL",
            "create an address handle without a global route": "EINVAL",
            "create an address handle to a multicast GID": "ENOTSUP",  # EOPNOTSUPP
            "modify a UD QP RESET to INIT without a Q_Key": "EINVAL",
            # the extended verbs (rxe's answers; ENOTSUP is EOPNOTSUPP)
            "create an extended CQ asking for completion timestamps": "ENOTSUP",
            "create an extended CQ with more entries than the device has": "EINVAL",
            "create an extended CQ on a completion vector the device has not": "EINVAL",
            "create an extended CQ with a creation flag the device has not": "ENOTSUP",
            "create an extended UD QP for RDMA WRITE": "ENOTSUP",
            "create an extended UC QP for RDMA READ": "ENOTSUP",
            "create an extended RC QP for TSO": "ENOTSUP",
            "create an extended QP with a creation flag": "ENOTSUP",
            "ibv_wr_complete on a QP in RESET": "EINVAL",
            "ibv_wr_complete of a batch with an SGE list longer than the QP takes": "EINVAL",
            "ibv_wr_complete of a batch deeper than the send queue": "ENOSPC",
            "ibv_wr_abort, then ibv_wr_start again": 0,
            "rereg an MR with no flag": "EINVAL",
            "rereg an MR with an unknown flag": "EINVAL",
            "rereg an MR's access with remote write but not local write": "EINVAL",
            "rereg an MR's access without the access flag": "EINVAL",
            "rereg an MR's memory to none": "EINVAL",
        }
        r = run(self.cfg, "/usr/bin/python3",
                os.path.join(SRC, "test", "py", "verbs_bad_input.py"), "mwpath0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        got = {row["case"]: row["errno"] for row in
               (json.loads(line) for line in r.stdout.splitlines() if line.startswith("{"))}
        self.assertEqual(got, want)

    def test_a_bad_configuration_is_one_clear_line_and_no_device(self):
        cfg = os.path.join(self.tmp.name, "bad.ini")
        with open(cfg, "w") as f:
            f.write("[device 0]\nprogress = sometimes\n")
        r = run(cfg, "ibv_devices")
        self.assertEqual(r.returncode, 0)
        self.assertNotIn("mwpath0", r.stdout)
        self.assertIn("bad.ini:2: [device 0] progress: 'sometimes' is not thread, calls or lcore",
                      r.stderr)

    def test_a_device_whose_port_does_not_exist_fails_to_open_with_one_line(self):
        cfg = os.path.join(self.tmp.name, "noport.ini")
        config(cfg, "02:00:00:00:00:09", "192.0.2.9")
        r = run(cfg, "ibv_devinfo", "-d", "mwpath0")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.returncode < 0, False, "no crash: %d" % r.returncode)
        self.assertIn("mwpath0: DPDK port 0 does not exist", r.stderr)

    def test_a_path_mtu_the_link_cannot_carry_fails_to_open_with_one_line(self):
        """mtu = 4096 on net_af_packet, whose frames stop at 1518 bytes:
        the device says which MTU it needs and which it has."""
        cfg = os.path.join(self.tmp.name, "jumbo.ini")
        config(cfg, "02:00:00:00:00:09", "192.0.2.9", mtu=4096,
               eal=EAL + " --vdev=net_af_packet0,iface=lo")
        r = run(cfg, "ibv_devinfo", "-d", "mwpath0")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.returncode < 0, False, "no crash: %d" % r.returncode)
        self.assertIn("port 0 (net_af_packet): the RoCE path MTU needs a link MTU of 4192 "
                      "bytes; the device carries up to 1500", r.stderr)

    def test_the_environment_gives_the_eal_arguments_instead(self):
        env = dict(ENV, MWPATH_CONFIG=self.cfg,
                   MWPATH_EAL=EAL + " --vdev=net_null0,no-rx=1 --vdev=net_null1,no-rx=1")
        cfg = os.path.join(self.tmp.name, "port1.ini")
        with open(cfg, "w") as f:
            f.write("[device 0]\neal = --no-such-option\nport = 1\n"
                    "[port 1]\nmac = 02:00:00:00:00:05\nipv4 = 192.0.2.5\n")
        env["MWPATH_CONFIG"] = cfg
        r = subprocess.run([RUN, "--", "ibv_devinfo", "-v", "-d", "mwpath0"],
                           capture_output=True, text=True, env=env, timeout=TOOL_TIMEOUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("::ffff:192.0.2.5", r.stdout)

    def test_mwpath_run_without_a_configuration_says_so(self):
        env = dict(ENV)
        env.pop("MWPATH_CONFIG", None)
        r = subprocess.run([RUN, "--", "true"], capture_output=True, text=True, env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no configuration", r.stderr)

    def test_the_memory_window_benchmark_runs_and_its_check_holds(self):
        """bench/mw_verbs_bench (verbs.h only) in one process, its two QPs
        talking through the port's loop: binds, invalidations, WRITE and
        READ through a rebound window, and the invalidated key refused."""
        bench = os.path.join(BUILD, "bench", "mw_verbs_bench")
        if not os.path.exists(bench):
            self.skipTest("built without benchmarks")
        for args in (["-n", "2000", "-r", "100"], ["-n", "300", "-r", "1", "-s", "4096"]):
            with self.subTest(args=args):
                out = os.path.join(self.tmp.name, "mw.json")
                r = run(self.cfg, bench, "-d", "mwpath0", "--json", out, *args)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(out) as f:
                    fig = json.load(f)
                self.assertTrue(fig["check_ok"])
                # every refusal told the window's owner: IBV_EVENT_QP_ACCESS_ERR
                self.assertEqual(fig["owner_access_error_events"], fig["refusals"])
                self.assertEqual(fig["device"], "mwpath0")
                self.assertGreater(fig["invalidated_to_refused_us"]["p50"], 0)
                self.assertLessEqual(fig["invalidated_to_refused_us"]["p50"],
                                     fig["invalidated_to_refused_us"]["p99"])
                self.assertIn("invalidated key refused   yes (REM_ACCESS_ERR), memory intact",
                              r.stdout)
                for name in ("bind+invalidate", "WRITE", "READ"):
                    m = re.search(r"^%s.*?(?:pairs|ops)/s\s+([\d.]+)" % re.escape(name),
                                  r.stdout, re.M)
                    self.assertIsNotNone(m, r.stdout)
                    self.assertGreater(float(m.group(1)), 0)

    def test_a_program_that_stops_polling_to_wait_for_an_event_ends_the_threads_long_wait(self):
        """While a program polls its CQ without pause, the progress thread
        stands aside ever longer (up to 1 ms a look); when the program arms
        a CQ and sleeps in ibv_get_cq_event, that wait ends and the thread
        runs the datapath (test/verbs/aside_check.c: three rounds of 40 ms
        of polled WRITEs, then a SEND into the armed CQ).  The counters of
        MWPATH_STATS say both happened; without mwp_ibv_app_waits the
        event still comes, a millisecond later, and asides_ended is 0."""
        exe = os.path.join(BUILD, "test", "verbs", "aside_check")
        env = dict(ENV, MWPATH_STATS="1")
        r = subprocess.run([RUN, "-c", self.cfg, "--", exe, "mwpath0"], capture_output=True,
                           text=True, timeout=TOOL_TIMEOUT, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok 3", r.stdout)
        m = re.search(r"asides_long (\d+) asides_ended (\d+)", r.stderr)
        self.assertIsNotNone(m, r.stderr)
        self.assertGreater(int(m.group(1)), 0, r.stderr)
        self.assertGreaterEqual(int(m.group(2)), 1, r.stderr)

    def test_progress_on_an_lcore_of_its_own(self):
        """progress = lcore: an EAL worker lcore polls; QPs are attached
        with it stopped and started again.  Without a worker: one line."""
        bench = os.path.join(BUILD, "bench", "mw_verbs_bench")
        cfg = os.path.join(self.tmp.name, "lcore.ini")
        config(cfg, "02:00:00:00:00:01", "192.0.2.1", extra="progress = lcore",
               eal="-l 0,1 " + EAL + " --vdev=net_null0,no-rx=1")
        if os.path.exists(bench):
            r = run(cfg, bench, "-d", "mwpath0", "-n", "2000")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("memory intact", r.stdout)
        r = run(cfg, "ibv_devinfo", "-d", "mwpath0")
        self.assertEqual(r.returncode, 0, r.stderr)
        config(cfg, "02:00:00:00:00:01", "192.0.2.1", extra="progress = lcore",
               eal="-l 0 " + EAL + " --vdev=net_null0,no-rx=1")
        r = run(cfg, "ibv_devinfo", "-d", "mwpath0")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("progress = lcore needs a worker lcore", r.stderr)

    def test_every_libibverbs_function_is_defined_or_listed_with_a_reason(self):
        exported = objdump_functions(LIBIBVERBS)
        ours = objdump_functions(SHIM)
        listed = set()
        with open(os.path.join(SRC, "provider", "not-interposed.txt")) as f:
            for line in f:
                line = line.split("#")[0].strip()
                if line:
                    listed.add(line)
        self.assertEqual(sorted(exported - ours - listed), [],
                         "neither defined by libmwpath-ibverbs.so nor listed")
        self.assertEqual(sorted(listed - exported), [], "listed but not in libibverbs")
        self.assertEqual(sorted(listed & ours), [], "listed but defined")
        # the rest is librdmacm's (test_rdmacm.py checks those)
        self.assertEqual(sorted(ours - exported - objdump_functions(LIBRDMACM)), [],
                         "defined but neither libibverbs' nor librdmacm's")


class MemifPair(unittest.TestCase):
    """Two mwpath configurations on one memif link, for two processes:
    cls.server (192.0.2.1, 2001:db8::1) and cls.client (.2, ::2)."""

    MTU = 1024		# the ports' path MTU
    MEMIF = ""		# more memif arguments

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        sock = os.path.join(cls.tmp.name, "memif.sock")
        cls.server = os.path.join(cls.tmp.name, "server.ini")
        cls.client = os.path.join(cls.tmp.name, "client.ini")
        config(cls.server, "02:00:00:00:00:01", "192.0.2.1", "2001:db8::1", mtu=cls.MTU,
               eal=EAL + " --vdev=net_memif0,role=server,socket=" + sock + cls.MEMIF)
        config(cls.client, "02:00:00:00:00:02", "192.0.2.2", "2001:db8::2", mtu=cls.MTU,
               eal=EAL + " --vdev=net_memif0,role=client,socket=" + sock + cls.MEMIF)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_both_ok(self, s, c):
        for name, (rc, out, err) in (("server", s), ("client", c)):
            self.assertEqual(rc, 0, "%s: exit %d\n%s\n%s" % (name, rc, out, err))

    def pair(self, *cmd, env=None):
        """cmd on both sides (the client names the server): both results.
        The TCP port of their exchange is one the kernel just found free
        (another run of these tests may be using others).  env: more
        environment for both."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        args = list(cmd) + ["-p", str(port)]
        return run_two(self, [RUN, "-c", self.server, "--"] + args,
                       [RUN, "-c", self.client, "--"] + args + ["localhost"],
                       {**ENV, **(env or {})}, 1.0, TOOL_TIMEOUT)

    def bw_row(self, out, size):
        m = re.search(r"^\s*%d\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)" % size, out, re.M)
        self.assertIsNotNone(m, out)
        self.assertGreater(float(m.group(3)), 0, "BW average")
        self.assertGreater(float(m.group(4)), 0, "MsgRate")


class Pair(MemifPair):
    """Two processes on memif: the tools end to end."""

    def test_ibv_rc_pingpong_below_at_and_above_the_mtu(self):
        for size in (64, 1024, 4096):
            with self.subTest(size=size):
                s, c = self.pair("ibv_rc_pingpong", "-d", "mwpath0", "-g", "0",
                                 "-s", str(size), "-n", "50")
                self.assert_both_ok(s, c)
                for rc, out, err in (s, c):
                    m = re.search(r"(\d+) bytes in [\d.]+ seconds = ([\d.]+) Mbit/sec", out)
                    self.assertIsNotNone(m, out)
                    self.assertEqual(int(m.group(1)), 2 * size * 50)
                    self.assertGreater(float(m.group(2)), 0)

    def test_ibv_rc_pingpong_in_event_mode(self):
        """-e: completion channels, ibv_req_notify_cq, ibv_get_cq_event;
        the progress thread runs the datapath while the program waits."""
        s, c = self.pair("ibv_rc_pingpong", "-d", "mwpath0", "-g", "0", "-e", "-n", "100")
        self.assert_both_ok(s, c)
        for rc, out, err in (s, c):
            self.assertRegex(out, r"100 iters in [\d.]+ seconds")

    def test_progress_in_the_programs_calls_alone(self):
        """progress = calls: no thread; ibv_poll_cq, and ibv_get_cq_event
        in event mode, run the datapath while the program waits."""
        saved = (Pair.server, Pair.client)
        try:
            for side in ("server", "client"):
                path = getattr(Pair, side)
                with open(path) as f:
                    text = f.read().replace("[device 0]\n", "[device 0]\nprogress = calls\n")
                calls = path.replace(".ini", "-calls.ini")
                with open(calls, "w") as f:
                    f.write(text)
                setattr(Pair, side, calls)
            for extra in ([], ["-e"]):
                with self.subTest(extra=extra):
                    s, c = self.pair("ibv_rc_pingpong", "-d", "mwpath0", "-g", "0",
                                     "-n", "50", *extra)
                    self.assert_both_ok(s, c)
        finally:
            Pair.server, Pair.client = saved

    def test_ibv_rc_pingpong_over_ipv6(self):
        s, c = self.pair("ibv_rc_pingpong", "-d", "mwpath0", "-g", "1", "-n", "20")
        self.assert_both_ok(s, c)
        self.assertIn("GID 2001:db8::1", s[1])

    def perftest(self, *cmd):
        """perftest on its default post API, checked against what the
        device counted: perftest prints which it uses ("ibv_wr* API: ON"
        or "OFF"), and MWPATH_STATS how many work requests came through
        ibv_wr_complete.  perftest itself chooses: the ibv_wr_* API only on
        the devices of its own list (ConnectX-4 and later, BlueField, EFA;
        src/perftest_resources.c, verify_params_with_device_context),
        ibv_post_send on any other -- rxe and mwpath alike."""
        s, c = self.pair(*(list(cmd) + ["-d", "mwpath0", "-x", "0"]),
                         env={"MWPATH_STATS": "1"})
        self.assert_both_ok(s, c)
        api = re.search(r"ibv_wr\* API\s*:\s*(ON|OFF)", c[1])
        self.assertIsNotNone(api, c[1])
        wr_api = [int(n) for n in re.findall(r"mwpath0: .* wr_api (\d+)", c[2])]
        self.assertEqual(len(wr_api), 1, c[2])
        self.assertEqual(wr_api[0] > 0, api.group(1) == "ON",
                         "perftest says ibv_wr* API %s, the device counted %d"
                         % (api.group(1), wr_api[0]))
        return c[1]

    def lat_row(self, out, size):
        m = re.search(r"^\s*%d\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)" % size, out, re.M)
        self.assertIsNotNone(m, out)
        self.assertGreater(float(m.group(4)), 0, "typical latency")

    def test_perftest_bandwidth(self):
        for tool, size in (("ib_write_bw", 65536), ("ib_read_bw", 4096), ("ib_send_bw", 4096)):
            with self.subTest(tool=tool):
                self.bw_row(self.perftest(tool, "-s", str(size), "-n", "200"), size)

    def test_perftest_on_uc(self):
        for tool in ("ib_write_bw", "ib_send_bw"):
            with self.subTest(tool=tool):
                self.bw_row(self.perftest(tool, "-c", "UC", "-s", "4096", "-n", "200"), 4096)
        for tool in ("ib_write_lat", "ib_send_lat"):
            with self.subTest(tool=tool):
                self.lat_row(self.perftest(tool, "-c", "UC", "-s", "64", "-n", "200"), 64)

    def test_perftest_send_in_event_mode(self):
        self.bw_row(self.perftest("ib_send_bw", "-e", "-s", "4096", "-n", "200"), 4096)

    def test_perftest_atomics(self):
        for op in ("FETCH_AND_ADD", "CMP_AND_SWAP"):
            with self.subTest(op=op):
                self.bw_row(self.perftest("ib_atomic_bw", "-A", op, "-n", "200"), 8)

    def test_perftest_latency(self):
        for tool in ("ib_write_lat", "ib_read_lat", "ib_send_lat"):
            with self.subTest(tool=tool):
                self.lat_row(self.perftest(tool, "-s", "64", "-n", "200"), 64)

    # ---- UD, address handles, shared receive queues (issue 37) ----

    def pingpong_figures(self, out, size, iters):
        m = re.search(r"(\d+) bytes in [\d.]+ seconds = ([\d.]+) Mbit/sec", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(int(m.group(1)), 2 * size * iters)
        self.assertGreater(float(m.group(2)), 0)
        self.assertRegex(out, r"%d iters in [\d.]+ seconds = [\d.]+ usec/iter" % iters)

    def test_ibv_ud_pingpong_over_ipv4_and_ipv6(self):
        """UD QPs and address handles; -s 1024 is the path MTU, a UD
        message's limit (the tool adds the 40-byte GRH area to its
        receives)."""
        for gid in ("0", "1"):
            with self.subTest(gid=gid):
                s, c = self.pair("ibv_ud_pingpong", "-d", "mwpath0", "-g", gid,
                                 "-s", "1024", "-n", "100")
                self.assert_both_ok(s, c)
                for rc, out, err in (s, c):
                    self.pingpong_figures(out, 1024, 100)
                self.assertIn("GID 2001:db8::1" if gid == "1" else "GID ::ffff:192.0.2.1",
                              s[1])

    def test_ibv_srq_pingpong(self):
        """16 RC QPs a side, their receives from one SRQ."""
        s, c = self.pair("ibv_srq_pingpong", "-d", "mwpath0", "-g", "0", "-s", "4096",
                         "-n", "100")
        self.assert_both_ok(s, c)
        for rc, out, err in (s, c):
            self.pingpong_figures(out, 4096, 100)

    def test_perftest_on_ud(self):
        self.bw_row(self.perftest("ib_send_bw", "-c", "UD", "-s", "1024", "-n", "500"), 1024)
        self.lat_row(self.perftest("ib_send_lat", "-c", "UD", "-s", "64", "-n", "500"), 64)

    def test_perftest_with_an_srq(self):
        self.bw_row(self.perftest("ib_send_bw", "--use-srq", "-s", "4096", "-n", "500"), 4096)

    # ---- UCX and MPI ----

    UCX = {"UCX_NET_DEVICES": "mwpath0:1", "UCX_LOG_LEVEL": "info"}

    def ucx_perftest(self, tls, *test):
        """ucx_perftest's test on both sides with only mwpath0's
        transports tls (and self): the client's "Final:" row, after
        checking that UCX chose tls's first for the endpoint."""
        s, c = self.pair("ucx_perftest", *test,
                         env={**self.UCX, "UCX_TLS": tls + ",self"})
        self.assert_both_ok(s, c)
        lane = re.search(r"ep_cfg\[0\]: \w+\((\w+)/mwpath0:1", c[1] + c[2])
        self.assertIsNotNone(lane, c[1] + c[2])
        self.assertEqual(lane.group(1), tls.split(",")[0])
        m = re.search(r"^Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                      r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", c[1], re.M)
        self.assertIsNotNone(m, c[1])
        self.assertEqual(int(m.group(1)), int(test[test.index("-n") + 1]))
        return [float(x) for x in m.groups()[1:]]

    def test_ucx_lists_mwpath0_with_rc_verbs_and_ud_verbs(self):
        r = run(self.server, "ucx_info", "-d")
        self.assertEqual(r.returncode, 0, r.stderr)
        part = r.stdout.split("# Memory domain: mwpath0", 1)
        self.assertEqual(len(part), 2, "UCX does not list mwpath0:\n" + r.stdout)
        for tl in ("rc_verbs", "ud_verbs"):
            self.assertRegex(part[1], r"Transport: %s\s+#\s+Device: mwpath0:1" % tl)

    def test_ucx_perftest_over_rc_verbs_and_ud_verbs(self):
        """UCP's tag latency and bandwidth, put bandwidth and get; rc_verbs
        makes its connections over ud_verbs, as UCX's "rc" does."""
        for tls in ("rc_verbs,ud_verbs", "ud_verbs"):
            for test in (("-t", "tag_lat", "-n", "1000"),
                         ("-t", "tag_bw", "-s", "65536", "-n", "500"),
                         ("-t", "ucp_put_bw", "-s", "65536", "-n", "500"),
                         ("-t", "ucp_get", "-s", "4096", "-n", "200")):
                with self.subTest(tls=tls, test=test[1]):
                    lat50, lat, lat_all, bw, bw_all, rate, rate_all = \
                        self.ucx_perftest(tls, *test)
                    self.assertGreater(lat_all, 0)
                    self.assertGreater(bw_all, 0)
                    self.assertGreater(rate_all, 0)

    def test_an_mpi_program_under_open_mpi_over_ucx(self):
        """Two ranks, one mwpath device each (the memif server's and the
        client's configurations): a ping-pong and an allreduce whose
        results the program checks, over rc_verbs and over ud_verbs."""
        exe = os.path.join(self.tmp.name, "mpi_check")
        cc = subprocess.run(["mpicc", "-O2", "-Wall", "-o", exe,
                             os.path.join(SRC, "test", "verbs_device", "mpi_check.c")],
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        for tls in ("rc_verbs,ud_verbs", "ud_verbs"):
            with self.subTest(tls=tls):
                env = ["-x", "UCX_TLS=%s,self" % tls, "-x", "UCX_NET_DEVICES=mwpath0:1",
                       "-x", "MWPATH_STATS=1"]
                cmd = (["mpirun", "--allow-run-as-root", "--oversubscribe",
                        "--mca", "pml", "ucx", "--mca", "btl", "self"] + env +
                       ["-np", "1", RUN, "-c", self.server, "--", exe, "200", "4096", ":",
                        "-np", "1", RUN, "-c", self.client, "--", exe, "200", "4096"])
                # About one run in four under meson (never alone, 20 runs),
                # a rank's UCX UD endpoint times out in the first
                # MPI_Barrier: not understood yet (docs/verbs-device.md).
                # That failure is shown and the run made again, up to
                # twice (a CI run of 2026-11-29 had two in a row hang,
                # 60 s each; alone, 3 runs of 3 passed after it); the last
                # must pass.
                rc, out, err = self.mpirun(cmd)
                for again in (1, 2):
                    if not (rc != 0 and "unhandled timeout error" in err or rc is None):
                        break
                    sys.stderr.write("MPI over %s: run %d failed (%s); once more. "
                                     "Its end:\n%s\n" % (tls, again, rc, err[-3000:]))
                    rc, out, err = self.mpirun(cmd)
                self.assertEqual(rc, 0, out + err)
                self.assertRegex(out, r"pingpong ok 200 x 4096 B: [\d.]+ us")
                self.assertIn("allreduce ok 4096 doubles", out)
                # the ranks' messages went through mwpath, not shared memory
                rx = [int(n) for n in re.findall(r"mwpath0: rx (\d+) accepted", err)]
                self.assertTrue(rx and max(rx) > 2 * 200, err)

    def mpirun(self, cmd):
        """cmd (mpirun) in a session of its own: (status, stdout, stderr);
        status None when its time ran out, and then every process of it --
        the ranks, which would keep the memif socket -- is killed."""
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=ENV, start_new_session=True)
        try:
            out, err = p.communicate(timeout=TOOL_TIMEOUT)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            subprocess.run(["pkill", "-9", "-f", self.tmp.name], check=False)
            out, err = p.communicate()
            return None, out, err + "\n(killed after %d s)" % TOOL_TIMEOUT


class JumboPair(MemifPair):
    """A path MTU of 4096 (as a RoCE NIC on a link of jumbo frames):
    memif's buffers (bsize) hold the largest frame, the device's mbufs
    are sized for it (before, a 4096-byte packet did not fit them and
    every request above 2 KiB failed).  The counters say that every
    frame was taken, at 4096 bytes a packet."""

    MTU = 4096
    MEMIF = ",bsize=8192"

    def counters(self, err):
        """The device's frame counters (MWPATH_STATS): rx, accepted, ctrl, tx."""
        line = re.search(r"mwpath0: rx (\d+) accepted (\d+) ctrl (\d+) tx (\d+)", err)
        self.assertIsNotNone(line, err)
        return tuple(int(x) for x in line.groups())

    def test_ibv_rc_pingpong_at_4096(self):
        """16 KiB SENDs in 4096-byte packets, the data checked (-c)."""
        s, c = self.pair("ibv_rc_pingpong", "-d", "mwpath0", "-g", "0", "-m", "4096",
                         "-s", "16384", "-n", "50", "-c", env={"MWPATH_STATS": "1"})
        self.assert_both_ok(s, c)
        for rc, out, err in (s, c):
            self.assertRegex(out, r"1638400 bytes in [\d.]+ seconds")
            rx, accepted, ctrl, tx = self.counters(err)
            self.assertEqual(rx, accepted + ctrl, err)
            # 50 SENDs of 4 packets each way, and their ACKs
            self.assertGreaterEqual(tx, 200, err)
            self.assertLess(tx, 2 * 200 + 10, err)

    def test_perftest_writes_and_reads_64_kib_in_4096_byte_packets(self):
        for tool in ("ib_write_bw", "ib_read_bw"):
            with self.subTest(tool=tool):
                s, c = self.pair(tool, "-d", "mwpath0", "-x", "0", "-s", "65536",
                                 "-n", "200", env={"MWPATH_STATS": "1"})
                self.assert_both_ok(s, c)
                self.assertRegex(c[1], r"Mtu\s*:\s*4096\[B\]")
                self.bw_row(c[1], 65536)
                # the data's side: 200 x 16 packets of 4096 bytes
                data = s if tool == "ib_read_bw" else c
                rx, accepted, ctrl, tx = self.counters(data[2])
                self.assertGreaterEqual(tx, 200 * 16, data[2])
                self.assertLess(tx, 200 * 17, data[2])
                other = c if data is s else s
                rx, accepted, ctrl, tx = self.counters(other[2])
                self.assertGreaterEqual(rx, 200 * 16, other[2])
                self.assertEqual(rx, accepted + ctrl, other[2])


if __name__ == "__main__":
    unittest.main(verbosity=2)
