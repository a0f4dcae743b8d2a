/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder on packets built by the independent scapy script
 * (test/gen/resp_vectors.py, run at build time): each case's requests go
 * through mwp_queue_rx as one burst, and the answers must equal the
 * script's byte for byte; the region's bytes and the QP's state must be
 * what the script says.  The set-up is the one the script documents.
 */
#include <dirent.h>

#include <pcap/pcap.h>

#include "verbs_fixture.h"

#define MR_IOVA 0x10000
#define MW_VA 0x10100
#define MW_LEN 3072

static struct mwp_port *port;
static struct mwp_engine *eng;
static struct mwp_queue *mq;
static struct mwp_stats st;
static struct ibv_qp *rqp, *rqp2;
static struct ibv_mr *rmr, *rmr2;
static uint8_t *mem, *mem2;

/* What a case's .opts file asks for. */
struct case_opts {
	int access;		/* QP access flags, or -1 */
	unsigned int txroom;	/* answers the first burst may send */
	unsigned int split;	/* requests before the LOCAL_INV, 0: none */
	uint32_t split_rkey;
	bool modify_err;	/* then ibv_modify_qp(ERR) */
};

static void
read_opts(const char *name, struct case_opts *o)
{
	char path[512], word[16];
	unsigned long v, k;
	FILE *f;

	o->access = -1;
	o->txroom = 64;
	o->split = 0;
	o->split_rkey = 0;
	o->modify_err = false;
	snprintf(path, sizeof(path), "%s/%s.opts", getenv("RESP_VECTORS"), name);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	while (fscanf(f, "%15s %lu", word, &v) == 2) {
		if (strcmp(word, "access") == 0) {
			o->access = (int)v;
		} else if (strcmp(word, "txroom") == 0) {
			o->txroom = (unsigned int)v;
		} else if (strcmp(word, "modify_err") == 0) {
			o->modify_err = v != 0;
		} else if (strcmp(word, "split") == 0) {
			cr_assert_eq(fscanf(f, "%lu", &k), 1);
			o->split = (unsigned int)v;
			o->split_rkey = (uint32_t)k;
		}
	}
	fclose(f);
}

/* Poll the device until the CQ yields one completion. */
static void
wait_wc(uint64_t wr_id)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 1000 && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		mwp_poll(ctx);
	cr_assert_lt(i, 1000, "no completion");
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
}

static void
setup_case(enum ibv_qp_type type, const struct case_opts *o)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true, .has_ipv6 = true };
	struct ibv_qp_init_attr ia = { .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 2 } };
	struct ibv_mw *mw, *mw_other, *mw_ro, *mw1;

	test_eal_init();
	/* sequential keys and QPNs: the vectors (resp_vectors.py) name them */
	ctx = mwp_open_device(&(struct mwp_device_attr){ .flags = MWP_DEVICE_F_SEQUENTIAL });
	pd = mwp_alloc_pd(ctx);
	cq = mwp_create_cq(ctx, 64);
	ia.send_cq = ia.recv_cq = cq;
	mem = aligned_alloc(64, 4096);
	for (int i = 0; i < 4096; i++)
		mem[i] = (uint8_t)i;
	rmr = mwp_reg_mr_iova(pd, mem, 4096, MR_IOVA, ALL_ACCESS);
	cr_assert_not_null(rmr);
	cr_assert_eq(rmr->rkey, 0x100, "the script's region key");
	rqp = make_qp_ia(pd, &ia, true);
	cr_assert_eq(rqp->qp_num, 0x11, "the script's QPN");
	qp = rqp;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	cr_assert_eq(post_bind2(rqp, mw, rmr, MW_VA, MW_LEN, REMOTE_ALL, 0x42, 1), 0);
	wait_wc(1);
	cr_assert_eq(mw->rkey, 0x80000042, "the script's window key");

	/* the further objects of the script's set-up, in its order */
	pd2 = mwp_alloc_pd(ctx);
	mem2 = aligned_alloc(64, 4096);
	memset(mem2, 0, 4096);
	rmr2 = mwp_reg_mr_iova(pd2, mem2, 4096, 0x20000, ALL_ACCESS);
	cr_assert_eq(rmr2->rkey, 0x200);
	ia.qp_type = IBV_QPT_RC;
	rqp2 = make_qp_ia(pd, &ia, true);
	cr_assert_eq(rqp2->qp_num, 0x12);
	mw_other = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	cr_assert_eq(post_bind2(rqp2, mw_other, rmr, MR_IOVA, 256,
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 0x77, 2), 0);
	wait_wc(2);
	cr_assert_eq(mw_other->rkey, 0x80000177);
	mw_ro = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	cr_assert_eq(post_bind2(rqp, mw_ro, rmr, MR_IOVA, 256, IBV_ACCESS_REMOTE_READ,
				0x55, 3), 0);
	wait_wc(3);
	cr_assert_eq(mw_ro->rkey, 0x80000255);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	cr_assert_eq(bind1(rqp, mw1, rmr, MR_IOVA, 4096,
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 4), 0);
	wait_wc(4);
	cr_assert_eq(mw1->rkey, 0x80000301);
	if (o->access >= 0) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
					 .qp_access_flags = (unsigned int)o->access };

		cr_assert_eq(mwp_modify_qp(rqp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0);
	}

	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	inet_pton(AF_INET6, "2001:db8::1", pc.ipv6);
	port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	cr_assert_not_null(port);
	mwp_port_set_mempool(port, test_mp);
	memset(&st, 0, sizeof(st));
	eng = mwp_engine_create(0, SOCKET_ID_ANY);
	cr_assert_not_null(eng);
	mq = mwp_queue_create(eng, port, 0, &st);
	cr_assert_not_null(mq);
	cr_assert_eq(mwp_port_attach_qp(port, rqp), 0);
}

static unsigned int
load(const char *name, const char *ext, struct rte_mbuf **out, unsigned int max)
{
	char path[512], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned int n = 0;
	pcap_t *pc;

	snprintf(path, sizeof(path), "%s/%s.%s", getenv("RESP_VECTORS"), name, ext);
	pc = pcap_open_offline(path, err);
	cr_assert_not_null(pc, "%s", err);
	while (n < max && pcap_next_ex(pc, &h, &d) == 1) {
		out[n] = rte_pktmbuf_alloc(test_mp);
		cr_assert_not_null(out[n]);
		memcpy(rte_pktmbuf_append(out[n], (uint16_t)h->caplen), d, h->caplen);
		n++;
	}
	pcap_close(pc);
	return n;
}

static FILE *
open_opt(const char *name, const char *ext)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.%s", getenv("RESP_VECTORS"), name, ext);
	return fopen(path, "r");	/* NULL: the case has none */
}

/* Post the receives the case lists. */
static void
post_recvs(const char *name)
{
	FILE *f = open_opt(name, "recv");
	unsigned long long wr_id;
	unsigned int n;

	if (f == NULL)
		return;
	while (fscanf(f, "%llu %u", &wr_id, &n) == 2) {
		struct ibv_sge sge[2];
		struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = (int)n };
		struct ibv_recv_wr *bad;

		cr_assert_leq(n, 2);
		for (unsigned int i = 0; i < n; i++) {
			unsigned long long a, l;

			cr_assert_eq(fscanf(f, "%llu %llu", &a, &l), 2);
			sge[i].addr = a;
			sge[i].length = (uint32_t)l;
			sge[i].lkey = rmr->lkey;
		}
		cr_assert_eq(ibv_post_recv(rqp, &wr, &bad), 0);
	}
	fclose(f);
}

/* The receive completions and key states the case expects. */
static void
check_cqes_and_keys(const char *name)
{
	FILE *f = open_opt(name, "cqe");
	unsigned long long wr_id, imm;
	unsigned int status, opcode, len, flags;
	struct ibv_wc wc;
	char what[8];
	unsigned int key;

	if (f != NULL) {
		while (fscanf(f, "%llu %u %u %u %u %llu", &wr_id, &status, &opcode, &len,
			      &flags, &imm) == 6) {
			cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "%s: no completion for %llu",
				     name, wr_id);
			cr_expect_eq(wc.wr_id, wr_id, "%s: wr_id", name);
			cr_expect_eq(wc.status, status, "%s: status %s", name,
				     ibv_wc_status_str(wc.status));
			cr_expect_eq(wc.qp_num, rqp->qp_num);
			if (status != IBV_WC_SUCCESS && status != IBV_WC_REM_INV_REQ_ERR)
				continue;	/* verbs: other fields undefined */
			cr_expect_eq(wc.opcode, opcode, "%s: opcode %d", name, wc.opcode);
			cr_expect_eq(wc.byte_len, len, "%s: byte_len %u", name, wc.byte_len);
			cr_expect_eq(wc.wc_flags, flags, "%s: wc_flags %u", name, wc.wc_flags);
			if (flags & IBV_WC_WITH_IMM)
				cr_expect_eq(wc.imm_data, htonl((uint32_t)imm), "%s: imm", name);
			if (flags & IBV_WC_WITH_INV)
				cr_expect_eq(wc.invalidated_rkey, imm, "%s: rkey", name);
		}
		fclose(f);
	}
	cr_expect_eq(ibv_poll_cq(cq, 1, &wc), 0, "%s: an unexpected completion", name);
	f = open_opt(name, "keys");
	if (f == NULL)
		return;
	while (fscanf(f, "%7s %u", what, &key) == 2)
		cr_expect_eq(resolve(key) != NULL, strcmp(what, "live") == 0,
			     "%s: key %#x should be %s", name, key, what);
	fclose(f);
}

static void
run_case(const char *name, enum ibv_qp_type type)
{
	struct rte_mbuf *req[64], *want[64], *got[64];
	unsigned int nreq, nwant, ngot, first;
	char path[512], state[16] = "";
	uint8_t expect_mem[4096];
	struct case_opts o;
	FILE *f;

	read_opts(name, &o);
	setup_case(type, &o);
	const unsigned int pool_before = rte_mempool_avail_count(test_mp);

	post_recvs(name);
	nreq = load(name, "req.pcap", req, 64);
	nwant = load(name, "resp.pcap", want, 64);
	/* one burst, or two with a LOCAL_INV run to completion between */
	first = o.split != 0 ? o.split : nreq;
	ngot = mwp_queue_rx(mq, req, (uint16_t)first, got, (uint16_t)o.txroom);
	if (o.split != 0) {
		cr_assert_eq(post_local_inv(rqp, o.split_rkey, 99, true), 0);
		wait_wc(99);
		ngot += mwp_queue_rx(mq, req + first, (uint16_t)(nreq - first),
				       got + ngot, (uint16_t)(64 - ngot));
	}
	/* the READ responses that had no room */
	ngot += mwp_queue_tx(mq, got + ngot, (uint16_t)(64 - ngot));
	if (o.modify_err) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		cr_assert_eq(mwp_modify_qp(rqp, &a, IBV_QP_STATE), 0);
		mwp_poll(ctx);
	}

	cr_expect_eq(ngot, nwant, "%s: %u answers, want %u", name, ngot, nwant);
	for (unsigned int i = 0; i < RTE_MIN(ngot, nwant); i++) {
		const uint8_t *g = rte_pktmbuf_mtod(got[i], const uint8_t *);
		const uint8_t *w = rte_pktmbuf_mtod(want[i], const uint8_t *);
		uint32_t gl = rte_pktmbuf_data_len(got[i]), wl = rte_pktmbuf_data_len(want[i]);
		uint32_t at = 0;

		while (at < RTE_MIN(gl, wl) && g[at] == w[at])
			at++;
		cr_expect(gl == wl && at == gl,
			  "%s: answer %u differs at byte %u (len %u, want %u): got %02x want %02x",
			  name, i, at, gl, wl, at < gl ? g[at] : 0, at < wl ? w[at] : 0);
	}
	snprintf(path, sizeof(path), "%s/%s.mem", getenv("RESP_VECTORS"), name);
	f = fopen(path, "rb");
	cr_assert_not_null(f);
	cr_assert_eq(fread(expect_mem, 1, sizeof(expect_mem), f), sizeof(expect_mem));
	fclose(f);
	for (unsigned int i = 0; i < sizeof(expect_mem); i++)
		if (mem[i] != expect_mem[i]) {
			cr_expect_fail("%s: region byte %#x is %02x, want %02x", name, i,
				       mem[i], expect_mem[i]);
			break;
		}
	snprintf(path, sizeof(path), "%s/%s.state", getenv("RESP_VECTORS"), name);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert(fscanf(f, "%15s", state) == 1);
	fclose(f);
	cr_expect_eq(rqp->state, strcmp(state, "ERR") == 0 ? IBV_QPS_ERR : IBV_QPS_RTS,
		     "%s: QP state %d, want %s", name, rqp->state, state);
	cr_expect_eq(st.rx_pkts, nreq);
	cr_expect_eq(st.accepted + mwp_stats_dropped(&st), nreq,
		     "%s: every request counted once", name);
	check_cqes_and_keys(name);
	for (unsigned int i = 0; i < ngot; i++)
		rte_pktmbuf_free(got[i]);
	for (unsigned int i = 0; i < nwant; i++)
		rte_pktmbuf_free(want[i]);
	cr_expect_eq(rte_mempool_avail_count(test_mp), pool_before,
		     "%s: mbufs not returned", name);
	mwp_close_device(ctx);
	mwp_queue_free(mq);
	cr_expect_eq(mwp_engine_free(eng), 0);
	mwp_port_free(port);
	free(mem);
	free(mem2);
}

TestSuite(responder, .timeout = 60);

/* Every case, with the QP type it runs on: one Test each, and the list
 * every_vector_is_a_case checks the generator's output against. */
#define RESP_CASES(RC, UC) \
	RC(rc_write_only) \
	RC(rc_write_only_ipv6) \
	RC(rc_write_only_vlan) \
	RC(rc_write_multi_window) \
	RC(rc_read_multi) \
	RC(rc_fetch_add) \
	RC(rc_compare_swap) \
	RC(rc_duplicate_atomic) \
	RC(rc_duplicate_write) \
	RC(rc_write_then_read_ack_msn) \
	RC(rc_psn_ahead) \
	RC(rc_wrong_key_byte) \
	RC(rc_outside_window) \
	RC(rc_zero_length_read_bogus_key) \
	RC(rc_dma_too_long) \
	RC(rc_unaligned_atomic) \
	RC(rc_middle_without_first) \
	UC(uc_write_then_bad_key) \
	UC(uc_send_broken_message_reuses_its_receive) \
	RC(rc_send_interrupted_completes_its_receive_in_error) \
	RC(rc_send_half_done_then_qp_to_err_flushes_its_receive) \
	RC(rc_send_only) \
	RC(rc_send_multi_two_sges) \
	RC(rc_send_rnr) \
	RC(rc_send_with_imm) \
	RC(rc_write_with_imm) \
	RC(rc_write_with_imm_rnr) \
	RC(rc_write_multi_with_imm) \
	RC(rc_send_with_inv) \
	RC(rc_send_with_inv_wrong_key) \
	RC(rc_send_with_inv_region_key) \
	RC(rc_send_with_inv_rnr) \
	RC(rc_send_too_long) \
	RC(rc_send_sge_outside_region) \
	RC(rc_qp_access_flags_first) \
	RC(rc_unknown_key) \
	RC(rc_pd_mismatch) \
	RC(rc_window_of_another_qp) \
	RC(rc_access_not_granted_by_window) \
	RC(rc_read_through_read_only_window) \
	RC(rc_write_through_type1_window) \
	RC(rc_zero_length_write_bogus_key) \
	RC(rc_write_length_disagrees) \
	RC(rc_atomic_on_the_window_last_word) \
	RC(rc_atomic_just_past_the_window) \
	RC(rc_atomic_write_on_the_window_last_word) \
	RC(rc_atomic_write_just_past_the_window) \
	RC(rc_atomic_write_straddling_the_windows_end) \
	RC(rc_atomic_write_through_read_only_window) \
	RC(rc_atomic_write_through_type1_window) \
	RC(rc_atomic_write_unaligned) \
	RC(rc_atomic_write_dma_length_not_8) \
	RC(rc_atomic_write_qp_without_remote_write) \
	RC(rc_atomic_write_duplicate) \
	RC(rc_send_with_inv_window_of_another_qp) \
	RC(rc_send_with_inv_type1_window) \
	RC(rc_write_invalidated_between_packets) \
	RC(rc_write_continues_across_bursts) \
	RC(rc_write_continues_past_a_duplicate_first) \
	RC(rc_read_invalidated_between_responses) \
	UC(uc_send_only)

#define RC_TEST(name) Test(responder, name) { run_case(#name, IBV_QPT_RC); }
#define UC_TEST(name) Test(responder, name) { run_case(#name, IBV_QPT_UC); }
RESP_CASES(RC_TEST, UC_TEST)

#define CASE_NAME(name) #name,
static const char *const case_names[] = { RESP_CASES(CASE_NAME, CASE_NAME) };

/* A vector the script makes but no Test runs would pass unnoticed. */
Test(responder, every_vector_is_a_case)
{
	const char *dir = getenv("RESP_VECTORS");
	const char *suffix = ".req.pcap";
	unsigned int seen = 0;
	struct dirent *e;
	DIR *d;

	cr_assert_not_null(dir);
	d = opendir(dir);
	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name), k = strlen(suffix);
		bool found = false;

		if (n <= k || strcmp(e->d_name + n - k, suffix) != 0)
			continue;
		for (size_t i = 0; i < RTE_DIM(case_names); i++)
			found |= strlen(case_names[i]) == n - k &&
				 strncmp(case_names[i], e->d_name, n - k) == 0;
		cr_expect(found, "vector %.*s has no Test", (int)(n - k), e->d_name);
		seen++;
	}
	closedir(d);
	cr_expect_eq(seen, RTE_DIM(case_names), "%u vectors, %zu cases", seen,
		     RTE_DIM(case_names));
}
