/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_PRIV_H
#define MWP_PRIV_H

/*
 * Every private object header of libmwpath, for the files that work with
 * several: the verbs objects, each in its own header, built on each other
 * without a cycle (device <- region <- window; device <- CQ <- QP <-
 * its scheduling), and the query API they answer.  Private: not installed.
 */

#include "mwp_verbs.h"
#include "mwp_query.h"
#include "mwp_device.h"
#include "mwp_mr.h"
#include "mwp_mw.h"
#include "mwp_cq.h"
#include "mwp_ah.h"
#include "mwp_srq.h"
#include "mwp_qp.h"
#include "mwp_rq.h"
#include "mwp_sq.h"
#include "mwp_wqe.h"
#include "mwp_sched.h"

#endif /* MWP_PRIV_H */
