/*
 * OpenACL — AscendCL single-operator API (aclop*): attributes, execution,
 * handles, shape inference, the op cache. Names, enum values and signatures
 * follow CANN's acl_op.h (../shared/spec/pyacl-api.md §4.4). Compiling
 * explicitly (aclopCompile, aclSetCompileopt) is in acl_op_compiler.h.
 *
 * Ops: Ascend op types (Add, Cast, MatMulV2, ArgMaxV2, ...) with Ascend input
 * and attribute names; the catalogue is in docs/ops.md. An op is compiled on
 * its first call for a given (type, input/output descs, attributes) and cached
 * (aclopSetMaxOpQueueNum); later calls with equal descs and attributes reuse
 * it. No .om folder is needed (aclopSetModelDir is optional).
 *
 * Execution is asynchronous on `stream` (NULL: the default stream): buffers,
 * descs and attributes are checked and copied when the call is made, so they
 * may be changed or destroyed as soon as it returns; the data buffers' memory
 * must stay valid until the stream is synchronised. Failures found when the
 * op runs (rare: data-dependent sizes) are reported by the synchronisation.
 *
 * Thread-safety: every function may be called from any thread. An aclopAttr
 * or an aclopHandle may be used by several threads at once.
 *
 * Errors: NULL or unknown handles, negative counts ACL_ERROR_INVALID_PARAM;
 * unknown op type ACL_ERROR_OP_NOT_FOUND (the message suggests the nearest
 * names); wrong number, dtype or shape of inputs ACL_ERROR_OP_INPUT_NOT_MATCH,
 * of outputs (or an output buffer too small: nothing is written)
 * ACL_ERROR_OP_OUTPUT_NOT_MATCH; attribute missing or of the wrong kind
 * ACL_ERROR_OP_ATTR_NOT_MATCH; dtype the op does not take
 * ACL_ERROR_UNSUPPORTED_DATA_TYPE; before aclInit ACL_ERROR_UNINITIALIZE.
 * Custom AI-core kernels (aclopCreateKernel, aclopRegisterCompileFunc, ...)
 * need an NPU: they return ACL_ERROR_API_NOT_SUPPORT. aclGetRecentErrMsg()
 * says what was wrong and how to fix it.
 */
#ifndef OPENACL_ACL_OP_H_
#define OPENACL_ACL_OP_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopHandle aclopHandle;
typedef struct aclopAttr aclopAttr;
typedef struct aclopKernelDesc aclopKernelDesc;

typedef void (*aclDataDeallocator)(void *data, size_t length);

static const int ACL_COMPILE_FLAG_BIN_SELECTOR = 1;

typedef enum aclEngineType ACL_ENUM_INT {
  ACL_ENGINE_SYS = 0,
  ACL_ENGINE_AICORE = 1,
  ACL_ENGINE_VECTOR = 2
} aclopEngineType;

#define ACL_OP_DUMP_OP_AICORE_ARGS 0x00000001U

/* Single-op models (OpenACL .om files built by `atc --singleop=ops.json`)
 * are optional: ops compile on first use either way. aclopSetModelDir loads
 * every *.om of the directory into the op cache (an empty directory returns
 * ACL_SUCCESS; NULL, a missing path or a file ACL_ERROR_INVALID_PARAM; a .om
 * that is not a single-op model ACL_ERROR_OP_LOAD_FAILED naming the file).
 * aclopLoad does the same for one model in memory (read during the call).
 * Both need aclInit; the ops' memory is the current context's device memory
 * (host memory when the thread has no context yet). */
ACL_FUNC_VISIBILITY aclError aclopSetModelDir(const char *modelDir);
ACL_FUNC_VISIBILITY aclError aclopLoad(const void *model, size_t modelSize);

/* Attributes. Setting a name again replaces its value (and kind). NULL attr or
 * name, or a negative count, ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr(void);
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListDataType(aclopAttr *attr, const char *attrName, int numValues,
                                                      const aclDataType values[]);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
                                                  const uint8_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
                                                 const int64_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
                                                   const float *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListString(aclopAttr *attr, const char *attrName, int numValues,
                                                    const char **values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
                                                     const int *numValues, const int64_t *const values[]);

/* Runs opType on the stream. Input descs give the real dims (every dim >= 0);
 * output descs the dtype and dims of each output (aclopInferShape computes
 * them; -1 dims are accepted for outputs whose shape depends on the data,
 * the buffer then bounds what may be written). attr NULL: no attributes
 * (defaults apply). */
ACL_DEPRECATED_MESSAGE("aclopExecute is deprecated, use aclopExecuteV2 instead")
ACL_FUNC_VISIBILITY aclError aclopExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          const aclDataBuffer *const inputs[], int numOutputs,
                                          const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                          const aclopAttr *attr, aclrtStream stream);
/* As aclopExecute; in addition, when the op has run, each output desc holds
 * the dims written (ops whose output shape depends on the data: NonZero,
 * Unique, ...). The descs must stay alive until the stream is synchronised
 * for that update; a desc destroyed before is skipped. */
ACL_FUNC_VISIBILITY aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                            aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                            aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream);

/* Handles: the op compiled once for these descs and attributes (the descs and
 * attr may be destroyed afterwards). A handle runs without descs, so its input
 * descs need real dims (-1: ACL_ERROR_OP_INPUT_NOT_MATCH). It holds its
 * compiled op (cache eviction does not affect it) and belongs to the context
 * it was created under: once that context is destroyed or its device reset,
 * aclopExecWithHandle returns ACL_ERROR_RT_CONTEXT_NULL. */
ACL_FUNC_VISIBILITY aclError aclopCreateHandle(const char *opType, int numInputs,
                                               const aclTensorDesc *const inputDesc[], int numOutputs,
                                               const aclTensorDesc *const outputDesc[], const aclopAttr *opAttr,
                                               aclopHandle **handle);
ACL_FUNC_VISIBILITY void aclopDestroyHandle(aclopHandle *handle);
ACL_FUNC_VISIBILITY aclError aclopExecWithHandle(aclopHandle *handle, int numInputs,
                                                 const aclDataBuffer *const inputs[], int numOutputs,
                                                 aclDataBuffer *const outputs[], aclrtStream stream);

/* Cast from srcDesc's dtype to dstDesc's (same shape). truncate is accepted
 * and ignored (conversions round to nearest, saturating for float16). */
ACL_FUNC_VISIBILITY aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer,
                                       const aclTensorDesc *dstDesc, aclDataBuffer *dstBuffer, uint8_t truncate,
                                       aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCreateHandleForCast(aclTensorDesc *srcDesc, aclTensorDesc *dstDesc,
                                                      uint8_t truncate, aclopHandle **handle);

/* Custom AI-core kernels: no AI-core binary can run here. Each returns
 * ACL_ERROR_API_NOT_SUPPORT (after the NULL checks) with a message. */
ACL_FUNC_VISIBILITY aclError aclopCreateKernel(const char *opType, const char *kernelId, const char *kernelName,
                                               void *binData, int binSize, aclopEngineType enginetype,
                                               aclDataDeallocator deallocator);
typedef aclError (*aclopCompileFunc)(int numInputs, const aclTensorDesc *const inputDesc[], int numOutputs,
                                     const aclTensorDesc *const outputDesc[], const aclopAttr *opAttr,
                                     aclopKernelDesc *aclopKernelDesc);
ACL_FUNC_VISIBILITY aclError aclopRegisterCompileFunc(const char *opType, aclopCompileFunc func);
ACL_FUNC_VISIBILITY aclError aclopUnregisterCompileFunc(const char *opType);
ACL_FUNC_VISIBILITY aclError aclopSetKernelArgs(aclopKernelDesc *kernelDesc, const char *kernelId, uint32_t blockDim,
                                                const void *args, uint32_t argSize);
ACL_FUNC_VISIBILITY aclError aclopSetKernelWorkspaceSizes(aclopKernelDesc *kernelDesc, int numWorkspaces,
                                                          size_t *workspaceSizes);

/* Compiles (or finds in the cache) the op for these descs: there are no
 * kernel parameters to re-tune, so this validates and warms the cache. */
ACL_FUNC_VISIBILITY aclError aclopUpdateParams(const char *opType, int numInputs,
                                               const aclTensorDesc *const inputDesc[], int numOutputs,
                                               const aclTensorDesc *const outputDesc[], const aclopAttr *attr);

/* Fills each output desc: dtype, dims (-1 where the data decides, [-2] when
 * even the rank is unknown) and, for -1 dims, a shape range whose max is the
 * upper bound. inputs may be NULL (or hold NULL buffers): only descs are read;
 * constant inputs (aclSetTensorConst) are folded. */
ACL_FUNC_VISIBILITY aclError aclopInferShape(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                             aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                             aclopAttr *attr);

/* Capacity of the compiled-op cache (entries, >= 1; least recently used
 * evicted). Default 20000 or acl.json "max_opqueue_num". 0:
 * ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclopSetMaxOpQueueNum(uint64_t maxOpNum);

/* AI-core argument dumps: nothing to dump without AI-core kernels; a valid
 * dumpType (ACL_OP_DUMP_OP_AICORE_ARGS) returns ACL_ERROR_API_NOT_SUPPORT. */
ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path);
ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType);

#ifdef __cplusplus
}
#endif

#endif /* OPENACL_ACL_OP_H_ */
