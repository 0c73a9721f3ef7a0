// Graph rewrites that need no kernel knowledge. Each returns how many
// rewrites it made; the graph stays valid (types of rewritten values kept).
#pragma once

#include <cstddef>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::graph {

// Conv (constant W, optional constant B) followed by BatchNormalization
// (inference form, constant scale/bias/mean/var, the Conv output read only by
// it) becomes one Conv with W' = W * s and B' = (B - mean) * s + bias, where
// s = scale / sqrt(var + epsilon) per output channel. float32 only.
Status fold_batchnorm_into_conv(Graph& g, size_t* rewrites);

}  // namespace openacl::graph
