/*
 * Per-call cost of aclopExecuteV2 with a warm op cache: an Add of two small
 * float32 tensors on device buffers, called over and over from C.
 *
 *   op_overhead [--elements N] [--batches N] [--calls N] [--json]
 *
 * Two numbers, each the median (and p90) over batches of M calls:
 *  - call:  aclopExecuteV2 alone, the stream synchronised once per batch
 *           (what a program pays per op it queues);
 *  - sync:  aclopExecuteV2 + aclrtSynchronizeStream per call (the round trip
 *           through the stream's worker thread).
 * bench/op_bench.py runs this next to the Python equivalent and onnxruntime.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "acl/acl_op.h"

#define CHECK(call)                                                                           \
    do {                                                                                      \
        aclError ret_ = (call);                                                               \
        if (ret_ != ACL_SUCCESS) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "op_overhead: %s failed with %d: %s\n", #call, (int)ret_,         \
                    msg_ ? msg_ : "");                                                        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs `batches` batches of `calls` calls; sync_each: synchronise after every call. */
static void measure(int batches, int calls, int sync_each, aclTensorDesc **in_desc, aclDataBuffer **ins,
                    aclTensorDesc **out_desc, aclDataBuffer **outs, aclrtStream stream, double *samples) {
    int b, c;
    for (b = 0; b < batches; ++b) {
        long long t0 = now_ns();
        for (c = 0; c < calls; ++c) {
            CHECK(aclopExecuteV2("Add", 2, in_desc, ins, 1, out_desc, outs, NULL, stream));
            if (sync_each) CHECK(aclrtSynchronizeStream(stream));
        }
        if (!sync_each) CHECK(aclrtSynchronizeStream(stream));
        samples[b] = (double)(now_ns() - t0) / calls;
    }
    qsort(samples, (size_t)batches, sizeof(double), cmp_double);
}

int main(int argc, char **argv) {
    int elements = 16, batches = 31, calls = 2000, json = 0, a;
    for (a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "--elements") && a + 1 < argc) elements = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--batches") && a + 1 < argc) batches = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--calls") && a + 1 < argc) calls = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--json")) json = 1;
        else {
            fprintf(stderr, "usage: op_overhead [--elements N] [--batches N] [--calls N] [--json]\n");
            return 2;
        }
    }
    if (elements < 1 || batches < 1 || calls < 1) {
        fprintf(stderr, "op_overhead: --elements, --batches and --calls must be positive\n");
        return 2;
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));

    int64_t dims[1];
    dims[0] = elements;
    size_t bytes = (size_t)elements * sizeof(float);
    aclTensorDesc *desc = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    void *x = NULL, *y = NULL, *z = NULL;
    CHECK(aclrtMalloc(&x, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&z, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(x, bytes, 0, bytes));
    CHECK(aclrtMemset(y, bytes, 0, bytes));
    aclTensorDesc *in_desc[2];
    aclDataBuffer *ins[2];
    aclTensorDesc *out_desc[1];
    aclDataBuffer *outs[1];
    in_desc[0] = desc;
    in_desc[1] = desc;
    ins[0] = aclCreateDataBuffer(x, bytes);
    ins[1] = aclCreateDataBuffer(y, bytes);
    out_desc[0] = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    outs[0] = aclCreateDataBuffer(z, bytes);

    /* Warm-up: the first call compiles the op; the rest warm caches and the worker. */
    double *call = (double *)malloc(sizeof(double) * (size_t)batches);
    double *sync = (double *)malloc(sizeof(double) * (size_t)batches);
    measure(1, calls, 0, in_desc, ins, out_desc, outs, stream, call);
    measure(batches, calls, 0, in_desc, ins, out_desc, outs, stream, call);
    measure(batches, calls / 4 > 0 ? calls / 4 : 1, 1, in_desc, ins, out_desc, outs, stream, sync);
    int p90 = (int)(0.9 * (batches - 1));
    if (json)
        printf("{\"elements\": %d, \"call_median_ns\": %.1f, \"call_p90_ns\": %.1f, \"sync_median_ns\": %.1f, "
               "\"sync_p90_ns\": %.1f}\n",
               elements, call[batches / 2], call[p90], sync[batches / 2], sync[p90]);
    else
        printf("aclopExecuteV2 Add[%d] float32, warm cache: call %.2f us (p90 %.2f), call+sync %.2f us (p90 %.2f)\n",
               elements, call[batches / 2] / 1000, call[p90] / 1000, sync[batches / 2] / 1000, sync[p90] / 1000);

    free(call);
    free(sync);
    aclDestroyDataBuffer(ins[0]);
    aclDestroyDataBuffer(ins[1]);
    aclDestroyDataBuffer(outs[0]);
    aclDestroyTensorDesc(desc);
    aclDestroyTensorDesc(out_desc[0]);
    CHECK(aclrtFree(x));
    CHECK(aclrtFree(y));
    CHECK(aclrtFree(z));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
