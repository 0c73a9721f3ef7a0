// acl.op: filled by the issue that implements it.
#include "py_methods.h"

namespace openacl::python {

PyMethodDef kOpMethods[] = {
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
