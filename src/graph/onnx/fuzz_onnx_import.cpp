// libFuzzer entry point for the ONNX importer (built with -DOPENACL_FUZZ=ON and
// clang; see CMakeLists.txt). The first input byte picks the entry point so one
// corpus covers both parsers (seeds: scripts/test.sh prefixes a model with 0x00,
// a TensorProto with 0x01); external data is looked up in an empty folder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "graph/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string empty_dir = [] {
    char tmpl[] = "/tmp/openacl_fuzz_XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    return std::string(d ? d : "/nonexistent");
  }();
  if (data[0] & 1) {
    std::shared_ptr<openacl::graph::TensorData> t;
    std::string name;
    (void)openacl::graph::onnx::read_tensor_proto(data + 1, size - 1, &t, &name);
  } else {
    openacl::graph::onnx::ImportOptions opts;
    opts.base_dir = empty_dir;
    std::unique_ptr<openacl::graph::Graph> g;
    (void)openacl::graph::onnx::import_model(data + 1, size - 1, opts, &g);
    if (g) {
      std::vector<openacl::graph::Node*> order;
      (void)g->topological_order(&order);
    }
  }
  return 0;
}
