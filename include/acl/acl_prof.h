/*
 * OpenACL — AscendCL profiling API (aclprof*): collection to files and the
 * op-info subscription. Names, values and the record layout follow AscendCL
 * (../shared/spec/pyacl-api.md §5); output files: docs/profiling.md.
 *
 * Two ways to profile, never at the same time (ACL_ERROR_PROF_API_CONFLICT):
 *  - Collection to files: aclprofInit(dir) -> aclprofCreateConfig ->
 *    aclprofStart ... aclprofStop -> aclprofDestroyConfig -> aclprofFinalize.
 *    Each aclprofStop writes one PROF_* folder (op_summary / op_statistic /
 *    api_statistic CSVs and a Chrome-trace msprof_*.json). acl.json's
 *    `"profiler": {"switch": "on", "output": dir}` (or the openacl-msprof
 *    wrapper) does the same from aclInit to aclFinalize.
 *  - Op-info subscription: aclprofCreateSubscribeConfig(switch, metrics, &fd)
 *    with fd the write end of a pipe -> aclprofModelSubscribe(modelId, cfg)
 *    after load -> one 80-byte record per executed op is written to the pipe
 *    -> aclprofModelUnSubscribe flushes and closes fd (the reader sees EOF).
 *    The library owns fd from subscribe on: do not close it yourself.
 *    Records are read with the aclprofGetOp* functions below, inside the
 *    producing process (names and types are kept there, readable once).
 *    Executions never wait for the reader: records that do not fit the
 *    bounded queue (16384 by default) are dropped, counted and reported at
 *    unsubscribe (log warning), see docs/profiling.md.
 *
 * Thread-safety: every function may be called from any thread.
 *
 * Errors: bad pointer, length, index, enum value or record buffer
 * ACL_ERROR_INVALID_PARAM; before aclInit ACL_ERROR_UNINITIALIZE; unknown
 * model ACL_ERROR_INVALID_MODEL_ID; model subscribed twice
 * ACL_ERROR_PROF_REPEAT_SUBSCRIBE; subscription mixed with aclprofInit/Start
 * ACL_ERROR_PROF_API_CONFLICT; aclprofStart without aclprofInit, or stop of
 * what was not started ACL_ERROR_PROF_NOT_RUN; a device started twice, or
 * aclprofInit while acl.json's profiler runs ACL_ERROR_PROF_ALREADY_RUN;
 * unwritable output ACL_ERROR_WRITE_FILE. aclGetRecentErrMsg() says what and
 * how to fix.
 */
#ifndef OPENACL_ACL_PROF_H_
#define OPENACL_ACL_PROF_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Data-type bits of aclprofCreateConfig's dataTypeConfig (OR-able). Here
 * ACL_PROF_ACL_API records the API layer; every task-time bit records the
 * executed ops, copies and model executions; the other bits are accepted
 * (nothing to collect on this hardware). */
#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_GE_API_L0 0x0200ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_TASK_TIME_L2 0x2000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL
#define ACL_PROF_TASK_TIME_L3 0x8000ULL
#define ACL_PROF_GE_API_L1 0x01000000ULL
#define ACL_PROF_API_STATS 0x400000000ULL
#define ACL_PROF_AICORE_SHAPE 0x800000000ULL

/* Suggested buffer sizes for aclprofGetOpName / aclprofGetOpType. */
#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

typedef enum {
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
    ACL_AICORE_PIPE_UTILIZATION = 1,
    ACL_AICORE_MEMORY_BANDWIDTH = 2,
    ACL_AICORE_L0B_AND_WIDTH = 3,
    ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
    ACL_AICORE_MEMORY_UB = 5,
    ACL_AICORE_L2_CACHE = 6,
    ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,
    ACL_AICORE_MEMORY_ACCESS = 8,
    ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

typedef enum { ACL_STEP_START = 0, ACL_STEP_END = 1 } aclprofStepTag;

typedef enum {
    ACL_SUBSCRIBE_OP = 0,
    ACL_SUBSCRIBE_SUBGRAPH = 1,
    ACL_SUBSCRIBE_OP_THREAD = 2,
    ACL_SUBSCRIBE_NONE = 0xFF
} aclprofSubscribeOpFlag;

typedef enum { ACL_SUBSCRIBE_ATTRI_THREADID = 0, ACL_SUBSCRIBE_ATTRI_NONE = 1 } aclprofSubscribeOpAttri;

/* aclprofSetConfig types (ACL 1.17 numbering; 2 is unused). */
typedef enum {
    ACL_PROF_ARGS_MIN = 0,
    ACL_PROF_STORAGE_LIMIT = 1,
    ACL_PROF_SYS_HARDWARE_MEM_FREQ = 3,
    ACL_PROF_LLC_MODE = 4,
    ACL_PROF_SYS_IO_FREQ = 5,
    ACL_PROF_SYS_INTERCONNECTION_FREQ = 6,
    ACL_PROF_DVPP_FREQ = 7,
    ACL_PROF_HOST_SYS = 8,
    ACL_PROF_HOST_SYS_USAGE = 9,
    ACL_PROF_HOST_SYS_USAGE_FREQ = 10,
    ACL_PROF_LOW_POWER_FREQ = 11,
    ACL_PROF_SYS_MEM_SERVICEFLOW = 12,
    ACL_PROF_SYS_CPU_FREQ = 13,
    ACL_PROF_OPTYPE = 14,
    ACL_PROF_NTS_METRICS = 15,
    ACL_PROF_PATH = 16,
    ACL_PROF_ARGS_MAX = 17
} aclprofConfigType;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;
typedef struct aclprofSubscribeConfig aclprofSubscribeConfig;

/* ---- collection to files (spec §5.2) ---- */

/* Sets the folder PROF_* results go to (created if missing). After aclInit,
 * before aclprofStart. length: strlen of the path, 1..4096. A second call
 * without aclprofFinalize ACL_ERROR_REPEAT_INITIALIZE; while acl.json's
 * profiler runs ACL_ERROR_PROF_ALREADY_RUN; while a model is subscribed
 * ACL_ERROR_PROF_API_CONFLICT. */
ACL_FUNC_VISIBILITY aclError aclprofInit(const char *profilerResultPath, size_t length);
/* Stops (and writes) what still runs and forgets the folder.
 * ACL_ERROR_PROF_NOT_RUN without aclprofInit. */
ACL_FUNC_VISIBILITY aclError aclprofFinalize(void);
/* Which devices and data to collect. deviceIdList: deviceNums valid device
 * ids (copied). aicoreEvents is reserved: pass NULL. Returns NULL (recent
 * error message says why) for a NULL list, zero devices, a bad device id, an
 * unknown metric or unknown data-type bits. Free with aclprofDestroyConfig. */
ACL_FUNC_VISIBILITY aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                      aclprofAicoreMetrics aicoreMetrics,
                                                      const aclprofAicoreEvents *aicoreEvents,
                                                      uint64_t dataTypeConfig);
ACL_FUNC_VISIBILITY aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
/* Starts collecting for the config's devices (a device started twice
 * ACL_ERROR_PROF_ALREADY_RUN). */
ACL_FUNC_VISIBILITY aclError aclprofStart(const aclprofConfig *profilerConfig);
/* Stops the config's devices and writes one PROF_* folder. */
ACL_FUNC_VISIBILITY aclError aclprofStop(const aclprofConfig *profilerConfig);
/* Before aclprofStart. config: a string of configLength (1..256) bytes.
 * Values are checked and kept; none changes what this implementation
 * collects (they tune hardware sampling), except ACL_PROF_PATH, which
 * replaces the aclprofInit folder for the next stop. */
ACL_FUNC_VISIBILITY aclError aclprofSetConfig(aclprofConfigType configType, const char *config,
                                              size_t configLength);

/* ---- op-info subscription (spec §5.3, §5.4) ---- */

/* timeInfoSwitch: 1 records start/end times, 0 leaves them 0. aicoreMetrics:
 * an aclprofAicoreMetrics value (only timings are reported). fd: points at
 * the write end of a pipe (the int is read now). Returns NULL on bad input. */
ACL_FUNC_VISIBILITY aclprofSubscribeConfig *aclprofCreateSubscribeConfig(int8_t timeInfoSwitch,
                                                                         aclprofAicoreMetrics aicoreMetrics,
                                                                         void *fd);
ACL_FUNC_VISIBILITY aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig *profSubscribeConfig);
/* After the model is loaded. The library owns the config's fd from now on. */
ACL_FUNC_VISIBILITY aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig *profSubscribeConfig);
/* Flushes the records (waiting at most OPENACL_PROF_FLUSH_TIMEOUT_MS, default
 * 2000, for the reader), then closes the fd once no other model writes to it.
 * A model that is not subscribed ACL_ERROR_INVALID_MODEL_ID. */
ACL_FUNC_VISIBILITY aclError aclprofModelUnSubscribe(uint32_t modelId);

/* Record readers. opInfo/opInfoLen: bytes read from the pipe, a whole number
 * of records, each with a valid signature; index < the record count. */
ACL_FUNC_VISIBILITY aclError aclprofGetOpDescSize(size_t *opDescSize);
ACL_FUNC_VISIBILITY aclError aclprofGetOpNum(const void *opInfo, size_t opInfoLen, uint32_t *opNumber);
/* strlen + 1 of the op's type / name; ACL_ERROR_INVALID_PARAM once it was read. */
ACL_FUNC_VISIBILITY aclError aclprofGetOpTypeLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                                                 size_t *opTypeLen);
ACL_FUNC_VISIBILITY aclError aclprofGetOpNameLen(const void *opInfo, size_t opInfoLen, uint32_t index,
                                                 size_t *opNameLen);
/* Copies the string into opType/opName (opTypeLen bytes) and consumes it: a
 * second read fails. A length shorter than the string fails without
 * consuming; a length equal to strlen truncates by one character. */
ACL_FUNC_VISIBILITY aclError aclprofGetOpType(const void *opInfo, size_t opInfoLen, uint32_t index, char *opType,
                                              size_t opTypeLen);
ACL_FUNC_VISIBILITY aclError aclprofGetOpName(const void *opInfo, size_t opInfoLen, uint32_t index, char *opName,
                                              size_t opNameLen);
/* Microseconds (steady clock); 0 on bad input. */
ACL_FUNC_VISIBILITY uint64_t aclprofGetOpStart(const void *opInfo, size_t opInfoLen, uint32_t index);
ACL_FUNC_VISIBILITY uint64_t aclprofGetOpEnd(const void *opInfo, size_t opInfoLen, uint32_t index);
ACL_FUNC_VISIBILITY uint64_t aclprofGetOpDuration(const void *opInfo, size_t opInfoLen, uint32_t index);
/* The record's model id; on bad input the error code (ACL_ERROR_INVALID_PARAM). */
ACL_FUNC_VISIBILITY size_t aclprofGetModelId(const void *opInfo, size_t opInfoLen, uint32_t index);
/* ACL_SUBSCRIBE_NONE on bad input. */
ACL_FUNC_VISIBILITY aclprofSubscribeOpFlag aclprofGetOpFlag(const void *opInfo, size_t opInfoLen, uint32_t index);
/* ACL_SUBSCRIBE_ATTRI_THREADID: the executing thread id as a decimal string,
 * valid until the calling thread's next call of this function; NULL on bad
 * input. */
ACL_FUNC_VISIBILITY const char *aclprofGetOpAttriValue(const void *opInfo, size_t opInfoLen, uint32_t index,
                                                       aclprofSubscribeOpAttri attri);

/* ---- step info: training-iteration markers (spec §5.2) ----
 * aclprofGetStepTimestamp(info, ACL_STEP_START, stream) then (…, ACL_STEP_END,
 * stream) puts one "Step n" range on the timeline's msproftx rows (n counts
 * the steps of the process from 1) while a collection runs. END without
 * START, START twice, or a tag other than the two: ACL_ERROR_INVALID_PARAM. */
typedef struct aclprofStepInfo aclprofStepInfo;
/* NULL when out of memory; free with aclprofDestroyStepInfo. */
ACL_FUNC_VISIBILITY aclprofStepInfo *aclprofCreateStepInfo(void);
ACL_FUNC_VISIBILITY void aclprofDestroyStepInfo(aclprofStepInfo *stepInfo);
ACL_FUNC_VISIBILITY aclError aclprofGetStepTimestamp(aclprofStepInfo *stepInfo, aclprofStepTag tag,
                                                     aclrtStream stream);

/* ---- msproftx: user annotations (spec §5.2) ----
 * Recorded on the timeline ("msproftx" rows) while a collection with
 * ACL_PROF_MSPROFTX (or acl.json's profiler / openacl-msprof) runs; outside
 * one they succeed and record nothing. A stamp carries the message. */

/* A new stamp (free with aclprofDestroyStamp); NULL when out of memory. */
ACL_FUNC_VISIBILITY void *aclprofCreateStamp(void);
/* A stamp not from aclprofCreateStamp (or destroyed) is ignored, with a recent error message. */
ACL_FUNC_VISIBILITY void aclprofDestroyStamp(void *stamp);
/* msgLength: bytes of msg to use (1..1024; stops at a NUL). */
ACL_FUNC_VISIBILITY aclError aclprofSetStampTraceMessage(void *stamp, const char *msg, uint32_t msgLength);
/* An instant event with the stamp's message. */
ACL_FUNC_VISIBILITY aclError aclprofMark(void *stamp);
/* An instant event with msg (msgLen bytes, 1..1024), tagged with stream. */
ACL_FUNC_VISIBILITY aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream);
/* A range on the calling thread: aclprofPush opens it, aclprofPop closes the
 * innermost one (ACL_ERROR_INVALID_PARAM when none is open). */
ACL_FUNC_VISIBILITY aclError aclprofPush(void *stamp);
ACL_FUNC_VISIBILITY aclError aclprofPop(void);
/* A range that any thread may stop: *rangeId identifies it (from 1). */
ACL_FUNC_VISIBILITY aclError aclprofRangeStart(void *stamp, uint32_t *rangeId);
/* ACL_ERROR_INVALID_PARAM for an id not started or already stopped. */
ACL_FUNC_VISIBILITY aclError aclprofRangeStop(uint32_t rangeId);

#ifdef __cplusplus
}
#endif

#endif  /* OPENACL_ACL_PROF_H_ */
