// capi: the dump's file formats (docs/models.md "Dump").
//
// Tensors are written as NumPy .npy files (format version 1.0: magic, a
// little-endian header dict with 'descr', 'fortran_order' False and 'shape',
// padded to 64 bytes, then the C-order data), readable by numpy.load. CANN's
// own binary payload serves only CANN's comparison tool (compat-notes §4).
// bfloat16 is widened to float32 (exact; NumPy has no bfloat16); string,
// 8-, 4- and 2-bit float/int types are not written (unsupported_dtype).
// Stats lines: "{label},{dtype},{shape},{count},{min},{max},{mean},{nan_count}"
// with shape as "2x3" ("" for a scalar); min/max/mean over the non-NaN values
// ("nan" when there are none).
#pragma once

#include <string>

#include "kernels/kernel.h"

namespace openacl::capi {

// A name made safe as one path component: '/', '\\', '.', whitespace and
// control characters become '_' ('.' separates the fields of dump file
// names); at most 128 bytes; "" becomes `fallback`.
std::string dump_safe_name(const std::string& name, const std::string& fallback);

// Whether write_npy can write this dtype.
bool dump_dtype_supported(graph::DType t);

// Writes `t` to `path` as .npy. False with *error set on failure (the file may
// then be partial).
bool write_npy(const std::string& path, const kernels::Tensor& t, std::string* error);

// The header line of a stats file and one line for `t`.
const char* dump_stats_header();
std::string dump_stats_line(const std::string& label, const kernels::Tensor& t);

}  // namespace openacl::capi
