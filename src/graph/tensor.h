// Shapes, tensor types and constant tensor data of the graph layer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace openacl::graph {

// One dimension: a known size (>= 0), a named symbol (ONNX dim_param, kept
// symbolic), or unknown (value -1, no symbol).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT: sizes convert naturally
  static Dim symbolic(std::string name) {
    Dim d;
    d.symbol = std::move(name);
    return d;
  }
  bool known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && (known() || symbol == o.symbol); }
};

using Shape = std::vector<Dim>;

// "[1,3,224,224]", "[N,3,?,?]".
std::string shape_str(const Shape& s);
// Product of known dims; nullopt if any dim is unknown or the product overflows.
std::optional<int64_t> element_count(const Shape& s);
bool fully_known(const Shape& s);

// The type of a value. `shape` is nullopt when even the rank is unknown.
struct TensorType {
  DType dtype = DType::kUndefined;
  std::optional<Shape> shape;

  bool has_rank() const { return shape.has_value(); }
  int64_t rank() const { return shape ? static_cast<int64_t>(shape->size()) : -1; }
  std::string str() const;  // "float32[1,3,224,224]" / "float32[?]" for unknown rank
};

// Constant tensor bytes (initializers, Constant nodes, folded values). The bytes
// may live in memory owned elsewhere (an mmap'd model file): `owner` keeps that
// alive, `data` points at the first element.
struct TensorData {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<const void> owner;

  int64_t elements() const;
  template <class T>
  const T* as() const { return static_cast<const T*>(data); }
  // Copies `bytes` bytes into a new owned buffer.
  static std::shared_ptr<TensorData> copy_of(DType dtype, std::vector<int64_t> dims, const void* src, size_t bytes);
  // Reads integer elements (int32/int64/uint8/bool/...) as int64, for shape-like inputs.
  std::optional<std::vector<int64_t>> to_int64() const;
};

}  // namespace openacl::graph
