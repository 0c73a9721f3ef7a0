/*
 * OpenACL — AscendCL mdl API. Declarations arrive with the issue that implements them
 * (see docs/api-coverage.md); this header exists so CANN programs that include it compile.
 */
#ifndef OPENACL_ACL_MDL_H_
#define OPENACL_ACL_MDL_H_

#include "acl_base.h"
#include "acl_rt.h"

#endif  /* OPENACL_ACL_MDL_H_ */
