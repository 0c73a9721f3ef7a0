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

// A Conv whose output is read only by an activation (Relu, LeakyRelu, Clip
// with constant bounds, Sigmoid, Tanh, HardSwish, HardSigmoid) absorbs it:
// the activation node goes, the Conv writes the activation's output and
// carries the activation in the attributes below (the Conv kernel applies it
// as a oneDNN post-op, or after its own loops).
inline constexpr const char* kFusedActivationAttr = "__openacl_activation";        // string: op type
inline constexpr const char* kFusedAlphaAttr = "__openacl_activation_alpha";      // float
inline constexpr const char* kFusedBetaAttr = "__openacl_activation_beta";        // float
Status fuse_conv_activation(Graph& g, size_t* rewrites);

// A Conv whose output is read only by an Add whose other operand has exactly
// the Conv output's type (float32, same known shape: a residual connection)
// absorbs the Add: the operand becomes the Conv's input 3 (input 2, the bias,
// may be omitted), the Conv writes the Add's output and carries the attribute
// below; its kernel computes conv(x) + residual (a oneDNN sum post-op, writing
// over the residual's memory when the planner lets it). Run before
// fuse_conv_activation, so that Conv -> Add -> Relu becomes one Conv.
inline constexpr const char* kFusedSumAttr = "__openacl_sum";  // int 1: input 3 is added
Status fuse_conv_add(Graph& g, size_t* rewrites);

// A 1x1 Conv (group 1, stride 1, no padding, constant W and optional B, no
// fused residual) whose output is read only by a depthwise 3x3 Conv (group =
// channels, stride 1 or 2, padding 1 on every side, constant W and optional
// B, no fused residual) becomes one Conv: inputs X, W, B (may be omitted),
// an omitted input 3, then the depthwise W and B (B may be omitted); the
// attributes below carry the depthwise stride and activation, the 1x1's own
// activation stays where fuse_conv_activation put it. The kernel runs both
// in one pass over rows (oneDNN's depthwise post-op), so the expanded tensor
// between them never goes to memory. float32, 4-D, known shapes; only where
// that tensor is at least kDwFusionMinImageBytes per image and
// kDwFusionMinBytes in all. Smaller ones stay in cache anyway, and there the
// two convolutions ran faster apart: at batch 8, one thread, 32 -> 192
// channels at 28x28 (600 KB per image) took 2.2 ms fused and 1.7 apart; at
// batch 1, with our own pointwise and depthwise loops (conv_1x1.h,
// conv_dw.h), MobileNetV2's 1.8 MB blocks took 0.40 and 0.30 ms apart
// against 0.49 and 0.37 fused at one thread, 10% less at two, and LR-ASPP's
// 1.2 MB one likewise. At batch 8 those blocks (14 MB in all) gain most
// from the fusion. Run after fuse_conv_activation.
inline constexpr const char* kFusedDwStrideAttr = "__openacl_dw_stride";             // int 1 or 2
inline constexpr const char* kFusedDwActivationAttr = "__openacl_dw_activation";     // string: op type
inline constexpr const char* kFusedDwAlphaAttr = "__openacl_dw_activation_alpha";   // float
inline constexpr const char* kFusedDwBetaAttr = "__openacl_dw_activation_beta";     // float
inline constexpr int64_t kDwFusionMinImageBytes = 1 << 20;
inline constexpr int64_t kDwFusionMinBytes = 2 << 20;
Status fuse_conv_depthwise(Graph& g, size_t* rewrites);

// A MobileNet inverted residual block: an optional 1x1 Conv (as
// fuse_conv_depthwise takes it) whose output is read only by a depthwise 3x3
// Conv (as there), whose output is read only by a 1x1 Conv (group 1, stride
// 1, no padding, constant W and optional B, no activation, an optional
// fused residual) becomes one Conv, the first of them: with the 1x1,
// inputs X, W, B, R (the residual, may be omitted), Wd, Bd and the dw
// attributes as fuse_conv_depthwise sets them; without, the depthwise with
// inputs X, Wd, Bd, R, two omitted, then both: Wp, Bp (B's may be omitted),
// and the attribute below. The kernel runs the block over bands of output
// rows (kernels/cpu/conv_irb.h), so that neither tensor inside the block goes
// to memory. float32, 4-D, known shapes; only where the depthwise's input
// is at least kBlockFusionMinBytes in all (smaller ones stay in the L2
// cache apart too). Run after fuse_conv_add and fuse_conv_activation, before
// fuse_conv_depthwise.
inline constexpr const char* kFusedProjectAttr = "__openacl_project";  // int 1: inputs 6 and 7 project
inline constexpr int64_t kBlockFusionMinBytes = 256 << 10;
Status fuse_inverted_residual(Graph& g, size_t* rewrites);

// A Transpose whose input is another Transpose's output reads that one's
// input instead, with the two permutations composed; where they cancel
// (NHWC <-> NCHW pairs, as converters from TensorFlow leave them), the
// readers of the second take the first's input directly (an Identity where
// the second's output is a graph output). The first goes with the dead
// nodes when nothing else reads it. Any dtype; perm given or the default
// reversal of a known rank.
Status merge_transposes(Graph& g, size_t* rewrites);

// GELU written out with Erf, as PyTorch exports it — x * 0.5 * (1 + erf(x /
// sqrt(2))) in any operand order, the scaling as Div by sqrt(2) or Mul by its
// inverse — becomes one Gelu node (opset 20, approximate "none"). float32.
Status fuse_gelu(Graph& g, size_t* rewrites);

// LayerNorm written out, as exporters before opset 17 emit it: ReduceMean
// over the last axis, Sub, Pow 2 (or Mul by itself), ReduceMean, Add eps,
// Sqrt, Div, Mul by a [C] constant and optionally Add of a [C] constant
// becomes one LayerNormalization (opset 17, axis -1). float32.
Status fuse_layernorm(Graph& g, size_t* rewrites);

// Scaled dot-product attention written out, as exporters emit it from
// per-head code (BERT, ViT, most encoders): q, k, v [B, S, H*D] each
// Reshape-d to [B, S, H, D]; Q = Transpose(q, 0 2 1 3), Kt = Transpose(k,
// 0 2 3 1) (or Transpose(Transpose(k, 0 2 1 3), 0 1 3 2)), V likewise;
// MatMul(Q, Kt), then optionally Div or Mul by a scalar constant, optionally
// Add of a float32 mask that broadcasts to the scores without growing them
// (its last dim the key length), Softmax over the last axis, MatMul with V,
// Transpose(0 2 1 3), Reshape to [B, S, H*D]. Becomes one Attention node
// (opset 23, 3-D form: q_num_heads = kv_num_heads = H, scale from the
// Div/Mul or 1) on q, k, v and the mask; the per-head views are never
// materialised. float32; the intermediate scores, probabilities and context
// must have no other reader.
Status fuse_attention(Graph& g, size_t* rewrites);

// An Attention node whose q, k and v are the three equal parts of one Split
// of a [B, S, 3 * H * D] float32 tensor along its last axis (BERT's and
// GPT-2's packed QKV projection, split in the model), with nothing else
// reading the parts: the Attention reads the packed tensor itself (input 0,
// inputs 1 and 2 absent, kPackedQkvAttr 1) and the Split goes (its three
// copies and their memory). Only the 3-D form with q_num_heads ==
// kv_num_heads, inputs q, k, v and an optional mask, and the one output.
inline constexpr const char* kPackedQkvAttr = "__openacl_qkv";  // int 1: input 0 is q | k | v per row
Status fuse_attention_split(Graph& g, size_t* rewrites);

// A MatMul with a constant 2-D float32 B absorbs what follows it:
//  - an Add of a constant with B's N columns (the bias): input 2, attribute
//    kFusedBiasAttr;
//  - then an activation fuse_conv_activation takes (Gelu too), in the same
//    attributes as there; or else a residual Add (an operand of the output's
//    type and known shape): input 3, kFusedSumAttr.
// The MatMul kernel applies them as oneDNN bias and post-ops (or its own
// loops). Run after fuse_gelu.
inline constexpr const char* kFusedBiasAttr = "__openacl_bias";  // int 1: input 2 is a bias [N]
Status fuse_matmul_epilogue(Graph& g, size_t* rewrites);

}  // namespace openacl::graph
