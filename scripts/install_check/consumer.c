/* Compiles as strict C99 against the installed headers, links -lascendcl, and
 * makes the calls every AscendCL program starts and ends with. */
#include <stdio.h>

#include "acl/acl.h"

#define CHECK(call)                                                        \
    do {                                                                   \
        aclError ret_ = (call);                                            \
        if (ret_ != ACL_SUCCESS) {                                         \
            fprintf(stderr, "%s failed: %d (%s)\n", #call, (int)ret_,      \
                    aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "");     \
            return 1;                                                      \
        }                                                                  \
    } while (0)

int main(void) {
    uint32_t count = 0;
    int32_t major = 0, minor = 0, patch = 0;
    CHECK(aclInit(NULL));
    CHECK(aclrtGetVersion(&major, &minor, &patch));
    CHECK(aclrtGetDeviceCount(&count));
    CHECK(aclFinalize());
    printf("consumer: aclInit/aclFinalize ok, ACL %d.%d.%d, %u device(s)\n",
           (int)major, (int)minor, (int)patch, (unsigned)count);
    return count > 0 ? 0 : 1;
}
