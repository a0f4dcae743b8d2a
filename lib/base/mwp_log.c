/* SPDX-License-Identifier: BSD-3-Clause */
#include "mwp_log.h"

RTE_LOG_REGISTER(mwp_logtype, mwpath, INFO);
