/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "objects.h"
#include "hex.h"
#include "summary.h"

void
app_port_stats(const struct app_run *run, uint16_t port_id,
	       struct mwp_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int l = 0; l < run->nb_lcores; l++) {
		const struct mwp_lcore *lc = &run->lcores[l];

		for (uint16_t q = 0; q < lc->nb_queues; q++)
			if (lc->q[q].port_id == port_id)
				mwp_stats_add(sum, &lc->q[q].stats);
	}
}

static void
print_port_header(FILE *out, uint16_t port_id, const struct mwp_port *port)
{
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	char ip[INET6_ADDRSTRLEN];
	struct rte_ether_addr ea;

	rte_eth_dev_get_name_by_port(port_id, name);
	/* The responder filters on the configured MAC; show the device's own
	 * only when none is configured. */
	ea = port->conf.mac;
	if (rte_is_zero_ether_addr(&ea))
		rte_eth_macaddr_get(port_id, &ea);
	rte_ether_format_addr(mac, sizeof(mac), &ea);
	fprintf(out, "port %u (%s) mac %s", port_id, name, mac);
	if (port->conf.has_ipv4)
		fprintf(out, " ipv4 %s", inet_ntop(AF_INET, &port->conf.ipv4, ip, sizeof(ip)));
	if (port->conf.has_ipv6)
		fprintf(out, " ipv6 %s", inet_ntop(AF_INET6, port->conf.ipv6, ip, sizeof(ip)));
	if (!port->conf.has_ipv4 && !port->conf.has_ipv6)
		fprintf(out, " (no IP: any destination)");
	fprintf(out, " path-mtu %u\n", port->conf.mtu);
}

void
app_port_ctrl_stats(const struct app_run *run, uint16_t port_id, struct mwp_ctrl_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int l = 0; l < run->nb_lcores; l++) {
		const struct mwp_lcore *lc = &run->lcores[l];

		for (uint16_t q = 0; q < lc->nb_queues; q++)
			if (lc->q[q].port_id == port_id && lc->q[q].mq != NULL) {
				struct mwp_ctrl_stats c;

				mwp_queue_ctrl_stats(lc->q[q].mq, &c);
				for (unsigned int i = 0; i < MWP_CTRL__MAX; i++)
					sum->c[i] += c.c[i];
			}
	}
}

/* The control path's counters that moved, and the neighbour table. */
static void
print_ctrl(FILE *out, const struct app_run *run, uint16_t pid)
{
	const struct mwp_neigh_table *t = run->ports[pid]->neigh;
	struct mwp_ctrl_stats c;
	const char *sep = "  control path:";
	bool any = false;

	app_port_ctrl_stats(run, pid, &c);
	for (unsigned int i = 0; i < MWP_CTRL__MAX; i++)
		if (c.c[i] != 0) {
			fprintf(out, "%s %s %" PRIu64, sep, mwp_ctrl_name(i), c.c[i]);
			sep = ",";
			any = true;
		}
	if (any)
		fprintf(out, "\n");
	if (t != NULL && t->st.lookups + t->st.learned + t->st.ignored != 0)
		fprintf(out, "  neighbours: lookups %" PRIu64 " misses %" PRIu64 " probes %"
			PRIu64 " learned %" PRIu64 " updated %" PRIu64 " failed %" PRIu64
			" full %" PRIu64 " ignored %" PRIu64 "\n", t->st.lookups, t->st.misses,
			t->st.probes, t->st.learned, t->st.updated, t->st.failed, t->st.full,
			t->st.ignored);
}

/* With more than one queue: what each lcore's queue took in, and the
 * frames it handed to the lcore that owns their QP. */
static void
print_lcores(FILE *out, const struct app_run *run, uint16_t pid)
{
	unsigned int nq = 0;

	for (unsigned int l = 0; l < run->nb_lcores; l++)
		for (uint16_t q = 0; q < run->lcores[l].nb_queues; q++)
			nq += run->lcores[l].q[q].port_id == pid;
	if (nq < 2)
		return;
	if (run->flows != NULL && run->flows[pid].tried) {
		const struct mwp_flow_report *f = &run->flows[pid];

		fprintf(out, "  rte_flow: %u rule%s steering QPs to their lcores' queues, "
			"%u spreading RoCEv2 over the queues%s%s%s%s%s\n", f->qp_rules,
			f->qp_rules == 1 ? "" : "s", f->roce_rules,
			f->reason[0] != '\0' ? " (" : "", f->reason,
			f->reason2[0] != '\0' ? "; " : "", f->reason2,
			f->reason[0] != '\0' ? ")" : "");
		if (f->reason[0] != '\0')
			fprintf(out, "    what the PMD refused goes by RSS, then hand-offs\n");
	}
	for (unsigned int l = 0; l < run->nb_lcores; l++) {
		const struct mwp_lcore *lc = &run->lcores[l];

		for (uint16_t q = 0; q < lc->nb_queues; q++) {
			const struct mwp_lcore_queue *lq = &lc->q[q];
			uint64_t hout = 0, hin = 0;

			if (lq->port_id != pid || lq->mq == NULL)
				continue;
			mwp_queue_handoffs(lq->mq, &hout, &hin);
			fprintf(out, "  queue %u (lcore %u): in %" PRIu64 ", handed to the "
				"owner %" PRIu64 ", handed over %" PRIu64 "\n", lq->queue_id,
				lc->lcore_id, lq->stats.rx_pkts, hout, hin);
		}
	}
}

/* n events over s seconds, a second (0 over no time) */
static uint64_t
per_second(uint64_t n, double s)
{
	return s > 0 ? (uint64_t)((double)n / s + 0.5) : 0;
}

/* The run's average rates, every port together. */
static void
print_run_rates(FILE *out, const struct app_run *run)
{
	struct mwp_stats s, sum;

	memset(&sum, 0, sizeof(sum));
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		app_port_stats(run, pid, &s);
		mwp_stats_add(&sum, &s);
	}
	fprintf(out, "average over %.3f s: Rx-pps %" PRIu64 " Rx-bps %" PRIu64
		" Tx-pps %" PRIu64 " Tx-bps %" PRIu64 " (%" PRIu64 " packets in, %"
		PRIu64 " out)\n", run->seconds, per_second(sum.rx_pkts, run->seconds),
		per_second(sum.rx_bytes * 8, run->seconds),
		per_second(sum.tx_pkts, run->seconds),
		per_second(sum.tx_bytes * 8, run->seconds), sum.rx_pkts, sum.tx_pkts);
}

void
app_print_summary(FILE *out, const struct app_run *run)
{
	fprintf(out, "mwpath %s: %u port%s, %u polling lcore%s, ran %.3f s, stopped: %s\n",
		mwp_version(), run->nb_ports, run->nb_ports == 1 ? "" : "s",
		run->nb_lcores, run->nb_lcores == 1 ? "" : "s", run->seconds,
		run->stop_reason);
	print_run_rates(out, run);
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		struct mwp_stats s;
		struct rte_eth_stats es;
		uint64_t dropped;

		app_port_stats(run, pid, &s);
		dropped = mwp_stats_dropped(&s);
		print_port_header(out, pid, run->ports[pid]);
		fprintf(out, "  %-22s %12" PRIu64 "  (%" PRIu64 " bytes)\n",
			"packets in", s.rx_pkts, s.rx_bytes);
		fprintf(out, "  %-22s %12" PRIu64 "  (%" PRIu64 " bytes)\n",
			"packets out", s.tx_pkts, s.tx_bytes);
		fprintf(out, "  %-22s %12" PRIu64 "\n", "accepted", s.accepted);
		if (s.ctrl != 0)
			fprintf(out, "  %-22s %12" PRIu64 "  ARP, neighbour discovery, ICMP echo\n",
				"control", s.ctrl);
		if (run->hosts != NULL && mwp_host_on(&run->hosts[pid]))
			fprintf(out, "  %-22s %12" PRIu64 "  not RoCE, to %s (%" PRIu64
				" it did not take); %" PRIu64 " from it to the wire (%" PRIu64
				" lost: its ring full)\n",
				"to the host", s.host, run->hosts[pid].ifname, s.host_lost,
				s.host_out, __atomic_load_n(&run->hosts[pid].ring_full,
							    __ATOMIC_RELAXED));
		if (run->xdps != NULL && mwp_xdp_on(&run->xdps[pid])) {
			uint64_t c[MWP_XDP_NB_COUNTS];

			mwp_xdp_counts(&run->xdps[pid], c);
			fprintf(out, "  %-22s %12" PRIu64 "  RoCE to mwpath by the XDP program on %s; to the kernel: %" PRIu64
				" other frames, %" PRIu64 " RoCE for other addresses, %" PRIu64
				" on a queue without a socket\n",
				"xdp", c[MWP_XDP_TO_MWPATH], run->xdps[pid].ifname,
				c[MWP_XDP_TO_KERNEL], c[MWP_XDP_NOT_OURS], c[MWP_XDP_NO_SOCKET]);
			fprintf(out, "  %-22s %12" PRIu64 "  asked of the kernel; %" PRIu64
				" reports from it\n", "neighbours",
				__atomic_load_n(&run->xdps[pid].asked, __ATOMIC_RELAXED),
				__atomic_load_n(&run->xdps[pid].reports, __ATOMIC_RELAXED));
		}
		fprintf(out, "  %-22s %12" PRIu64 "\n", "dropped", dropped);
		for (unsigned int d = 1; d < MWP_DROP__MAX; d++)
			if (s.drop[d] != 0)
				fprintf(out, "    %-20s %12" PRIu64 "  %s\n",
					mwp_drop_name(d), s.drop[d], mwp_drop_text(d));
		fprintf(out, "  answers: acks %" PRIu64 ", naks 0x60 %" PRIu64 " 0x61 %" PRIu64
			" 0x62 %" PRIu64 " 0x63 %" PRIu64 ", rnr naks %" PRIu64
			", duplicates %" PRIu64 "\n", s.acks, s.naks[0], s.naks[1],
			s.naks[2], s.naks[3], s.rnr_naks, s.duplicates);
		for (unsigned int d = 1; d < MWP_DENY__MAX; d++)
			if (s.denied[d] != 0)
				fprintf(out, "    denied %-13s %12" PRIu64 "  NAK %#x\n",
					mwp_deny_name(d), s.denied[d], mwp_deny_syndrome(d));
		if (s.retrans != 0)
			fprintf(out, "  requester: packets sent again %" PRIu64 "\n", s.retrans);
		if (s.ce + s.cnp_tx + s.cnp_rx != 0)
			fprintf(out, "  congestion: ce marked %" PRIu64 ", cnps sent %" PRIu64
				", cnps received %" PRIu64 "\n", s.ce, s.cnp_tx, s.cnp_rx);
		print_ctrl(out, run, pid);
		print_lcores(out, run, pid);
		if (rte_eth_stats_get(pid, &es) == 0)
			fprintf(out, "  ethdev: ipackets %" PRIu64 " imissed %" PRIu64
				" ierrors %" PRIu64 " rx_nombuf %" PRIu64
				" opackets %" PRIu64 " oerrors %" PRIu64 "\n",
				es.ipackets, es.imissed, es.ierrors, es.rx_nombuf,
				es.opackets, es.oerrors);
	}
	fflush(out);
}

/* "2024-06-01T10:00:01.234Z": now, in UTC */
static void
utc_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void
app_print_interval(FILE *out, const struct app_run *run, struct app_interval *iv)
{
	const uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();
	const double dt = (double)(now - (iv->tsc != 0 ? iv->tsc : run->start_tsc)) /
			  (double)hz;
	const double since = (double)(now - run->start_tsc) / (double)hz;
	char when[40];

	utc_now(when, sizeof(when));
	for (uint16_t pid = 0; pid < run->nb_ports && pid < RTE_MAX_ETHPORTS; pid++) {
		uint64_t rx, rxb, tx, txb, acc, drop;
		struct mwp_stats s;

		app_port_stats(run, pid, &s);
		rx = s.rx_pkts - iv->last[pid].rx_pkts;
		rxb = s.rx_bytes - iv->last[pid].rx_bytes;
		tx = s.tx_pkts - iv->last[pid].tx_pkts;
		txb = s.tx_bytes - iv->last[pid].tx_bytes;
		acc = s.accepted - iv->last[pid].accepted;
		drop = mwp_stats_dropped(&s) - iv->last[pid].dropped;
		fprintf(out, "%s +%.3f s port %u, last %.3f s: in %" PRIu64 " (%" PRIu64
			" bytes) out %" PRIu64 " (%" PRIu64 " bytes) accepted %" PRIu64
			" dropped %" PRIu64 "; Rx-pps %" PRIu64 " Rx-bps %" PRIu64
			" Tx-pps %" PRIu64 " Tx-bps %" PRIu64 "\n", when, since, pid, dt,
			rx, rxb, tx, txb, acc, drop, per_second(rx, dt),
			per_second(rxb * 8, dt), per_second(tx, dt), per_second(txb * 8, dt));
		iv->last[pid].rx_pkts = s.rx_pkts;
		iv->last[pid].rx_bytes = s.rx_bytes;
		iv->last[pid].tx_pkts = s.tx_pkts;
		iv->last[pid].tx_bytes = s.tx_bytes;
		iv->last[pid].accepted = s.accepted;
		iv->last[pid].dropped = mwp_stats_dropped(&s);
	}
	iv->tsc = now;
	fflush(out);
}

void
app_objects_print(FILE *out, const struct app_objects *o)
{
	if (o->ctx == NULL)
		return;
	unsigned int unposted = 0;

	for (unsigned int i = 0; i < o->cfg->nb_wrs; i++)
		unposted += !o->posted[i];
	fprintf(out, "verbs: %" PRIu32 " live keys; work requests: %u posted, %u ok, "
		"%u failed, %u never posted (after_rx not reached); receives: %u ok, "
		"%u failed, %u flushed\n",
		mwp_keys_count(mwp_device_keys(o->ctx)), o->wr_posted, o->wr_ok,
		o->wr_failed, unposted, o->recv_ok, o->recv_failed, o->recv_flushed);
	for (unsigned int i = 0; i < o->nb_qps; i++) {
		struct mwp_qp_info qi;
		const struct mwp_qp_stats *s = &qi.resp;

		if (mwp_qp_query_info(o->qp[i], &qi) != 0)
			continue;
		fprintf(out, "  qp %#x %s %s: in %" PRIu64 " acks %" PRIu64
			" naks %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
			" (0x60/61/62/63) rnr %" PRIu64 " dups %" PRIu64
			" read-resps %" PRIu64 " atomics %" PRIu64 "\n",
			o->qp[i]->qp_num, o->qp[i]->qp_type == IBV_QPT_RC ? "rc" : "uc",
			app_qp_state_name(o->qp[i]->state), s->rx_pkts, s->acks,
			s->naks[0], s->naks[1], s->naks[2], s->naks[3], s->rnr_naks,
			s->duplicates, s->read_resps, s->atomics);
		if (qi.req.pkts != 0) {
			const struct mwp_req_stats *r = &qi.req;

			fprintf(out, "    requester: sent %" PRIu64 " (+%" PRIu64 " again), "
				"answers %" PRIu64 ", naks seq %" PRIu64 " rnr %" PRIu64
				" fatal %" PRIu64 ", timeouts %" PRIu64 ", implicit %" PRIu64
				", dup %" PRIu64 " ghost %" PRIu64 " bad %" PRIu64 "\n",
				r->pkts, r->retrans, r->acks, r->seq_naks, r->rnr_naks,
				r->fatal_naks, r->timeouts, r->implicit_naks, r->dup_resps,
				r->ghost_resps, r->bad_resps);
		}
		if (qi.cc.st.ce + qi.cc.st.cnp_sent + qi.cc.st.cnp_received == 0)
			continue;
		fprintf(out, "    congestion: ce %" PRIu64 ", cnps sent %" PRIu64 ", received %"
			PRIu64, qi.cc.st.ce, qi.cc.st.cnp_sent, qi.cc.st.cnp_received);
		if (qi.cc.rate == 0)
			fprintf(out, "; no rate control\n");
		else
			fprintf(out, "; rate %.0f Mb/s (target %.0f, alpha %.3f%s), cuts %" PRIu64
				", paced %" PRIu64 "\n", qi.cc.rate, qi.cc.target, qi.cc.alpha,
				qi.cc.limited ? "" : ", line rate", qi.cc.cuts, qi.cc.paced);
	}
}

void
app_objects_print_keys(FILE *out, const struct app_objects *o)
{
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		struct mwp_mw_info mw;

		char k1[APP_HEX_LEN], k2[APP_HEX_LEN];

		if (o->mr[i] != NULL)
			fprintf(out, "mwpath: [mr %u] lkey %s rkey %s\n", i,
				app_hex(k1, APP_HEX_KEY, o->mr[i]->lkey),
				app_hex(k2, APP_HEX_KEY, o->mr[i]->rkey));
		if (o->mw[i] != NULL && mwp_mw_query_info(o->mw[i], &mw) == 0)
			fprintf(out, "mwpath: [mw %u] type %u rkey %s %s\n", i,
				o->mw[i]->type == IBV_MW_TYPE_1 ? 1 : 2,
				app_hex(k1, APP_HEX_KEY, mw.rkey),
				mw.valid ? "bound" : "not bound");
	}
}
