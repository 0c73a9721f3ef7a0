// acl.prof: filled by the issue that implements it.
#include "py_methods.h"

namespace openacl::python {

PyMethodDef kProfMethods[] = {
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace openacl::python
