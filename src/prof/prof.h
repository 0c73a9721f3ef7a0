// prof: observability built in, free when off.
//
// Producers (capi) emit trace events: every acl* call (capi::guarded), every
// copy, every model execution and every executed node. Consumers:
//  - the op-info subscription (subscription.h): one 80-byte record per
//    executed node of a subscribed model, written to the user's pipe
//    (spec/pyacl-api.md §5.3-5.4; layout in op_record.h);
//  - a collection to files (collection.h, output.h): CSV summaries in CANN's
//    layout and a Chrome-trace timeline (compat-notes §3, docs/profiling.md).
//
// When nothing consumes, a producer pays one relaxed atomic load per call site
// (trace.h: api_tracing(), task_tracing(), subscription_count()).
//
// This layer knows no acl* types: capi converts handles, dtypes and formats
// into the plain values and strings of the event structs.
#pragma once

#include "prof/collection.h"
#include "prof/op_record.h"
#include "prof/subscription.h"
#include "prof/trace.h"
