// openacl-run: runs an ONNX model through the engine on random or given inputs
// and prints its outputs, the memory plan and per-node times; with --check it
// compares the outputs with expected tensors (the ONNX backend-test layout).
//
// Exit status: 0 ok (and outputs match with --check), 1 the model could not be
// loaded/compiled/run (message says why), 2 bad usage, 3 outputs differ.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc_count.h"
#include "base/fp16.h"
#include "base/status.h"
#include "graph/onnx/onnx_import.h"
#include "kernels/cpu/float8.h"
#include "kernels/cpu/subbyte.h"
#include "model/compiled_model.h"
#include "model/executor.h"
#include "model/loaded_model.h"
#include "model/om_format.h"

namespace {

namespace fs = std::filesystem;
using openacl::Status;
namespace graph = openacl::graph;
namespace kernels = openacl::kernels;
namespace model = openacl::model;
using graph::DType;

const char kUsage[] =
    "usage: openacl-run MODEL.onnx [options]\n"
    "  --input NAME=FILE      input from a TensorProto (.pb) or numpy (.npy) file\n"
    "  --input NAME:D0,D1,..  random input of this shape (also fixes free dims)\n"
    "  --data DIR             inputs from DIR/input_<i>.pb (ONNX test data set)\n"
    "  --check                compare outputs with DIR/output_<i>.pb (needs --data)\n"
    "  --rtol R --atol A      tolerances for --check (default 1e-3, 1e-7: the ONNX backend tests')\n"
    "  --plan                 print the memory plan\n"
    "  --times                print per-node times (median over the runs), slowest first\n"
    "  --repeat N             run N times and print the median time\n"
    "  --no-fold              disable constant folding\n"
    "  --via-om               optimise, encode as .om and decode again before running\n"
    "                         (what atc + aclmdlLoad do; checks the .om round trip)\n"
    "  --seed S               seed for random inputs (default 0)\n"
    "  --output-dir DIR       write each output to DIR/output_<i>.npy\n"
    "  --quiet                print nothing but errors and the check result\n"
    "  --count-allocs         count the heap allocations of the last run (run at least twice:\n"
    "                         the first one sizes what is kept), OpenACL's apart from oneDNN's,\n"
    "                         and where OpenACL's come from (addresses for addr2line)\n";

struct Args {
  std::string model, data, output_dir;
  std::map<std::string, std::string> input_files;
  std::map<std::string, std::vector<int64_t>> input_dims;
  bool check = false, plan = false, times = false, fold = true, quiet = false, via_om = false, count_allocs = false;
  double rtol = 1e-3, atol = 1e-7;
  int repeat = 1;
  unsigned seed = 0;
};

int usage(const char* why) {
  if (why) std::fprintf(stderr, "openacl-run: %s\n", why);
  std::fputs(kUsage, stderr);
  return 2;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// A minimal .npy reader: versions 1-3, little-endian, C order.
Status read_npy(const std::string& path, std::shared_ptr<graph::TensorData>* out) {
  std::string bytes;
  if (!read_file(path, &bytes)) return openacl::Errorf(openacl::code::kReadModelFailure, "cannot read %s", path.c_str());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return openacl::Errorf(openacl::code::kInvalidParam, "%s is not a .npy file", path.c_str());
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen, pos;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    pos = 10;
  } else {
    if (bytes.size() < 12) return openacl::Errorf(openacl::code::kInvalidParam, "%s: truncated header", path.c_str());
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    pos = 12;
  }
  if (pos + hlen > bytes.size()) return openacl::Errorf(openacl::code::kInvalidParam, "%s: truncated header", path.c_str());
  const std::string header = bytes.substr(pos, hlen);
  auto field = [&](const char* key) {
    size_t k = header.find(key);
    return k == std::string::npos ? std::string() : header.substr(k + std::strlen(key));
  };
  std::string descr = field("'descr':");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  static const std::map<std::string, DType> kTypes = {
      {"<f4", DType::kFloat32}, {"<f8", DType::kFloat64}, {"<f2", DType::kFloat16}, {"|i1", DType::kInt8},
      {"|u1", DType::kUInt8},   {"<i2", DType::kInt16},   {"<u2", DType::kUInt16},  {"<i4", DType::kInt32},
      {"<u4", DType::kUInt32},  {"<i8", DType::kInt64},   {"<u8", DType::kUInt64},  {"|b1", DType::kBool}};
  auto t = kTypes.find(descr);
  if (t == kTypes.end())
    return openacl::Errorf(openacl::code::kUnsupportedDataType, "%s: numpy dtype '%s' not supported", path.c_str(),
                           descr.c_str());
  if (field("'fortran_order':").rfind(" True", 0) == 0)
    return openacl::Errorf(openacl::code::kInvalidParam, "%s: Fortran-order arrays not supported", path.c_str());
  std::string shape = field("'shape':");
  shape = shape.substr(shape.find('(') + 1);
  shape = shape.substr(0, shape.find(')'));
  std::vector<int64_t> dims;
  for (size_t p = 0; p < shape.size();) {
    size_t q = shape.find(',', p);
    std::string item = shape.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (item.find_first_of("0123456789") != std::string::npos) dims.push_back(std::stoll(item));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const size_t need = static_cast<size_t>(n) * graph::dtype_bytes(t->second);
  if (pos + hlen + need > bytes.size())
    return openacl::Errorf(openacl::code::kInvalidParam, "%s: %zu data bytes expected, %zu present", path.c_str(), need,
                           bytes.size() - pos - hlen);
  *out = graph::TensorData::copy_of(t->second, dims, bytes.data() + pos + hlen, need);
  return Status::Ok();
}

Status read_tensor_file(const std::string& path, std::shared_ptr<graph::TensorData>* out) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return read_npy(path, out);
  std::string bytes;
  if (!read_file(path, &bytes)) return openacl::Errorf(openacl::code::kReadModelFailure, "cannot read %s", path.c_str());
  return graph::onnx::read_tensor_proto(bytes.data(), bytes.size(), out, nullptr);
}

std::shared_ptr<graph::TensorData> random_tensor(DType t, const std::vector<int64_t>& dims, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  const size_t eb = graph::dtype_bytes(t);
  std::vector<char> buf(static_cast<size_t>(n) * eb);
  std::uniform_real_distribution<float> uf(-1.f, 1.f);
  std::uniform_int_distribution<int> ui(0, 9);
  for (int64_t i = 0; i < n; ++i) {
    char* p = buf.data() + i * eb;
    switch (t) {
      case DType::kFloat32: { float v = uf(rng); std::memcpy(p, &v, 4); break; }
      case DType::kFloat64: { double v = uf(rng); std::memcpy(p, &v, 8); break; }
      case DType::kFloat16: { uint16_t v = openacl::float_to_half(uf(rng)); std::memcpy(p, &v, 2); break; }
      case DType::kBFloat16: { uint16_t v = openacl::float_to_bf16(uf(rng)); std::memcpy(p, &v, 2); break; }
      case DType::kBool: *p = static_cast<char>(ui(rng) & 1); break;
      default: {  // integers: small non-negative values, valid as indices of small axes
        int64_t v = ui(rng);
        std::memcpy(p, &v, eb);  // little-endian truncation
      }
    }
  }
  return graph::TensorData::copy_of(t, dims, buf.data(), buf.size());
}

double element(const kernels::Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.data);
  switch (t.dtype) {
    case DType::kFloat32: return reinterpret_cast<const float*>(p)[i];
    case DType::kFloat64: return reinterpret_cast<const double*>(p)[i];
    case DType::kFloat16: return openacl::half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return openacl::bf16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::kInt8: case DType::kInt4: case DType::kInt2: return reinterpret_cast<const int8_t*>(p)[i];
    case DType::kUInt8: case DType::kBool: case DType::kUInt4: case DType::kUInt2: return reinterpret_cast<const uint8_t*>(p)[i];
    case DType::kInt16: return reinterpret_cast<const int16_t*>(p)[i];
    case DType::kUInt16: return reinterpret_cast<const uint16_t*>(p)[i];
    case DType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case DType::kUInt32: return reinterpret_cast<const uint32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case DType::kUInt64: return static_cast<double>(reinterpret_cast<const uint64_t*>(p)[i]);
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      return kernels::cpu::f8::to_float(t.dtype, reinterpret_cast<const uint8_t*>(p)[i]);
    case DType::kFloat4E2M1: return kernels::cpu::subbyte::fp4_decode(reinterpret_cast<const uint8_t*>(p)[i]);
    default: return std::nan("");
  }
}

// float8 compares through the float path so NaN equals NaN (its steps are far
// wider than any tolerance, so that is still an exact comparison).
bool exact_type(DType t) { return !graph::dtype_is_float(t) && !kernels::cpu::f8::is_float8(t); }

// Compares like numpy.testing.assert_allclose (NaN equals NaN); integers,
// bools and 64-bit values of integer type compare exactly (bitwise for int64).
std::string compare(const kernels::Tensor& got, const graph::TensorData& want, double rtol, double atol) {
  if (got.dtype != want.dtype)
    return openacl::strformat("dtype %s, expected %s", graph::dtype_name(got.dtype), graph::dtype_name(want.dtype));
  if (got.dims != want.dims) return "shape " + got.type().str() + ", expected " + kernels::Tensor{want.dtype, want.dims, nullptr}.type().str();
  const kernels::Tensor w{want.dtype, want.dims, const_cast<void*>(want.data)};
  const int64_t n = got.elements();
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (got.dtype == DType::kInt64 || got.dtype == DType::kUInt64) {
      ok = std::memcmp(static_cast<const char*>(got.data) + 8 * i, static_cast<const char*>(want.data) + 8 * i, 8) == 0;
    } else {
      const double a = element(got, i), e = element(w, i);
      if (exact_type(got.dtype)) ok = a == e;
      else if (std::isnan(e) || std::isnan(a)) ok = std::isnan(e) && std::isnan(a);
      else if (std::isinf(e) || std::isinf(a)) ok = a == e;
      else {
        const double diff = std::fabs(a - e);
        ok = diff <= atol + rtol * std::fabs(e);
        if (!ok) worst = std::max(worst, diff);
      }
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (!bad) return "";
  return openacl::strformat("%lld of %lld values differ; first at flat index %lld: got %.9g, expected %.9g (max abs diff %.3g)",
                            static_cast<long long>(bad), static_cast<long long>(n), static_cast<long long>(first),
                            element(got, first), element(w, first), worst);
}

void print_tensor(const std::string& name, const kernels::Tensor& t) {
  std::printf("output '%s': %s", name.c_str(), t.type().str().c_str());
  const int64_t n = t.elements();
  if (t.dtype == DType::kString || graph::dtype_bytes(t.dtype) == 0) {
    std::printf("\n");
    return;
  }
  std::printf(" = [");
  for (int64_t i = 0; i < std::min<int64_t>(n, 8); ++i) std::printf("%s%.6g", i ? ", " : "", element(t, i));
  std::printf("%s]", n > 8 ? ", ..." : "");
  if (n > 0 && graph::dtype_is_float(t.dtype)) {
    double lo = element(t, 0), hi = lo, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = element(t, i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    std::printf("  min %.6g max %.6g mean %.6g", lo, hi, sum / static_cast<double>(n));
  }
  std::printf("\n");
}

// Writes a tensor as a version-1 .npy file (C order, little-endian).
bool write_npy(const std::string& path, const kernels::Tensor& t) {
  static const std::map<DType, const char*> kDescr = {
      {DType::kFloat32, "<f4"}, {DType::kFloat64, "<f8"}, {DType::kFloat16, "<f2"}, {DType::kInt8, "|i1"},
      {DType::kUInt8, "|u1"},   {DType::kInt16, "<i2"},   {DType::kUInt16, "<u2"},  {DType::kInt32, "<i4"},
      {DType::kUInt32, "<u4"},  {DType::kInt64, "<i8"},   {DType::kUInt64, "<u8"},  {DType::kBool, "|b1"}};
  auto d = kDescr.find(t.dtype);
  if (d == kDescr.end()) return false;
  std::string shape = "(";
  for (int64_t x : t.dims) shape += std::to_string(x) + ",";
  if (t.dims.size() > 1) shape.pop_back();
  shape += ")";
  std::string header = std::string("{'descr': '") + d->second + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const unsigned char preamble[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write(reinterpret_cast<const char*>(preamble), 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(len_bytes, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.bytes()));
  return static_cast<bool>(f);
}

int fail(const char* what, const Status& st) {
  std::fprintf(stderr, "openacl-run: %s: %s\n", what, st.message().c_str());
  return 1;
}

int run(const Args& a) {
  std::unique_ptr<graph::Graph> g;
  Status st = graph::onnx::import_file(a.model, &g);
  if (!st.ok()) return fail("import", st);

  // Every --input names one of the model's inputs, and its file exists (a
  // typo would otherwise run on random data without a word).
  std::string names;
  for (const graph::Value* v : g->inputs()) names += (names.empty() ? "'" : ", '") + v->name + "'";
  std::vector<std::string> given;
  for (const auto& kv : a.input_files) given.push_back(kv.first);
  for (const auto& kv : a.input_dims) given.push_back(kv.first);
  for (const std::string& name : given) {
    bool found = false;
    for (const graph::Value* v : g->inputs()) found = found || v->name == name;
    if (!found) {
      std::fprintf(stderr, "openacl-run: --input %s: the model has no input of that name (its inputs: %s)\n",
                   name.c_str(), names.c_str());
      return 2;
    }
  }
  for (const auto& [name, file] : a.input_files)
    if (!fs::exists(file)) {
      std::fprintf(stderr, "openacl-run: --input %s=%s: no such file\n", name.c_str(), file.c_str());
      return 2;
    }

  // Inputs: from files, then random for the rest.
  std::vector<std::shared_ptr<graph::TensorData>> data(g->inputs().size());
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    const std::string& name = g->inputs()[i]->name;
    std::string file;
    if (a.input_files.count(name)) file = a.input_files.at(name);
    else if (!a.data.empty()) file = a.data + "/input_" + std::to_string(i) + ".pb";
    if (!file.empty() && fs::exists(file)) {
      st = read_tensor_file(file, &data[i]);
      if (!st.ok()) return fail(("input '" + name + "'").c_str(), st);
    }
  }
  std::mt19937 rng(a.seed);
  model::CompileOptions opt;
  opt.fold_constants = a.fold;
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    const graph::Value* v = g->inputs()[i];
    if (data[i]) {
      opt.input_shapes[v->name] = graph::Shape(data[i]->dims.begin(), data[i]->dims.end());
      continue;
    }
    std::vector<int64_t> dims;
    if (a.input_dims.count(v->name)) {
      dims = a.input_dims.at(v->name);
    } else {
      if (!v->type.shape || !graph::fully_known(*v->type.shape)) {
        std::fprintf(stderr, "openacl-run: input '%s' is %s; give its shape with --input %s:D0,D1,...\n",
                     v->name.c_str(), v->type.str().c_str(), v->name.c_str());
        return 2;
      }
      for (const graph::Dim& d : *v->type.shape) dims.push_back(d.value);
    }
    data[i] = random_tensor(v->type.dtype, dims, rng);
    opt.input_shapes[v->name] = graph::Shape(dims.begin(), dims.end());
  }
  std::vector<std::string> output_names;
  for (const graph::Value* v : g->outputs()) output_names.push_back(v->name);

  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<graph::Graph> graph_to_run(std::move(g));
  std::string om_bytes;
  if (a.via_om) {
    // The stored form: shape-independent passes on the declared shapes, then
    // .om bytes, decoded into a fresh graph that is compiled for the inputs.
    model::CompileOptions stored;
    stored.fold_constants = a.fold;
    st = model::optimize(graph_to_run, stored);
    if (!st.ok()) return fail("optimize", st);
    model::OmModel om;
    om.graph = graph_to_run;
    st = model::write_om(om, &om_bytes);
    if (!st.ok()) return fail("write .om", st);
    model::OmView view;
    st = model::open_om(om_bytes.data(), om_bytes.size(), &view);
    if (!st.ok()) return fail("open .om", st);
    st = model::decode_graph(view, view.weights, nullptr, &graph_to_run);
    if (!st.ok()) return fail("decode .om", st);
  }
  std::unique_ptr<model::CompiledModel> compiled;
  st = model::CompiledModel::compile(graph_to_run, opt, &compiled);
  if (!st.ok()) return fail("compile", st);
  const double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::shared_ptr<const model::CompiledModel> m(std::move(compiled));
  if (!a.quiet)
    std::printf("compiled in %.1f ms: %zu nodes (%zu folded, %zu fused, %zu dead removed), %s, work %zu bytes, "
                "weights %zu bytes\n",
                compile_ms, m->nodes().size(), m->folded_nodes(), m->fused_nodes(), m->removed_nodes(),
                m->is_static() ? "static shapes" : "dynamic shapes", m->is_static() ? m->plan().work_size : 0,
                m->is_static() ? m->plan().weight_size : 0);
  if (a.plan) {
    if (m->is_static()) std::printf("%s\n", m->plan().to_string().c_str());
    else std::printf("no memory plan: shapes depend on the inputs' values\n");
  }

  std::vector<kernels::Tensor> inputs;
  for (size_t i = 0; i < data.size(); ++i)
    inputs.push_back(kernels::Tensor{m->values()[m->input_ids()[i]]->type.dtype == data[i]->dtype ? data[i]->dtype
                                                                                                   : data[i]->dtype,
                                     data[i]->dims, const_cast<void*>(data[i]->data)});
  model::Executor exec(m);
  std::vector<kernels::Tensor> outputs;
  std::vector<model::NodeTiming> timings;
  // Each node's times over the runs (in the order the nodes first ran).
  std::vector<std::pair<const graph::Node*, std::vector<int64_t>>> node_ns;
  std::map<const graph::Node*, size_t> node_index;
  std::vector<double> ms;
  openacl::tools::AllocCounts allocs;
  for (int r = 0; r < a.repeat; ++r) {
    const auto s = std::chrono::steady_clock::now();
    const bool counting = a.count_allocs && r == a.repeat - 1;
    if (counting) openacl::tools::start_counting();
    st = exec.run(inputs, &outputs, a.times ? &timings : nullptr);
    if (counting) allocs = openacl::tools::stop_counting();
    if (!st.ok()) return fail("run", st);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    for (const model::NodeTiming& t : timings) {
      auto [it, fresh] = node_index.emplace(t.node, node_ns.size());
      if (fresh) node_ns.emplace_back(t.node, std::vector<int64_t>());
      node_ns[it->second].second.push_back(t.ns);
    }
  }
  std::sort(ms.begin(), ms.end());
  if (!a.quiet) {
    std::printf("ran %d time(s): median %.3f ms, min %.3f ms\n", a.repeat, ms[ms.size() / 2], ms[0]);
    for (size_t i = 0; i < outputs.size(); ++i) print_tensor(output_names[i], outputs[i]);
  }
  if (a.count_allocs) {
    std::printf("heap allocations in run %d: %ld by OpenACL, %ld inside oneDNN%s\n", a.repeat, allocs.ours,
                allocs.onednn, a.repeat == 1 ? " (the first run: --repeat 2 or more for a steady one)" : "");
    openacl::tools::print_alloc_sites(stdout, 16);
  }
  if (a.times) {
    // One run's time of a node is one sample on whatever else the machine
    // did then: the median over the runs is what to compare.
    std::vector<model::NodeTiming> medians;
    for (auto& [node, ns] : node_ns) {
      std::sort(ns.begin(), ns.end());
      medians.push_back({node, ns[ns.size() / 2]});
    }
    std::sort(medians.begin(), medians.end(), [](auto& x, auto& y) { return x.ns > y.ns; });
    std::printf("per-node times (median of %d run(s)):\n", a.repeat);
    for (const model::NodeTiming& t : medians)
      std::printf("  %10.3f ms  %s\n", static_cast<double>(t.ns) / 1e6, t.node->describe().c_str());
  }
  if (!a.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(a.output_dir, ec);
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string path = a.output_dir + "/output_" + std::to_string(i) + ".npy";
      if (!write_npy(path, outputs[i])) {
        std::fprintf(stderr, "openacl-run: cannot write %s (%s)\n", path.c_str(), graph::dtype_name(outputs[i].dtype));
        return 1;
      }
    }
  }
  if (a.check) {
    int bad = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::shared_ptr<graph::TensorData> want;
      const std::string file = a.data + "/output_" + std::to_string(i) + ".pb";
      st = read_tensor_file(file, &want);
      if (!st.ok()) return fail(("expected output " + std::to_string(i)).c_str(), st);
      const std::string diff = compare(outputs[i], *want, a.rtol, a.atol);
      if (!diff.empty()) {
        std::printf("MISMATCH output %zu '%s': %s\n", i, output_names[i].c_str(), diff.c_str());
        ++bad;
      }
    }
    if (bad) return 3;
    std::printf("PASS %zu output(s) match\n", outputs.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (s == "--input") {
      const char* v = next();
      if (!v) return usage("--input needs NAME=FILE or NAME:DIMS");
      std::string arg = v;
      size_t eq = arg.find('='), colon = arg.rfind(':');
      if (eq != std::string::npos) {
        a.input_files[arg.substr(0, eq)] = arg.substr(eq + 1);
      } else if (colon != std::string::npos) {
        std::vector<int64_t> dims;
        std::string list = arg.substr(colon + 1);
        for (size_t p = 0; p < list.size();) {
          size_t q = list.find(',', p);
          char* end = nullptr;
          long long d = std::strtoll(list.c_str() + p, &end, 10);
          if (end == list.c_str() + p || d < 0) return usage("bad dims in --input");
          dims.push_back(d);
          if (q == std::string::npos) break;
          p = q + 1;
        }
        a.input_dims[arg.substr(0, colon)] = dims;
      } else {
        return usage("--input needs NAME=FILE or NAME:DIMS");
      }
    } else if (s == "--data") {
      const char* v = next();
      if (!v) return usage("--data needs a folder");
      a.data = v;
    } else if (s == "--check") {
      a.check = true;
    } else if (s == "--rtol" || s == "--atol") {
      const char* v = next();
      if (!v) return usage("--rtol/--atol need a number");
      (s == "--rtol" ? a.rtol : a.atol) = std::atof(v);
    } else if (s == "--plan") {
      a.plan = true;
    } else if (s == "--times") {
      a.times = true;
    } else if (s == "--repeat") {
      const char* v = next();
      if (!v || std::atoi(v) < 1) return usage("--repeat needs a positive count");
      a.repeat = std::atoi(v);
    } else if (s == "--no-fold") {
      a.fold = false;
    } else if (s == "--via-om") {
      a.via_om = true;
    } else if (s == "--seed") {
      const char* v = next();
      if (!v) return usage("--seed needs a number");
      a.seed = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    } else if (s == "--output-dir") {
      const char* v = next();
      if (!v) return usage("--output-dir needs a folder");
      a.output_dir = v;
    } else if (s == "--quiet") {
      a.quiet = true;
    } else if (s == "--count-allocs") {
      a.count_allocs = true;
    } else if (s == "-h" || s == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!s.empty() && s[0] == '-') {
      return usage(("unknown option " + s).c_str());
    } else if (a.model.empty()) {
      a.model = s;
    } else {
      return usage("more than one model given");
    }
  }
  if (a.model.empty()) return usage(nullptr);
  if (a.check && a.data.empty()) return usage("--check needs --data DIR");
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openacl-run: internal error: %s\n", e.what());
    return 1;
  }
}
