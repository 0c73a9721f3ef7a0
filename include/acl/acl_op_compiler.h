/*
 * OpenACL — AscendCL op compilation (acl_op_compiler.h): explicit compile,
 * compile-and-execute, compile options. Names, enum values and signatures
 * follow CANN (../shared/spec/pyacl-api.md §4.4, "C-only").
 *
 * What has effect here: aclopCompile compiles the op into the same cache
 * aclopExecuteV2 uses (engineType, compileFlag and opPath are checked and
 * otherwise ignored: there is one CPU engine and nothing is written to disk).
 * aclSetCompileopt stores each option's value, which aclGetCompileopt reports
 * back; none of them changes how ops compile (fp32 stays fp32 whatever
 * ACL_PRECISION_MODE says). aclopSetCompileFlag stores the flag (FUZZ
 * compilation is a no-op: compiled ops are already shape-exact).
 * aclGenGraphAndDumpForOp and the graph-dump options are not provided.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef OPENACL_ACL_OP_COMPILER_H_
#define OPENACL_ACL_OP_COMPILER_H_

#include "acl_base.h"
#include "acl_op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclCompileType ACL_ENUM_INT {
  ACL_COMPILE_SYS = 0,
  ACL_COMPILE_UNREGISTERED = 1
} aclopCompileType;

typedef enum ACL_ENUM_INT {
  ACL_PRECISION_MODE = 0,
  ACL_AICORE_NUM = 1,
  ACL_AUTO_TUNE_MODE = 2, /* discarded by CANN; stored and reported only */
  ACL_OP_SELECT_IMPL_MODE = 3,
  ACL_OPTYPELIST_FOR_IMPLMODE = 4,
  ACL_OP_DEBUG_LEVEL = 5,
  ACL_DEBUG_DIR = 6,
  ACL_OP_COMPILER_CACHE_MODE = 7,
  ACL_OP_COMPILER_CACHE_DIR = 8,
  ACL_OP_PERFORMANCE_MODE = 9,
  ACL_OP_JIT_COMPILE = 10,
  ACL_OP_DETERMINISTIC = 11,
  ACL_CUSTOMIZE_DTYPES = 12,
  ACL_OP_PRECISION_MODE = 13,
  ACL_ALLOW_HF32 = 14,
  ACL_PRECISION_MODE_V2 = 15,
  ACL_OP_DEBUG_OPTION = 16
} aclCompileOpt;

typedef enum aclCompileFlag ACL_ENUM_INT {
  ACL_OP_COMPILE_DEFAULT = 0,
  ACL_OP_COMPILE_FUZZ = 1
} aclOpCompileFlag;

/* Compiles the op into the cache. Errors as aclopExecuteV2 (acl_op.h); an
 * engineType or compileFlag outside the enums ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          int numOutputs, const aclTensorDesc *const outputDesc[],
                                          const aclopAttr *attr, aclopEngineType engineType,
                                          aclopCompileType compileFlag, const char *opPath);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(
    const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath, aclrtStream stream);
/* As aclopCompileAndExecute; output descs get the dims written (aclopExecuteV2). */
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                                      aclDataBuffer *inputs[], int numOutputs,
                                                      aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
                                                      aclopAttr *attr, aclopEngineType engineType,
                                                      aclopCompileType compileFlag, const char *opPath,
                                                      aclrtStream stream);

/* Stored per process; NULL value or an option outside the enum
 * ACL_ERROR_INVALID_PARAM. Size: strlen + 1 of the stored value (0 when
 * unset, also for an unknown option). Get: ACL_ERROR_INVALID_PARAM when unset
 * or `length` is too small for the value and its NUL. */
ACL_FUNC_VISIBILITY aclError aclSetCompileopt(aclCompileOpt opt, const char *value);
ACL_FUNC_VISIBILITY size_t aclGetCompileoptSize(aclCompileOpt opt);
ACL_FUNC_VISIBILITY aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length);
ACL_FUNC_VISIBILITY aclError aclopSetCompileFlag(aclOpCompileFlag flag);

#ifdef __cplusplus
}
#endif

#endif /* OPENACL_ACL_OP_COMPILER_H_ */
