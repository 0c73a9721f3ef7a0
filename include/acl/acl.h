/*
 * OpenACL — the AscendCL umbrella header. Include this one header, link -lascendcl.
 */
#ifndef OPENACL_ACL_H_
#define OPENACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"
#include "acl_prof.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 15
#define ACL_PATCH_VERSION 0

/* Initialises the library. configPath: an acl.json file, or NULL / "" for defaults.
 * Reference-counted: a second call returns ACL_ERROR_REPEAT_INITIALIZE and counts.
 * Missing file: ACL_ERROR_INVALID_FILE; malformed JSON or nesting > 10:
 * ACL_ERROR_PARSE_FILE; bad values: ACL_ERROR_INVALID_PARAM. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/* Tears everything down (all references). Not initialised: ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
/* Drops one reference; tears down at zero; *refCount gets what remains. */
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount);
/* The last error message of this thread (or process, err_msg_mode "1"), then clears it.
 * The pointer stays valid until the next ACL call on this thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif  /* OPENACL_ACL_H_ */
