// libFuzzer entry point for the .om reader (built with -DOPENACL_FUZZ=ON and
// clang; see CMakeLists.txt): open_om + decode_graph on the input bytes.
//
// The first input byte picks the mode:
//   even: the rest is read as it is (header, table and checksum defences);
//   odd:  the file size and every checksum in the rest are first recomputed,
//         so mutations reach the META JSON and GRAPH decoders behind them.
// Whatever decodes must also write back (write_om) and dump (om_to_json)
// without failing for reasons other than what write_om refuses by design.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/crc32c.h"
#include "model/om_format.h"

namespace {

uint32_t rd32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint64_t rd64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

// Repairs size and checksums in place where the layout allows (64-byte
// header, 32-byte table entries at offset 64; see om_format.cpp).
void reseal(std::string* om) {
  if (om->size() < 64) return;
  const uint64_t size = om->size();
  std::memcpy(om->data() + 16, &size, 8);
  const uint32_t count = rd32(*om, 12);
  if (count > 16 || 64 + 32 * static_cast<size_t>(count) > om->size()) return;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t e = 64 + 32 * i;
    const uint64_t off = rd64(*om, e + 8), len = rd64(*om, e + 16);
    if (off > om->size() || len > om->size() - off) continue;
    const uint32_t c = openacl::crc32c(om->data() + off, len);
    std::memcpy(om->data() + e + 24, &c, 4);
  }
  std::memset(om->data() + 32, 0, 4);
  const uint32_t c = openacl::crc32c(om->data(), 64 + 32 * static_cast<size_t>(count));
  std::memcpy(om->data() + 32, &c, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace openacl::model;
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) reseal(&bytes);
  (void)sniff_format(bytes.data(), bytes.size());
  OmView view;
  if (!open_om(bytes.data(), bytes.size(), &view).ok()) return 0;
  OmModel model;
  model.meta = view.meta;
  if (!decode_graph(view, view.weights, nullptr, &model.graph).ok()) return 0;
  std::string again;
  (void)write_om(model, &again);
  (void)om_to_json(model);
  std::vector<openacl::graph::Node*> order;
  (void)model.graph->topological_order(&order);
  if (!model.meta.gears.empty()) {
    std::map<std::string, openacl::graph::Shape> shapes;
    for (size_t g = 0; g < model.meta.gears.gears.size(); ++g) (void)model.meta.gears.input_shapes(g, *model.graph, &shapes);
  }
  return 0;
}
