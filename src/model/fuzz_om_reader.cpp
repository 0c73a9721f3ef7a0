// libFuzzer entry point for the .om reader (built with -DOPENACL_FUZZ=ON and
// clang; see CMakeLists.txt): open_om + decode_graph on the input bytes.
//
// Seeds are plain .om files (some with a PACKED section). Each input is read twice: as it is (header,
// table and checksum defences), then, when that fails, with the file size
// and every checksum recomputed, so mutations also reach the META JSON and
// GRAPH decoders behind the checksums.
// Whatever decodes is also written back (write_om), dumped (om_to_json),
// ordered and given its gear shapes, none of which may crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

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

// False when open_om refuses the bytes.
bool read_om(const std::string& bytes) {
  using namespace openacl::model;
  OmView view;
  if (!open_om(bytes.data(), bytes.size(), &view).ok()) return false;
  OmModel model;
  model.meta = view.meta;
  model.packs = view.packed;  // what was read can be written again
  if (!decode_graph(view, view.weights, nullptr, &model.graph).ok()) return true;
  std::string again;
  (void)write_om(model, &again);
  (void)om_to_json(model);
  std::vector<openacl::graph::Node*> order;
  (void)model.graph->topological_order(&order);
  std::map<std::string, openacl::graph::Shape> shapes;
  for (size_t g = 0; g < model.meta.gears.gears.size(); ++g)
    (void)model.meta.gears.input_shapes(g, *model.graph, &shapes);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)openacl::model::sniff_format(bytes.data(), bytes.size());
  if (read_om(bytes)) return 0;
  reseal(&bytes);
  (void)read_om(bytes);
  return 0;
}
