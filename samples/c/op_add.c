/*
 * op_add.c — one Ascend operator in C99: Add on device buffers.
 *
 * Tensor descriptors say what each tensor is, data buffers where it lives;
 * aclopExecuteV2 queues the op on a stream (compiled on the first call,
 * taken from the op cache afterwards); aclrtSynchronizeStream waits. Then the
 * same op through a handle (aclopCreateHandle / aclopExecWithHandle), and the
 * error a too-small output buffer gets (nothing is written).
 *
 * Build: part of the CMake tree (samples/CMakeLists.txt); run build/bin/op_add.
 * Exit status 0 when every call succeeded and the results match.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#define DEVICE_ID 0
#define ROWS 3
#define COLS 4
#define N (ROWS * COLS)

#define CHECK(call)                                                          \
    do {                                                                     \
        aclError ret_ = (call);                                              \
        if (ret_ != ACL_SUCCESS) {                                           \
            const char *msg_ = aclGetRecentErrMsg();                         \
            fprintf(stderr, "op_add: FAILED: %s -> %d (%s)\n", #call, ret_, \
                    msg_ ? msg_ : "no message");                             \
            goto fail;                                                       \
        }                                                                    \
    } while (0)

static int same(const float *a, const float *b, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (a[i] != b[i]) return 0;
    }
    return 1;
}

int main(void)
{
    const int64_t dims[2] = {ROWS, COLS};
    const size_t bytes = N * sizeof(float);
    float x1[N], x2[N], y[N], expected[N];
    void *d_x1 = NULL, *d_x2 = NULL, *d_y = NULL, *d_small = NULL;
    aclTensorDesc *desc = NULL;
    aclDataBuffer *b_x1 = NULL, *b_x2 = NULL, *b_y = NULL, *b_small = NULL;
    aclopHandle *handle = NULL;
    aclrtStream stream = NULL;
    int ok = 0, i;

    for (i = 0; i < N; ++i) {
        x1[i] = (float)i;
        x2[i] = 0.5f * (float)i;
        expected[i] = x1[i] + x2[i];
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(DEVICE_ID));
    CHECK(aclrtCreateStream(&stream));
    CHECK(aclrtMalloc(&d_x1, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d_x2, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d_y, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d_small, bytes / 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(d_x1, bytes, x1, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(d_x2, bytes, x2, bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    desc = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    b_x1 = aclCreateDataBuffer(d_x1, bytes);
    b_x2 = aclCreateDataBuffer(d_x2, bytes);
    b_y = aclCreateDataBuffer(d_y, bytes);
    b_small = aclCreateDataBuffer(d_small, bytes / 2);
    if (!desc || !b_x1 || !b_x2 || !b_y || !b_small) {
        fprintf(stderr, "op_add: FAILED: creating descs / buffers: %s\n", aclGetRecentErrMsg());
        goto fail;
    }

    {
        aclTensorDesc *in_desc[2];
        aclDataBuffer *in_buf[2];
        aclTensorDesc *out_desc[1];
        aclDataBuffer *out_buf[1];
        aclError ret;
        in_desc[0] = desc;
        in_desc[1] = desc;
        in_buf[0] = b_x1;
        in_buf[1] = b_x2;
        out_desc[0] = desc;
        out_buf[0] = b_y;
        CHECK(aclopExecuteV2("Add", 2, in_desc, in_buf, 1, out_desc, out_buf, NULL, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(y, bytes, d_y, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        if (!same(y, expected, N)) {
            fprintf(stderr, "op_add: FAILED: Add result differs\n");
            goto fail;
        }
        printf("aclopExecuteV2 : Add[%d,%d] float32 verified\n", ROWS, COLS);

        /* A buffer too small for the output: refused before anything runs. */
        out_buf[0] = b_small;
        ret = aclopExecuteV2("Add", 2, in_desc, in_buf, 1, out_desc, out_buf, NULL, stream);
        if (ret != ACL_ERROR_OP_OUTPUT_NOT_MATCH) {
            fprintf(stderr, "op_add: FAILED: small output buffer gave %d\n", ret);
            goto fail;
        }
        printf("small output   : refused with %d (%s)\n", ret, aclGetRecentErrMsg());
    }

    {
        const aclTensorDesc *in_desc[2];
        const aclTensorDesc *out_desc[1];
        const aclDataBuffer *in_buf[2];
        aclDataBuffer *out_buf[1];
        in_desc[0] = desc;
        in_desc[1] = desc;
        out_desc[0] = desc;
        CHECK(aclopCreateHandle("Add", 2, in_desc, 1, out_desc, NULL, &handle));
        /* y = y + x2, twice, in stream order */
        in_buf[0] = b_y;
        in_buf[1] = b_x2;
        out_buf[0] = b_y;
        CHECK(aclopExecWithHandle(handle, 2, in_buf, 1, out_buf, stream));
        CHECK(aclopExecWithHandle(handle, 2, in_buf, 1, out_buf, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(y, bytes, d_y, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        for (i = 0; i < N; ++i) expected[i] += 2.0f * x2[i];
        if (!same(y, expected, N)) {
            fprintf(stderr, "op_add: FAILED: handle result differs\n");
            goto fail;
        }
        printf("aclopExecWithHandle : y += x2 twice, verified\n");
    }
    ok = 1;

fail:
    if (handle) aclopDestroyHandle(handle);
    if (b_small) aclDestroyDataBuffer(b_small);
    if (b_y) aclDestroyDataBuffer(b_y);
    if (b_x2) aclDestroyDataBuffer(b_x2);
    if (b_x1) aclDestroyDataBuffer(b_x1);
    if (desc) aclDestroyTensorDesc(desc);
    if (d_small) aclrtFree(d_small);
    if (d_y) aclrtFree(d_y);
    if (d_x2) aclrtFree(d_x2);
    if (d_x1) aclrtFree(d_x1);
    if (stream) aclrtDestroyStream(stream);
    aclrtResetDevice(DEVICE_ID);
    aclFinalize();
    if (!ok) return 1;
    printf("op_add: OK\n");
    return 0;
}
