/*
 * This machine's fp32 FMA peak, measured: the ceiling that "% of peak" in
 * bench/models_bench.py is relative to.
 *
 *   peak_flops [--threads N] [--ms M] [--json]
 *
 * Each thread runs independent vector FMA chains (ACC accumulators, more than
 * FMA latency x FMA ports, so the loop is throughput-bound, not
 * latency-bound) on registers only: no memory traffic. AVX-512 when the CPU
 * has it (checked at run time; the kernel is compiled for it with a
 * function-level target attribute, so the binary still runs on AVX2-only
 * machines), else AVX2+FMA. Reports GFLOP/s (2 per FMA lane) for 1..N
 * threads (default: all online CPUs), best of 5 timed runs of about M ms
 * (default 200) each, so a brief preemption does not lower the peak.
 */
#define _GNU_SOURCE

#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ACC 10

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Each returns the flops done; the sum goes to a volatile sink so the chains
 * cannot be optimised away. */
static volatile float sink;

/* Ten named accumulators, not an array: at -O2 GCC keeps an array indexed in
 * an inner loop on the stack, and the chains would then time loads and stores. */
#define ACC_DECL(T, init) T c0 = init(0.f), c1 = init(1.f), c2 = init(2.f), c3 = init(3.f), c4 = init(4.f), \
                            c5 = init(5.f), c6 = init(6.f), c7 = init(7.f), c8 = init(8.f), c9 = init(9.f)
#define ACC_STEP(fma)                                                                                  \
    c0 = fma(c0, a, b); c1 = fma(c1, a, b); c2 = fma(c2, a, b); c3 = fma(c3, a, b); c4 = fma(c4, a, b); \
    c5 = fma(c5, a, b); c6 = fma(c6, a, b); c7 = fma(c7, a, b); c8 = fma(c8, a, b); c9 = fma(c9, a, b)
#define ACC_SUM(add) add(add(add(add(c0, c1), add(c2, c3)), add(add(c4, c5), add(c6, c7))), add(c8, c9))

__attribute__((target("avx2,fma"))) static double fma_avx2(long iters) {
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-6f);
    ACC_DECL(__m256, _mm256_set1_ps);
    long i;
    for (i = 0; i < iters; ++i) {
        ACC_STEP(_mm256_fmadd_ps);
    }
    sink = _mm256_cvtss_f32(ACC_SUM(_mm256_add_ps));
    return 2.0 * 8 * ACC * (double)iters;
}

__attribute__((target("avx512f"))) static double fma_avx512(long iters) {
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-6f);
    ACC_DECL(__m512, _mm512_set1_ps);
    long i;
    for (i = 0; i < iters; ++i) {
        ACC_STEP(_mm512_fmadd_ps);
    }
    sink = _mm512_reduce_add_ps(ACC_SUM(_mm512_add_ps));
    return 2.0 * 16 * ACC * (double)iters;
}

static double (*kernel)(long);

typedef struct {
    long iters;
    pthread_barrier_t *start;
    double flops;
} job_t;

static void *worker(void *arg) {
    job_t *job = (job_t *)arg;
    pthread_barrier_wait(job->start);
    job->flops = kernel(job->iters);
    return NULL;
}

/* GFLOP/s of `threads` threads each running `iters` iterations, timed from a
 * common start to the last thread's end. */
static double run(int threads, long iters) {
    pthread_t tid[256];
    job_t jobs[256];
    pthread_barrier_t start;
    double t0, flops = 0;
    int i;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (i = 0; i < threads; ++i) {
        jobs[i].iters = iters;
        jobs[i].start = &start;
        pthread_create(&tid[i], NULL, worker, &jobs[i]);
    }
    pthread_barrier_wait(&start);
    t0 = now_s();
    for (i = 0; i < threads; ++i) {
        pthread_join(tid[i], NULL);
        flops += jobs[i].flops;
    }
    t0 = now_s() - t0;
    pthread_barrier_destroy(&start);
    return flops / t0 * 1e-9;
}

int main(int argc, char **argv) {
    int max_threads = (int)sysconf(_SC_NPROCESSORS_ONLN), json = 0, t, r, a;
    double ms = 200;
    long iters;
    const char *isa;

    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc) max_threads = atoi(argv[++a]);
        else if (strcmp(argv[a], "--ms") == 0 && a + 1 < argc) ms = atof(argv[++a]);
        else if (strcmp(argv[a], "--json") == 0) json = 1;
        else {
            fprintf(stderr, "usage: peak_flops [--threads N] [--ms M] [--json]\n");
            return 1;
        }
    }
    if (max_threads < 1 || max_threads > 256 || ms <= 0) {
        fprintf(stderr, "peak_flops: --threads must be 1..256 and --ms > 0\n");
        return 1;
    }
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        kernel = fma_avx512;
        isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        kernel = fma_avx2;
        isa = "avx2+fma";
    } else {
        fprintf(stderr, "peak_flops: this CPU has neither AVX2+FMA nor AVX-512\n");
        return 1;
    }
    /* Calibrate the iteration count to about `ms` on one thread. */
    iters = 1 << 16;
    for (;;) {
        double t0 = now_s();
        kernel(iters);
        if (now_s() - t0 > ms * 1e-3 / 4 || iters > (1L << 40)) break;
        iters *= 2;
    }
    iters *= 4;

    if (json) printf("{\"isa\": \"%s\", \"accumulators\": %d, \"gflops\": {", isa, ACC);
    for (t = 1; t <= max_threads; ++t) {
        double best = 0;
        for (r = 0; r < 5; ++r) {
            double g = run(t, iters);
            if (g > best) best = g;
        }
        if (json) printf("%s\"%d\": %.2f", t > 1 ? ", " : "", t, best);
        else printf("%s, %d thread%s: %.1f GFLOP/s\n", isa, t, t > 1 ? "s" : "", best);
    }
    if (json) printf("}}\n");
    return 0;
}
