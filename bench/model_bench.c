/*
 * One model's execute latency from C on the public API: the C column of
 * bench/models_bench.py.
 *
 *   model_bench MODEL [--input FILE]... [--dump FILE] [--warmup N]
 *               [--iters N | --serve] [--from-mem]
 *
 * Loads MODEL (.om or .onnx) with aclmdlLoadFromFile (timed; --from-mem: the
 * file is read into host memory first, and aclmdlLoadFromMem is timed, with
 * the bytes freed right after it returns, as a caller may), allocates device
 * buffers of the sizes the description gives, fills input i from the i-th
 * --input file (raw bytes, exactly the input's size; zeros without one), runs
 * N warm-up executes (default 3), then:
 *   --iters N  times N synchronous executes and prints one JSON line;
 *   --serve    prints {"ready": ...} and then answers the driver on stdin:
 *              "run K" times K executes and prints {"times_ms": [...]};
 *              "quit" ends. This is how models_bench.py interleaves rounds
 *              with the other runtimes' processes.
 * At the end, --dump writes the outputs (raw, concatenated in output order)
 * for the agreement check, and the last line reports the peak resident memory:
 * VmHWM from /proc/self/status (this process's own high-water mark) and
 * ru_maxrss (which on Linux includes the parent's peak from before exec).
 */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "acl/acl.h"

#define MAX_INPUTS 64

#define CHECK(call)                                                                          \
    do {                                                                                     \
        aclError ret_ = (call);                                                              \
        if (ret_ != ACL_SUCCESS) {                                                           \
            const char *msg_ = aclGetRecentErrMsg();                                         \
            fprintf(stderr, "model_bench: %s failed with %d: %s\n", #call, (int)ret_,        \
                    msg_ ? msg_ : "");                                                       \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void *read_whole_file(const char *file, size_t *size) {
    FILE *f = fopen(file, "rb");
    long n = -1;
    void *bytes = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0) bytes = malloc((size_t)n);
    if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "model_bench: cannot read %s\n", file);
        exit(1);
    }
    fclose(f);
    *size = (size_t)n;
    return bytes;
}

static void fill_from_file(void *dev, size_t bytes, const char *file) {
    FILE *f = fopen(file, "rb");
    void *host = malloc(bytes ? bytes : 1);
    long size;
    if (!f || !host) {
        fprintf(stderr, "model_bench: cannot read %s\n", file);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size != (long)bytes || fread(host, 1, bytes, f) != bytes) {
        fprintf(stderr, "model_bench: %s has %ld bytes, the input needs %zu\n", file, size, bytes);
        exit(1);
    }
    fclose(f);
    CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    free(host);
}

static aclmdlDataset *make_dataset(aclmdlDesc *desc, int output, const char **files, int nfiles) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    size_t count = output ? aclmdlGetNumOutputs(desc) : aclmdlGetNumInputs(desc), i;
    for (i = 0; i < count; ++i) {
        size_t bytes = output ? aclmdlGetOutputSizeByIndex(desc, i) : aclmdlGetInputSizeByIndex(desc, i);
        void *dev = NULL;
        CHECK(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemset(dev, bytes, 0, bytes));
        if (!output && (int)i < nfiles) fill_from_file(dev, bytes, files[i]);
        CHECK(aclmdlAddDatasetBuffer(ds, aclCreateDataBuffer(dev, bytes)));
    }
    return ds;
}

static void destroy_dataset(aclmdlDataset *ds) {
    size_t i, count = aclmdlGetDatasetNumBuffers(ds);
    for (i = 0; i < count; ++i) {
        aclDataBuffer *buf = aclmdlGetDatasetBuffer(ds, i);
        CHECK(aclrtFree(aclGetDataBufferAddr(buf)));
        CHECK(aclDestroyDataBuffer(buf));
    }
    CHECK(aclmdlDestroyDataset(ds));
}

static void run_and_print(uint32_t model_id, aclmdlDataset *in, aclmdlDataset *out, int iters) {
    int i;
    printf("{\"times_ms\": [");
    for (i = 0; i < iters; ++i) {
        double t0 = now_ms();
        CHECK(aclmdlExecute(model_id, in, out));
        printf("%s%.4f", i ? ", " : "", now_ms() - t0);
    }
    printf("]}\n");
    fflush(stdout);
}

static void dump_outputs(aclmdlDataset *out, const char *file) {
    FILE *f = fopen(file, "wb");
    size_t i;
    if (!f) {
        fprintf(stderr, "model_bench: cannot write %s\n", file);
        exit(1);
    }
    for (i = 0; i < aclmdlGetDatasetNumBuffers(out); ++i) {
        aclDataBuffer *buf = aclmdlGetDatasetBuffer(out, i);
        size_t bytes = aclGetDataBufferSizeV2(buf);
        void *host = malloc(bytes ? bytes : 1);
        CHECK(aclrtMemcpy(host, bytes, aclGetDataBufferAddr(buf), bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        fwrite(host, 1, bytes, f);
        free(host);
    }
    fclose(f);
}

static long vmhwm_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    fclose(f);
    return kb;
}

static void usage(void) {
    fprintf(stderr,
            "usage: model_bench MODEL [--input FILE]... [--dump FILE] [--warmup N] [--iters N | --serve] "
            "[--from-mem]\n");
    exit(1);
}

int main(int argc, char **argv) {
    const char *path = NULL, *dump = NULL, *inputs[MAX_INPUTS];
    int ninputs = 0, warmup = 3, iters = 10, serve = 0, from_mem = 0, a, i;
    uint32_t model_id;
    aclmdlDesc *desc;
    aclmdlDataset *in, *out;
    double load_ms;
    char line[128];
    struct rusage usage_self;

    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--input") == 0 && a + 1 < argc && ninputs < MAX_INPUTS) inputs[ninputs++] = argv[++a];
        else if (strcmp(argv[a], "--dump") == 0 && a + 1 < argc) dump = argv[++a];
        else if (strcmp(argv[a], "--warmup") == 0 && a + 1 < argc) warmup = atoi(argv[++a]);
        else if (strcmp(argv[a], "--iters") == 0 && a + 1 < argc) iters = atoi(argv[++a]);
        else if (strcmp(argv[a], "--serve") == 0) serve = 1;
        else if (strcmp(argv[a], "--from-mem") == 0) from_mem = 1;
        else if (argv[a][0] != '-' && !path) path = argv[a];
        else usage();
    }
    if (!path || warmup < 0 || iters < 1) usage();

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    if (from_mem) {
        size_t size = 0;
        void *bytes = read_whole_file(path, &size);
        load_ms = now_ms();
        CHECK(aclmdlLoadFromMem(bytes, size, &model_id));
        load_ms = now_ms() - load_ms;
        free(bytes);
    } else {
        load_ms = now_ms();
        CHECK(aclmdlLoadFromFile(path, &model_id));
        load_ms = now_ms() - load_ms;
    }
    desc = aclmdlCreateDesc();
    CHECK(aclmdlGetDesc(desc, model_id));
    in = make_dataset(desc, 0, inputs, ninputs);
    out = make_dataset(desc, 1, NULL, 0);
    for (i = 0; i < warmup; ++i) CHECK(aclmdlExecute(model_id, in, out));

    if (serve) {
        printf("{\"ready\": true, \"load_ms\": %.3f}\n", load_ms);
        fflush(stdout);
        while (fgets(line, sizeof line, stdin)) {
            int k;
            if (sscanf(line, "run %d", &k) == 1 && k > 0) run_and_print(model_id, in, out, k);
            else break; /* "quit", or the driver went away */
        }
    } else {
        printf("{\"load_ms\": %.3f}\n", load_ms);
        run_and_print(model_id, in, out, iters);
    }
    if (dump) dump_outputs(out, dump);
    getrusage(RUSAGE_SELF, &usage_self);
    if (vmhwm_kb() >= 0)
        printf("{\"vmhwm_kb\": %ld, \"ru_maxrss_kb\": %ld}\n", vmhwm_kb(), (long)usage_self.ru_maxrss);
    else
        printf("{\"ru_maxrss_kb\": %ld}\n", (long)usage_self.ru_maxrss);
    fflush(stdout);
    destroy_dataset(in);
    destroy_dataset(out);
    CHECK(aclmdlUnload(model_id));
    CHECK(aclmdlDestroyDesc(desc));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
