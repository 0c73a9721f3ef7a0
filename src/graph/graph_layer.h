// graph: the IR every other engine layer reads. Values, nodes, attributes,
// constant tensors, op schemas with per-op shape functions, infer_shapes.
// Depends on base only; knows no runtime and no acl* types.
#pragma once

#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/graph.h"
#include "graph/op_schema.h"
#include "graph/tensor.h"
