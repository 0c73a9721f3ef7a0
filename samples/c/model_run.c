/*
 * model_run: runs any model through the AscendCL model API, in msame's spirit.
 *
 *   model_run MODEL [--loop N] [--device ID]
 *
 * MODEL is an OpenACL offline model built by atc, or an ONNX file. Every input
 * gets device memory of aclmdlGetInputSizeByIndex bytes filled with a
 * deterministic pattern; a gear model (ascend_mbatch_shape_data input) runs its
 * first gear. The model executes N times (default 1); each output's dims, data
 * type, first values and sum are printed, then the mean execute time.
 * Exit status 0 on success, 1 on any failure (the call, its code and
 * aclGetRecentErrMsg() are printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

#define CHECK(call)                                                                       \
    do {                                                                                  \
        aclError ret_ = (call);                                                           \
        if (ret_ != ACL_SUCCESS) {                                                        \
            const char *msg_ = aclGetRecentErrMsg();                                      \
            fprintf(stderr, "model_run: %s failed with %d: %s\n", #call, (int)ret_,       \
                    msg_ ? msg_ : "(no message)");                                        \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A deterministic pattern, in the element type of the input. */
static void fill(void *host, size_t bytes, aclDataType type) {
    size_t i;
    switch (type) {
        case ACL_FLOAT:
            for (i = 0; i < bytes / 4; ++i) ((float *)host)[i] = (float)sin(0.01 * (double)i);
            break;
        case ACL_FLOAT16:
            for (i = 0; i < bytes / 2; ++i) ((aclFloat16 *)host)[i] = aclFloatToFloat16((float)sin(0.01 * (double)i));
            break;
        case ACL_INT64:
            for (i = 0; i < bytes / 8; ++i) ((int64_t *)host)[i] = (int64_t)(i % 7);
            break;
        case ACL_INT32:
            for (i = 0; i < bytes / 4; ++i) ((int32_t *)host)[i] = (int32_t)(i % 7);
            break;
        default:
            for (i = 0; i < bytes; ++i) ((uint8_t *)host)[i] = (uint8_t)(i % 7);
            break;
    }
}

static void print_output(const aclmdlDesc *desc, size_t index, const void *host, size_t bytes) {
    aclmdlIODims dims;
    size_t d, i, n;
    double sum = 0;
    size_t elements = 1;
    aclDataType type = aclmdlGetOutputDataType(desc, index);
    /* The dims of this execution: the gear selected last (the static dims otherwise). */
    CHECK(aclmdlGetCurOutputDims(desc, index, &dims));
    printf("output %zu '%s': dims [", index, dims.name);
    for (d = 0; d < dims.dimCount; ++d) {
        printf("%s%lld", d ? "," : "", (long long)dims.dims[d]);
        elements *= (size_t)dims.dims[d];
    }
    printf("], data type %d, %zu bytes", (int)type, elements * aclDataTypeSize(type));
    if (type == ACL_FLOAT) {
        n = elements < bytes / 4 ? elements : bytes / 4;
        for (i = 0; i < n; ++i) sum += ((const float *)host)[i];
        printf(", sum %.6g, first:", sum);
        for (i = 0; i < n && i < 5; ++i) printf(" %.6g", ((const float *)host)[i]);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int loop = 1, device = 0, a;
    uint32_t model_id = 0;
    aclrtContext context = NULL;
    aclmdlDesc *desc;
    aclmdlDataset *inputs, *outputs;
    size_t num_in, num_out, i, gear_index = (size_t)-1;
    double t0, total = 0;

    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--loop") == 0 && a + 1 < argc) loop = atoi(argv[++a]);
        else if (strcmp(argv[a], "--device") == 0 && a + 1 < argc) device = atoi(argv[++a]);
        else if (argv[a][0] != '-' && !path) path = argv[a];
        else {
            fprintf(stderr, "usage: model_run MODEL [--loop N] [--device ID]\n");
            return 1;
        }
    }
    if (!path || loop < 1) {
        fprintf(stderr, "usage: model_run MODEL [--loop N] [--device ID]\n");
        return 1;
    }

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(device));
    CHECK(aclrtCreateContext(&context, device));
    t0 = now_ms();
    CHECK(aclmdlLoadFromFile(path, &model_id));
    printf("loaded %s as model %u in %.1f ms\n", path, model_id, now_ms() - t0);

    desc = aclmdlCreateDesc();
    CHECK(aclmdlGetDesc(desc, model_id));
    num_in = aclmdlGetNumInputs(desc);
    num_out = aclmdlGetNumOutputs(desc);
    printf("%zu input(s), %zu output(s)\n", num_in, num_out);

    inputs = aclmdlCreateDataset();
    if (aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &gear_index) != ACL_SUCCESS)
        gear_index = (size_t)-1;
    for (i = 0; i < num_in; ++i) {
        size_t bytes = aclmdlGetInputSizeByIndex(desc, i);
        void *dev = NULL, *host = NULL;
        if (bytes == 0) {
            fprintf(stderr, "model_run: input %zu has free dims (size 0); build the model with atc --input_shape\n", i);
            return 1;
        }
        CHECK(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        if (i != gear_index) {
            CHECK(aclrtMallocHost(&host, bytes));
            fill(host, bytes, aclmdlGetInputDataType(desc, i));
            CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK(aclrtFreeHost(host));
        }
        CHECK(aclmdlAddDatasetBuffer(inputs, aclCreateDataBuffer(dev, bytes)));
    }
    if (gear_index != (size_t)-1) {
        aclmdlBatch batch;
        aclmdlHW hw;
        size_t gears = 0;
        CHECK(aclmdlGetDynamicBatch(desc, &batch));
        CHECK(aclmdlGetDynamicHW(desc, (size_t)-1, &hw));
        CHECK(aclmdlGetInputDynamicGearCount(desc, (size_t)-1, &gears));
        if (batch.batchCount > 0) {
            CHECK(aclmdlSetDynamicBatchSize(model_id, inputs, gear_index, batch.batch[0]));
            printf("dynamic batch: running batch %llu\n", (unsigned long long)batch.batch[0]);
        } else if (hw.hwCount > 0) {
            CHECK(aclmdlSetDynamicHWSize(model_id, inputs, gear_index, hw.hw[0][0], hw.hw[0][1]));
            printf("dynamic image size: running %llux%llu\n", (unsigned long long)hw.hw[0][0],
                   (unsigned long long)hw.hw[0][1]);
        } else if (gears > 0) {
            aclmdlIODims *all = (aclmdlIODims *)calloc(gears, sizeof(aclmdlIODims));
            CHECK(aclmdlGetInputDynamicDims(desc, (size_t)-1, all, gears));
            CHECK(aclmdlSetInputDynamicDims(model_id, inputs, gear_index, &all[0]));
            printf("dynamic dims: running gear 0 of %zu\n", gears);
            free(all);
        }
    }

    outputs = aclmdlCreateDataset();
    for (i = 0; i < num_out; ++i) {
        size_t bytes = aclmdlGetOutputSizeByIndex(desc, i);
        void *dev = NULL;
        CHECK(aclrtMalloc(&dev, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclmdlAddDatasetBuffer(outputs, aclCreateDataBuffer(dev, bytes)));
    }

    for (a = 0; a < loop; ++a) {
        t0 = now_ms();
        CHECK(aclmdlExecute(model_id, inputs, outputs));
        total += now_ms() - t0;
    }

    for (i = 0; i < num_out; ++i) {
        aclDataBuffer *buffer = aclmdlGetDatasetBuffer(outputs, i);
        size_t bytes = aclGetDataBufferSizeV2(buffer);
        void *host = NULL;
        CHECK(aclrtMallocHost(&host, bytes ? bytes : 1));
        CHECK(aclrtMemcpy(host, bytes, aclGetDataBufferAddr(buffer), bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        print_output(desc, i, host, bytes);
        CHECK(aclrtFreeHost(host));
    }
    printf("execute: %d run(s), mean %.3f ms\n", loop, total / loop);

    for (i = 0; i < num_in; ++i) {
        aclDataBuffer *buffer = aclmdlGetDatasetBuffer(inputs, i);
        CHECK(aclrtFree(aclGetDataBufferAddr(buffer)));
        CHECK(aclDestroyDataBuffer(buffer));
    }
    for (i = 0; i < num_out; ++i) {
        aclDataBuffer *buffer = aclmdlGetDatasetBuffer(outputs, i);
        CHECK(aclrtFree(aclGetDataBufferAddr(buffer)));
        CHECK(aclDestroyDataBuffer(buffer));
    }
    CHECK(aclmdlDestroyDataset(inputs));
    CHECK(aclmdlDestroyDataset(outputs));
    CHECK(aclmdlDestroyDesc(desc));
    CHECK(aclmdlUnload(model_id));
    CHECK(aclrtDestroyContext(context));
    CHECK(aclrtResetDevice(device));
    CHECK(aclFinalize());
    printf("model_run: OK\n");
    return 0;
}
