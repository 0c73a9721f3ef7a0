/*
 * OpenACL — AscendCL model API (aclmdl*): load, describe, datasets, execute,
 * gears. Names, enum values and struct layouts follow AscendCL
 * (../shared/spec/pyacl-api.md §3). What is not declared here is not yet
 * implemented (docs/api-coverage.md).
 *
 * Models: an ONNX file or an OpenACL offline model (.om, built by `atc`),
 * recognised by content whatever the file is called. A CANN-built .om (NPU
 * binary) is refused with ACL_ERROR_DESERIALIZE_MODEL and a message on how to
 * rebuild it with OpenACL's atc.
 *
 * Thread-safety: every function may be called from any thread. A model may be
 * executed from several threads at once; each execution gets its own work
 * memory unless the model was loaded with user work memory, in which case
 * executions of that model are serialised (they share the one work area).
 *
 * Errors: bad handle or index ACL_ERROR_INVALID_PARAM; unknown or unloaded
 * model id ACL_ERROR_INVALID_MODEL_ID; unreadable file ACL_ERROR_INVALID_FILE /
 * ACL_ERROR_READ_MODEL_FAILURE; malformed model ACL_ERROR_PARSE_MODEL or
 * ACL_ERROR_DESERIALIZE_MODEL; user memory too small ACL_ERROR_INVALID_PARAM;
 * inputs or outputs not matching the model ACL_ERROR_MODEL_INPUT_NOT_MATCH /
 * ACL_ERROR_MODEL_OUTPUT_NOT_MATCH; a gear that is not one of the model's
 * ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID; gear setters on a static model
 * ACL_ERROR_MODEL_NOT_DYNAMIC. aclGetRecentErrMsg() says what and how to fix.
 */
#ifndef OPENACL_ACL_MDL_H_
#define OPENACL_ACL_MDL_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAX_DIM_CNT 128
#define ACL_MAX_TENSOR_NAME_LEN 128
#define ACL_MAX_BATCH_NUM 128
#define ACL_MAX_HW_NUM 128
#define ACL_MAX_SHAPE_COUNT 128
#define ACL_DIM_ENDPOINTS 2
#define ACL_INVALID_NODE_INDEX 0xFFFFFFFF

#define ACL_MDL_LOAD_FROM_FILE 1
#define ACL_MDL_LOAD_FROM_FILE_WITH_MEM 2
#define ACL_MDL_LOAD_FROM_MEM 3
#define ACL_MDL_LOAD_FROM_MEM_WITH_MEM 4
#define ACL_MDL_LOAD_FROM_FILE_WITH_Q 5
#define ACL_MDL_LOAD_FROM_MEM_WITH_Q 6

#define ACL_DYNAMIC_TENSOR_NAME "ascend_mbatch_shape_data"
#define ACL_DYNAMIC_AIPP_NAME "ascend_dynamic_aipp_data"
#define ACL_ATTR_NAME_DATA_DUMP_ORIGIN_OP_NAMES "_datadump_original_op_names"

#define ACL_WORKSPACE_MEM_OPTIMIZE_DEFAULT 0
#define ACL_WORKSPACE_MEM_OPTIMIZE_INPUTOUTPUT 1

#define ACL_MODEL_STREAM_FLAG_HEAD 0x00000000U
#define ACL_MODEL_STREAM_FLAG_DEFAULT 0x7FFFFFFFU

typedef struct aclmdlDataset aclmdlDataset;
typedef struct aclmdlDesc aclmdlDesc;
typedef struct aclmdlConfigHandle aclmdlConfigHandle;

typedef struct aclmdlIODims {
    char name[ACL_MAX_TENSOR_NAME_LEN];
    size_t dimCount;
    int64_t dims[ACL_MAX_DIM_CNT];
} aclmdlIODims;

typedef struct aclmdlIODimsRange {
    size_t rangeCount;
    int64_t range[ACL_MAX_DIM_CNT][ACL_DIM_ENDPOINTS];
} aclmdlIODimsRange;

typedef struct aclmdlBatch {
    size_t batchCount;
    uint64_t batch[ACL_MAX_BATCH_NUM];
} aclmdlBatch;

typedef struct aclmdlHW {
    size_t hwCount;
    uint64_t hw[ACL_MAX_HW_NUM][2];
} aclmdlHW;

typedef enum {
    ACL_MDL_PRIORITY_INT32 = 0,
    ACL_MDL_LOAD_TYPE_SIZET,
    ACL_MDL_PATH_PTR,
    ACL_MDL_MEM_ADDR_PTR,
    ACL_MDL_MEM_SIZET,
    ACL_MDL_WEIGHT_ADDR_PTR,
    ACL_MDL_WEIGHT_SIZET,
    ACL_MDL_WORKSPACE_ADDR_PTR,
    ACL_MDL_WORKSPACE_SIZET,
    ACL_MDL_INPUTQ_NUM_SIZET,
    ACL_MDL_INPUTQ_ADDR_PTR,
    ACL_MDL_OUTPUTQ_NUM_SIZET,
    ACL_MDL_OUTPUTQ_ADDR_PTR,
    ACL_MDL_WORKSPACE_MEM_OPTIMIZE,
    ACL_MDL_WEIGHT_PATH_PTR
} aclmdlConfigAttr;

/* ---- load / unload / query (spec §3.2) ---- */

/* Loads a model file (ONNX or OpenACL .om) on the current context's device;
 * the library owns work and weight memory. *modelId: a new id (from 1). */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFile(const char *modelPath, uint32_t *modelId);
/* The same from the file's bytes in host memory (copied; the buffer may be
 * freed after the call). */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMem(const void *model, size_t modelSize, uint32_t *modelId);
/* User-managed memory: workPtr/weightPtr are device memory of at least the
 * sizes aclmdlQuerySize reports; NULL (with size 0) lets the library allocate
 * that region. The memory stays the caller's: aclmdlUnload does not free it,
 * and it must outlive the model. Weights are copied into weightPtr at the
 * offsets of the model's weight plan; intermediates live at the offsets of its
 * work plan. Executions of such a model are serialised. */
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromFileWithMem(const char *modelPath, uint32_t *modelId, void *workPtr,
                                                      size_t workSize, void *weightPtr, size_t weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlLoadFromMemWithMem(const void *model, size_t modelSize, uint32_t *modelId,
                                                     void *workPtr, size_t workSize, void *weightPtr,
                                                     size_t weightSize);
/* Releases the model's own memory; user memory is left alone. Waits for
 * executions of the model in flight. */
ACL_FUNC_VISIBILITY aclError aclmdlUnload(uint32_t modelId);
/* Work and weight bytes a *WithMem load needs (largest gear for gear models;
 * 0 work for models whose shapes are only known at execution). */
ACL_FUNC_VISIBILITY aclError aclmdlQuerySize(const char *fileName, size_t *workSize, size_t *weightSize);
ACL_FUNC_VISIBILITY aclError aclmdlQuerySizeFromMem(const void *model, size_t modelSize, size_t *workSize,
                                                   size_t *weightSize);

/* Load options for aclmdlLoadWithConfig. aclmdlSetConfigOpt reads the value
 * through attrValue (a pointer-valued attribute passes the address of the
 * pointer) and checks valueSize against the attribute's type. */
ACL_FUNC_VISIBILITY aclmdlConfigHandle *aclmdlCreateConfigHandle(void);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyConfigHandle(aclmdlConfigHandle *handle);
ACL_FUNC_VISIBILITY aclError aclmdlSetConfigOpt(aclmdlConfigHandle *handle, aclmdlConfigAttr attr,
                                               const void *attrValue, size_t valueSize);
ACL_FUNC_VISIBILITY aclError aclmdlLoadWithConfig(const aclmdlConfigHandle *handle, uint32_t *modelId);

/* ---- description (spec §3.3) ---- */

ACL_FUNC_VISIBILITY aclmdlDesc *aclmdlCreateDesc(void);
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDesc(aclmdlDesc *modelDesc);
/* Fills the description from a loaded model (desc first, id second). */
ACL_FUNC_VISIBILITY aclError aclmdlGetDesc(aclmdlDesc *modelDesc, uint32_t modelId);
/* Fills it from a model file / bytes without loading it for execution. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDescFromFile(aclmdlDesc *modelDesc, const char *modelPath);
ACL_FUNC_VISIBILITY aclError aclmdlGetDescFromMem(aclmdlDesc *modelDesc, const void *model, size_t modelSize);
/* Counts include the extra ascend_mbatch_shape_data input of gear models
 * (the last input). 0 on a bad desc. */
ACL_FUNC_VISIBILITY size_t aclmdlGetNumInputs(aclmdlDesc *modelDesc);
ACL_FUNC_VISIBILITY size_t aclmdlGetNumOutputs(aclmdlDesc *modelDesc);
/* Bytes of the tensor (the largest gear's for gear models); 0 on error. */
ACL_FUNC_VISIBILITY size_t aclmdlGetInputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY size_t aclmdlGetOutputSizeByIndex(aclmdlDesc *modelDesc, size_t index);
/* Dims with -1 for dimensions chosen at execution. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDimsV2(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
/* Output dims for the gear selected by the latest aclmdlSetDynamic* call on
 * the model this desc was filled from (the largest gear before any). */
ACL_FUNC_VISIBILITY aclError aclmdlGetCurOutputDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDimsRange(const aclmdlDesc *modelDesc, size_t index,
                                                    aclmdlIODimsRange *dimsRange);
/* Names stay valid while the desc lives. NULL on error. */
ACL_FUNC_VISIBILITY const char *aclmdlGetInputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY const char *aclmdlGetOutputNameByIndex(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY const char *aclmdlGetTensorRealName(const aclmdlDesc *modelDesc, const char *name);
/* Unknown name: ACL_ERROR_INVALID_PARAM, with no error log (programs probe
 * for ascend_mbatch_shape_data on every model). */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);
ACL_FUNC_VISIBILITY aclError aclmdlGetOutputIndexByName(const aclmdlDesc *modelDesc, const char *name, size_t *index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetInputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclFormat aclmdlGetOutputFormat(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetInputDataType(const aclmdlDesc *modelDesc, size_t index);
ACL_FUNC_VISIBILITY aclDataType aclmdlGetOutputDataType(const aclmdlDesc *modelDesc, size_t index);
/* Gears: batchCount / hwCount / gearCount 0 for a model without that kind. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicBatch(const aclmdlDesc *modelDesc, aclmdlBatch *batch);
/* index is reserved (pass -1); any value is accepted. */
ACL_FUNC_VISIBILITY aclError aclmdlGetDynamicHW(const aclmdlDesc *modelDesc, size_t index, aclmdlHW *hw);
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicGearCount(const aclmdlDesc *modelDesc, size_t index,
                                                           size_t *gearCount);
/* dims: an array of gearCount entries, one per gear; each holds the values of
 * every dynamic dimension of that gear, in input order. */
ACL_FUNC_VISIBILITY aclError aclmdlGetInputDynamicDims(const aclmdlDesc *modelDesc, size_t index, aclmdlIODims *dims,
                                                      size_t gearCount);

/* ---- datasets (spec §3.4) ---- */

/* A dataset holds data buffers in order; it never owns them. It owns the
 * tensor descs at its indexes (aclmdlSetDatasetTensorDesc copies; outputs'
 * are made by execution): aclmdlDestroyDataset frees those. */
ACL_FUNC_VISIBILITY aclmdlDataset *aclmdlCreateDataset(void);
/* Frees the dataset and its tensor descs: its data buffers and their memory stay. */
ACL_FUNC_VISIBILITY aclError aclmdlDestroyDataset(const aclmdlDataset *dataset);
ACL_FUNC_VISIBILITY aclError aclmdlAddDatasetBuffer(aclmdlDataset *dataset, aclDataBuffer *dataBuffer);
ACL_FUNC_VISIBILITY size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset *dataset);
/* NULL when index is out of range. */
ACL_FUNC_VISIBILITY aclDataBuffer *aclmdlGetDatasetBuffer(const aclmdlDataset *dataset, size_t index);
/* Describes buffer `index` (it must exist) of an input dataset: the real shape
 * of an input with free dims (-1 in aclmdlGetInputDims), given as the desc's
 * dims (aclCreateTensorDesc / aclSetTensorOriginShape); its data type and
 * format are not used. The dataset stores a COPY (as CANN does): the caller
 * keeps, and destroys, its own desc, and later changes to it are not seen
 * (set it again). NULL removes the index's desc. At execution every dim of
 * the desc must be >= 0 and match the model's fixed dims, else
 * ACL_ERROR_MODEL_INPUT_NOT_MATCH; the buffer must hold that shape's bytes.
 * On an output dataset the desc is overwritten by the execution. */
ACL_FUNC_VISIBILITY aclError aclmdlSetDatasetTensorDesc(aclmdlDataset *dataset, aclTensorDesc *tensorDesc,
                                                       size_t index);
/* The dataset's desc at `index`, NULL when none (or index out of range). The
 * desc belongs to the dataset: valid until the dataset is destroyed or the
 * index's desc is set again; do not destroy it (aclDestroyTensorDesc refuses).
 * After a successful execution the output dataset holds one per output with
 * the shape, data type and format written (created when the user set none):
 * read the real shape of a free-dim output with aclGetTensorDescDimV2. For
 * aclmdlExecuteAsync they are written when the queued execution runs, so read
 * them after synchronising the stream. */
ACL_FUNC_VISIBILITY aclTensorDesc *aclmdlGetDatasetTensorDesc(const aclmdlDataset *dataset, size_t index);

/* ---- gears (spec §3.5): write the selection into the ascend_mbatch_shape_data
 * buffer at `index` of `dataset`; call before execute. ---- */

ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                      uint64_t batchSize);
ACL_FUNC_VISIBILITY aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                   uint64_t height, uint64_t width);
ACL_FUNC_VISIBILITY aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset *dataset, size_t index,
                                                      const aclmdlIODims *dims);

/* ---- execution (spec §3.6) ---- */

/* Synchronous: returns when the outputs are written. Each input buffer must
 * hold the model's bytes for that input (for gear models: the selected
 * gear's bytes or more); each output buffer must be large enough. */
ACL_FUNC_VISIBILITY aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset *input, aclmdlDataset *output);
/* Queued on `stream` (NULL: the default stream), ordered with the copies,
 * events and callbacks there; checks are done before queueing, the
 * datasets are read at queue time (they may be destroyed afterwards), the
 * buffers they point to at execution. Errors of the execution itself surface
 * at the stream's synchronisation. */
ACL_FUNC_VISIBILITY aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset *input,
                                               aclmdlDataset *output, aclrtStream stream);

/* ---- model dump (spec §3.8, docs/models.md "Dump") ----
 * The dump writes the input and/or output tensors of the listed models' ops,
 * per execution, as .npy files under dump_path (or one stats line per tensor).
 * It is configured either by the acl.json `dump` section at aclInit or by
 * aclmdlInitDump + aclmdlSetDump(file with the same `dump` schema), never both.
 * aclmdlInitDump: ACL_ERROR_DUMP_ALREADY_RUN if acl.json configured a dump or
 * InitDump was already called. aclmdlSetDump: ACL_ERROR_DUMP_NOT_RUN before
 * InitDump; ACL_ERROR_INVALID_DUMP_CONFIG for a bad `dump` section (naming the
 * key and the allowed values). aclmdlFinalizeDump: ACL_ERROR_DUMP_NOT_RUN
 * without InitDump. All three need aclInit and are safe from any thread. */
ACL_FUNC_VISIBILITY aclError aclmdlInitDump(void);
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath);
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump(void);

#ifdef __cplusplus
}
#endif

#endif  /* OPENACL_ACL_MDL_H_ */
