/*
 * Per-call overhead of the OpenACL runtime, from C.
 *
 *   build/bin/rt_overhead [--json] [--batches N] [--scale F] [--quick]
 *
 * Each benchmark runs a warm-up batch, then N batches of a fixed number of calls;
 * a batch's time divided by its calls is one sample. Reported: median, p90 and
 * minimum of the samples, in ns per call. No timed assertions: the targets
 * (docs/benchmarks.md) are printed beside the numbers, not enforced.
 *
 *   memcpy_h2d_64        aclrtMemcpy of 64 bytes, pinned host -> device (synchronous)
 *   memcpy_async_enqueue aclrtMemcpyAsync of 64 bytes: time per enqueue, a batch
 *                        enqueued back to back, the stream synchronised untimed
 *   event_record_sync    aclrtRecordEvent + aclrtSynchronizeEvent on an idle stream
 *   callback_roundtrip   aclrtLaunchCallback(BLOCK) to a thread subscribed with
 *                        aclrtSubscribeReport and looping in aclrtProcessReport,
 *                        then aclrtSynchronizeStream
 *   sync_empty_stream    aclrtSynchronizeStream of a stream with nothing queued
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        aclError ret_ = (call);                                                      \
        if (ret_ != ACL_SUCCESS) {                                                   \
            const char *msg_ = aclGetRecentErrMsg();                                 \
            fprintf(stderr, "rt_overhead: %s failed with %d at line %d: %s\n", #call, \
                    (int)ret_, __LINE__, msg_ ? msg_ : "(no message)");              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

typedef struct {
    const char *name;
    const char *description;
    int calls; /* calls per batch at scale 1 */
    double target_ns; /* 0: no target */
} bench_info;

typedef struct {
    double median_ns, p90_ns, min_ns;
    int calls;
} bench_result;

enum { B_MEMCPY, B_ASYNC, B_EVENT, B_CALLBACK, B_SYNC_EMPTY, B_COUNT };

static const bench_info kBenches[B_COUNT] = {
    {"memcpy_h2d_64", "aclrtMemcpy 64 B host->device (sync)", 2000, 0},
    {"memcpy_async_enqueue", "aclrtMemcpyAsync 64 B, enqueue only", 1000, 1000},
    {"event_record_sync", "aclrtRecordEvent + aclrtSynchronizeEvent", 500, 0},
    {"callback_roundtrip", "aclrtLaunchCallback(BLOCK) + sync stream", 200, 30000},
    {"sync_empty_stream", "aclrtSynchronizeStream, empty stream", 2000, 0},
};

/* ---- state shared with the callback thread ---- */
static aclrtContext g_ctx;
static aclrtStream g_cb_stream;
static int g_stop;          /* read/written with __atomic builtins */
static long g_callbacks;    /* incremented in the callback thread only */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_subscribed;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_callback(void *user) {
    long *count = (long *)user;
    ++*count;
}

/* The callback thread subscribes itself to the stream, then serves it. */
static void *report_loop(void *arg) {
    (void)arg;
    CHECK(aclrtSetCurrentContext(g_ctx));
    CHECK(aclrtSubscribeReport((uint64_t)pthread_self(), g_cb_stream));
    pthread_mutex_lock(&g_mu);
    g_subscribed = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    while (!__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) {
        /* ACL_ERROR_RT_REPORT_TIMEOUT when idle: keep looping until told to stop. */
        (void)aclrtProcessReport(20);
    }
    CHECK(aclrtUnSubscribeReport((uint64_t)pthread_self(), g_cb_stream));
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double percentile(const double *sorted, int n, double p) {
    int rank = (int)(p / 100.0 * n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

typedef struct {
    void *dev;
    void *host;
    aclrtStream stream;
    aclrtEvent event;
} fixture;

/* Runs `calls` operations of benchmark b; returns the timed nanoseconds. */
static uint64_t run_batch(int b, const fixture *f, int calls) {
    uint64_t t0, t1;
    int i;
    switch (b) {
    case B_MEMCPY:
        t0 = now_ns();
        for (i = 0; i < calls; ++i)
            CHECK(aclrtMemcpy(f->dev, 64, f->host, 64, ACL_MEMCPY_HOST_TO_DEVICE));
        t1 = now_ns();
        return t1 - t0;
    case B_ASYNC:
        t0 = now_ns();
        for (i = 0; i < calls; ++i)
            CHECK(aclrtMemcpyAsync(f->dev, 64, f->host, 64, ACL_MEMCPY_HOST_TO_DEVICE, f->stream));
        t1 = now_ns();
        CHECK(aclrtSynchronizeStream(f->stream)); /* untimed */
        return t1 - t0;
    case B_EVENT:
        t0 = now_ns();
        for (i = 0; i < calls; ++i) {
            CHECK(aclrtRecordEvent(f->event, f->stream));
            CHECK(aclrtSynchronizeEvent(f->event));
        }
        t1 = now_ns();
        return t1 - t0;
    case B_CALLBACK:
        t0 = now_ns();
        for (i = 0; i < calls; ++i) {
            CHECK(aclrtLaunchCallback(on_callback, &g_callbacks, ACL_CALLBACK_BLOCK, f->stream));
            CHECK(aclrtSynchronizeStream(f->stream));
        }
        t1 = now_ns();
        return t1 - t0;
    case B_SYNC_EMPTY:
    default:
        t0 = now_ns();
        for (i = 0; i < calls; ++i)
            CHECK(aclrtSynchronizeStream(f->stream));
        t1 = now_ns();
        return t1 - t0;
    }
}

static bench_result measure(int b, const fixture *f, int batches, double scale) {
    bench_result r;
    double *samples = (double *)malloc(sizeof(double) * (size_t)batches);
    int calls = (int)(kBenches[b].calls * scale);
    int i;
    if (calls < 1) calls = 1;
    if (!samples) {
        fprintf(stderr, "rt_overhead: out of memory\n");
        exit(1);
    }
    (void)run_batch(b, f, calls); /* warm-up */
    for (i = 0; i < batches; ++i)
        samples[i] = (double)run_batch(b, f, calls) / calls;
    qsort(samples, (size_t)batches, sizeof(double), cmp_double);
    r.median_ns = batches % 2 ? samples[batches / 2]
                              : 0.5 * (samples[batches / 2 - 1] + samples[batches / 2]);
    r.p90_ns = percentile(samples, batches, 90.0);
    r.min_ns = samples[0];
    r.calls = calls;
    free(samples);
    return r;
}

static void fmt_time(char *buf, size_t n, double ns) {
    if (ns < 1000.0)
        snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.2f us", ns / 1e3);
    else
        snprintf(buf, n, "%.2f ms", ns / 1e6);
}

static void usage(void) {
    printf("usage: rt_overhead [--json] [--batches N] [--scale F] [--quick]\n"
           "  --json       print JSON instead of a table\n"
           "  --batches N  timed batches per benchmark (default 31)\n"
           "  --scale F    multiply the calls per batch (default 1)\n"
           "  --quick      --batches 7 --scale 0.2 (a smoke run)\n");
}

int main(int argc, char **argv) {
    int json = 0, batches = 31, i;
    double scale = 1.0;
    fixture f;
    bench_result res[B_COUNT];
    pthread_t reporter;
    int32_t major = 0, minor = 0, patch = 0;

    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--batches") && i + 1 < argc) {
            batches = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
            scale = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--quick")) {
            batches = 7;
            scale = 0.2;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    if (batches < 1 || scale <= 0.0) {
        usage();
        return 2;
    }

    CHECK(aclInit(NULL));
    CHECK(aclrtGetVersion(&major, &minor, &patch));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtGetCurrentContext(&g_ctx));
    CHECK(aclrtCreateStream(&f.stream));
    CHECK(aclrtCreateEvent(&f.event));
    CHECK(aclrtMalloc(&f.dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMallocHost(&f.host, 64));
    memset(f.host, 0x5a, 64);

    g_cb_stream = f.stream;
    if (pthread_create(&reporter, NULL, report_loop, NULL) != 0) {
        fprintf(stderr, "rt_overhead: pthread_create failed\n");
        return 1;
    }
    pthread_mutex_lock(&g_mu);
    while (!g_subscribed)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);

    for (i = 0; i < B_COUNT; ++i)
        res[i] = measure(i, &f, batches, scale);

    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    pthread_join(reporter, NULL);

    CHECK(aclrtFreeHost(f.host));
    CHECK(aclrtFree(f.dev));
    CHECK(aclrtDestroyEvent(f.event));
    CHECK(aclrtDestroyStream(f.stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());

    if (json) {
        printf("{\n  \"suite\": \"rt_overhead\",\n  \"language\": \"c\",\n");
        printf("  \"acl_version\": \"%d.%d.%d\",\n", (int)major, (int)minor, (int)patch);
        printf("  \"batches\": %d,\n  \"unit\": \"ns per call\",\n  \"results\": [\n", batches);
        for (i = 0; i < B_COUNT; ++i) {
            const bench_info *b = &kBenches[i];
            printf("    {\"name\": \"%s\", \"description\": \"%s\", \"calls_per_batch\": %d, "
                   "\"median_ns\": %.1f, \"p90_ns\": %.1f, \"min_ns\": %.1f, ",
                   b->name, b->description, res[i].calls, res[i].median_ns, res[i].p90_ns,
                   res[i].min_ns);
            if (b->target_ns > 0)
                printf("\"target_ns\": %.0f, \"meets_target\": %s}", b->target_ns,
                       res[i].median_ns <= b->target_ns ? "true" : "false");
            else
                printf("\"target_ns\": null, \"meets_target\": null}");
            printf("%s\n", i + 1 < B_COUNT ? "," : "");
        }
        printf("  ]\n}\n");
    } else {
        printf("OpenACL runtime per-call overhead (C), %d batches per benchmark\n", batches);
        printf("%-22s %-42s %7s %10s %10s %10s  %s\n", "benchmark", "what", "calls", "median",
               "p90", "min", "target");
        for (i = 0; i < B_COUNT; ++i) {
            const bench_info *b = &kBenches[i];
            char med[32], p90[32], mn[32], tgt[48];
            fmt_time(med, sizeof med, res[i].median_ns);
            fmt_time(p90, sizeof p90, res[i].p90_ns);
            fmt_time(mn, sizeof mn, res[i].min_ns);
            if (b->target_ns > 0) {
                char t[32];
                fmt_time(t, sizeof t, b->target_ns);
                snprintf(tgt, sizeof tgt, "<= %s %s", t,
                         res[i].median_ns <= b->target_ns ? "(met)" : "(MISSED)");
            } else {
                snprintf(tgt, sizeof tgt, "-");
            }
            printf("%-22s %-42s %7d %10s %10s %10s  %s\n", b->name, b->description, res[i].calls,
                   med, p90, mn, tgt);
        }
    }
    return 0;
}
