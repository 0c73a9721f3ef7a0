/*
 * Per-call overhead of aclmdlExecute: a model whose work is negligible (e.g.
 * one Relu on 16 floats) executed synchronously over and over from C.
 *
 *   mdl_overhead MODEL [--batches N] [--calls N] [--json]
 *
 * Device buffers of the sizes the description gives, filled once; a warm-up
 * batch, then N batches (default 31) of M calls (default 2000); a batch's time
 * divided by its calls is one sample. Prints median, p90 and minimum in ns per
 * call (JSON with --json). bench/mdl_bench.py builds the model and runs this.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define CHECK(call)                                                                           \
    do {                                                                                      \
        aclError ret_ = (call);                                                               \
        if (ret_ != ACL_SUCCESS) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "mdl_overhead: %s failed with %d: %s\n", #call, (int)ret_,        \
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

static aclmdlDataset *make_dataset(const aclmdlDesc *desc, size_t count, int output) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    size_t i;
    for (i = 0; i < count; ++i) {
        size_t bytes = output ? aclmdlGetOutputSizeByIndex((aclmdlDesc *)desc, i)
                              : aclmdlGetInputSizeByIndex((aclmdlDesc *)desc, i);
        void *dev = NULL;
        CHECK(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemset(dev, bytes, 0, bytes));
        CHECK(aclmdlAddDatasetBuffer(ds, aclCreateDataBuffer(dev, bytes)));
    }
    return ds;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int batches = 31, calls = 2000, json = 0, a, b, c;
    uint32_t model_id;
    aclmdlDesc *desc;
    aclmdlDataset *in, *out;
    double *samples;

    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--batches") == 0 && a + 1 < argc) batches = atoi(argv[++a]);
        else if (strcmp(argv[a], "--calls") == 0 && a + 1 < argc) calls = atoi(argv[++a]);
        else if (strcmp(argv[a], "--json") == 0) json = 1;
        else if (argv[a][0] != '-' && !path) path = argv[a];
        else {
            fprintf(stderr, "usage: mdl_overhead MODEL [--batches N] [--calls N] [--json]\n");
            return 1;
        }
    }
    if (!path || batches < 1 || calls < 1) {
        fprintf(stderr, "usage: mdl_overhead MODEL [--batches N] [--calls N] [--json]\n");
        return 1;
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclmdlLoadFromFile(path, &model_id));
    desc = aclmdlCreateDesc();
    CHECK(aclmdlGetDesc(desc, model_id));
    in = make_dataset(desc, aclmdlGetNumInputs(desc), 0);
    out = make_dataset(desc, aclmdlGetNumOutputs(desc), 1);

    samples = (double *)malloc(sizeof(double) * (size_t)batches);
    for (c = 0; c < calls; ++c) CHECK(aclmdlExecute(model_id, in, out)); /* warm-up */
    for (b = 0; b < batches; ++b) {
        long long t0 = now_ns();
        for (c = 0; c < calls; ++c) aclmdlExecute(model_id, in, out);
        samples[b] = (double)(now_ns() - t0) / calls;
    }
    qsort(samples, (size_t)batches, sizeof(double), cmp_double);
    {
        double median = samples[batches / 2], p90 = samples[(batches * 9) / 10 < batches ? (batches * 9) / 10 : batches - 1];
        double min = samples[0];
        if (json)
            printf("{\"benchmark\": \"mdl_execute\", \"median_ns\": %.1f, \"p90_ns\": %.1f, \"min_ns\": %.1f, "
                   "\"batches\": %d, \"calls\": %d}\n", median, p90, min, batches, calls);
        else
            printf("aclmdlExecute: median %.0f ns, p90 %.0f ns, min %.0f ns per call (%d x %d calls)\n", median, p90,
                   min, batches, calls);
    }
    free(samples);
    CHECK(aclmdlUnload(model_id));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
