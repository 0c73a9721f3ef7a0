// atc: OpenACL's model compiler, with ATC's command line. Turns an ONNX model
// into our .om (src/model/om_format.h): import, the option edits
// (graph_edits.h), model::optimize(), then one compile per gear to prove each
// compiles and to record the planned work/weight bytes, then the file.
//
// Modes (--mode): 0 build; 1 model -> JSON (--om, --json); 3 check only
// (every unsupported node listed at once, no output file); 6 print model
// info (--om).
//
// Output: progress lines on stderr; a final line in ATC's words ("ATC run
// success" on stdout, "ATC run failed" on stderr after our detailed message).
// Exit status: 0 success, 1 failure (bad option, bad model, unsupported
// nodes, write error).
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/status.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_import.h"
#include "graph_edits.h"
#include "model/compiled_model.h"
#include "model/loaded_model.h"
#include "model/om_format.h"
#include "op/op_json.h"
#include "options.h"

#ifndef OPENACL_VERSION
#define OPENACL_VERSION "unknown"
#endif

namespace {

namespace fs = std::filesystem;
namespace graph = openacl::graph;
namespace model = openacl::model;
namespace op = openacl::op;
namespace atc = openacl::atc;
using openacl::Errorf;
using openacl::Status;
using openacl::strformat;
namespace code = openacl::code;

const char kUsage[] =
    "usage: atc --model=MODEL.onnx --framework=5 --output=NAME [options]   build NAME.om\n"
    "       atc --mode=3 --model=MODEL.onnx --framework=5 [options]         check only\n"
    "       atc --mode=1 --om=MODEL.om --json=OUT.json                      model to JSON\n"
    "       atc --mode=6 --om=MODEL.om                                      print model info\n"
    "       atc --singleop=ops.json --output=DIR                            single-op models for\n"
    "                                                                       acl.op.set_model_dir\n"
    "\n"
    "OpenACL's model compiler, with ATC's options (--name=value or --name value).\n"
    "\n"
    "  --model=FILE             the source model (ONNX)\n"
    "  --framework=N            5 = ONNX (Caffe 0, MindSpore 1 and TensorFlow 3 are not supported:\n"
    "                           export those models to ONNX)\n"
    "  --output=PATH            output file without .om (.om is appended); the folder must exist\n"
    "  --soc_version=NAME       recorded in the .om (the model runs on any machine OpenACL supports)\n"
    "  --input_shape=SHAPES     \"name:1,3,224,224;name2:1,10\": input shapes; -1 marks a gear dim\n"
    "                           (needs a --dynamic_* option), lo~hi a dim chosen at execution;\n"
    "                           inputs not listed keep their declared shapes\n"
    "  --input_format=FMT       NCHW, NHWC, ND or NCDHW, recorded for every input (default: NCHW\n"
    "                           for 4-D inputs, ND otherwise; ND with --dynamic_dims)\n"
    "  --dynamic_batch_size=B   \"1,2,4,8\": batch gears (-1 on axis 0 of --input_shape)\n"
    "  --dynamic_image_size=HW  \"112,112;224,224\": height,width gears (two -1 per image input)\n"
    "  --dynamic_dims=DIMS      \"4,224;8,224\": one value per -1 dim of --input_shape, per gear\n"
    "  --input_shape_range=R    \"name:[1~16,3,224,224]\": dims with a range (or -1) are left free,\n"
    "                           any size at execution (the bounds are not stored)\n"
    "  --out_nodes=OUTS         \"node:0;node2:1\": the model outputs become these node outputs\n"
    "  --output_type=T          FP32, FP16 or UINT8 for every floating-point output, or\n"
    "                           \"node:0:FP16;...\" per output (a Cast is added; names stay)\n"
    "  --input_fp16_nodes=INS   \"in1;in2\": these inputs are fed as float16 (a Cast to the model's\n"
    "                           type follows)\n"
    "  --precision_mode=MODE    force_fp16, allow_fp32_to_fp16, must_keep_origin_dtype,\n"
    "                           allow_mix_precision or force_fp32: recorded only; computation\n"
    "                           always keeps the source model's dtypes (no silent precision loss)\n"
    "  --pack_weights=BOOL      true (default): also store the weights packed for this machine's\n"
    "                           kernels, so the .om loads faster here (a larger file; a machine\n"
    "                           whose kernels want other layouts packs at load, as with false)\n"
    "  --log=LEVEL              debug, info, warning, error or null (OpenACL's log, on stderr)\n"
    "  --mode=N                 0 build (default), 1 model to JSON, 3 check only, 6 model info\n"
    "  --om=FILE --json=FILE    input and output of --mode=1; --om for --mode=6\n"
    "  --help, -h               this text\n"
    "  --version                the OpenACL version\n"
    "\n"
    "Not supported yet: --insert_op_conf (AIPP).\n"
    "Accepted and ignored (Ascend code-generation knobs): --op_select_implmode, --buffer_optimize,\n"
    "--enable_small_channel, --fusion_switch_file, --host_env_os, --host_env_cpu, --keep_dtype, ...\n"
    "See docs/atc.md.\n";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string human_bytes(uint64_t n) {
  if (n < 10 * 1024) return strformat("%llu B", static_cast<unsigned long long>(n));
  if (n < 10ull * 1024 * 1024) return strformat("%.1f KiB", n / 1024.0);
  if (n < 10ull * 1024 * 1024 * 1024) return strformat("%.1f MiB", n / (1024.0 * 1024));
  return strformat("%.2f GiB", n / (1024.0 * 1024 * 1024));
}

void progress(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::fputs("atc: ", stderr);
  std::vfprintf(stderr, fmt, args);
  std::fputc('\n', stderr);
  va_end(args);
}

int fail(const Status& st) {
  std::fprintf(stderr, "atc: error: %s\n", st.message().c_str());
  std::fputs("ATC run failed, Please check the detail log, Try 'atc --help' for more information\n", stderr);
  return 1;
}

int fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int fail(const char* fmt, ...) {
  char buf[4096];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return fail(Status(code::kInvalidParam, buf));
}

int succeed() {
  std::fflush(stderr);
  std::puts("ATC run success, welcome to the next use.");
  return 0;
}

Status read_file(const std::string& option, const std::string& path, std::string* out) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Errorf(code::kReadModelFailure, "--%s: file '%s' does not exist", option.c_str(), path.c_str());
  if (fs::is_directory(path, ec))
    return Errorf(code::kReadModelFailure, "--%s: '%s' is a folder; give the model file", option.c_str(),
                  path.c_str());
  std::ifstream f(path, std::ios::binary);
  if (!f) return Errorf(code::kReadModelFailure, "--%s: cannot open '%s' for reading", option.c_str(), path.c_str());
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (f.bad()) return Errorf(code::kReadModelFailure, "--%s: error reading '%s'", option.c_str(), path.c_str());
  return Status::Ok();
}

// The folder a file will be written into must exist (ATC does not create it).
Status check_output_folder(const std::string& option, const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    return Errorf(code::kWriteFile, "--%s: folder '%s' does not exist; create it first or choose another path",
                  option.c_str(), parent.string().c_str());
  if (fs::is_directory(path, ec))
    return Errorf(code::kWriteFile, "--%s: '%s' is a folder; give a file path", option.c_str(), path.c_str());
  return Status::Ok();
}

const char* format_word(int f) {
  switch (f) {
    case 0: return "NCHW";
    case 1: return "NHWC";
    case 2: return "ND";
    case 3: return "NC1HWC0";
    case 4: return "FRACTAL_Z";
    case 30: return "NCDHW";
    case -1: return "UNDEFINED";
    default: return "format";
  }
}

std::string format_str(int f) {
  std::string w = format_word(f);
  return w == "format" ? strformat("format(%d)", f) : w;
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

const char* gear_kind_name(model::GearKind k) {
  switch (k) {
    case model::GearKind::kBatch: return "dynamic batch size";
    case model::GearKind::kImageSize: return "dynamic image size (height,width)";
    case model::GearKind::kDims: return "dynamic dims";
    default: return "none";
  }
}

std::string gears_str(const model::GearSpec& g) {
  std::string s;
  for (size_t i = 0; i < g.gears.size(); ++i) {
    s += i ? "; " : "";
    for (size_t k = 0; k < g.gears[i].size(); ++k) s += (k ? "," : "") + std::to_string(g.gears[i][k]);
  }
  return s;
}

std::string positions_str(const model::GearSpec& g) {
  std::string s;
  for (const auto& p : g.positions) s += (s.empty() ? "" : ", ") + strformat("%s:%d", p.input.c_str(), p.axis);
  return s;
}

Status parse_framework(const atc::Options& opt) {
  if (!opt.has("framework"))
    return Errorf(code::kInvalidParam, "--framework is required: use --framework=5 for an ONNX model");
  const std::string f = opt.get("framework");
  int64_t v = -1;
  if (!atc::parse_int(f, &v)) v = -1;
  switch (v) {
    case 5: return Status::Ok();
    case 0:
    case 1:
    case 3: {
      const char* name = v == 0 ? "Caffe" : v == 1 ? "MindSpore" : "TensorFlow";
      return Errorf(code::kInvalidParam, "--framework=%s (%s) is not supported by OpenACL; export the model to "
                    "ONNX and use --framework=5", f.c_str(), name);
    }
    default:
      return Errorf(code::kInvalidParam, "--framework=%s is not a framework ATC knows (0 Caffe, 1 MindSpore, 3 "
                    "TensorFlow, 5 ONNX); OpenACL reads ONNX: --framework=5", f.c_str());
  }
}

Status parse_input_format(const atc::Options& opt, int* out) {
  *out = -1;
  if (!opt.has("input_format")) return Status::Ok();
  static const std::map<std::string, int> kFormats = {{"NCHW", 0}, {"NHWC", 1}, {"ND", 2}, {"NCDHW", 30}};
  auto it = kFormats.find(opt.get("input_format"));
  if (it == kFormats.end())
    return Errorf(code::kInvalidParam, "--input_format=%s is not supported; use NCHW, NHWC, ND or NCDHW",
                  opt.get("input_format").c_str());
  *out = it->second;
  return Status::Ok();
}

Status check_precision_mode(const atc::Options& opt) {
  if (!opt.has("precision_mode")) return Status::Ok();
  static const std::vector<std::string> kModes = {"force_fp16", "allow_fp32_to_fp16", "must_keep_origin_dtype",
                                                  "allow_mix_precision", "force_fp32"};
  const std::string m = opt.get("precision_mode");
  if (std::find(kModes.begin(), kModes.end(), m) != kModes.end()) return Status::Ok();
  return Errorf(code::kInvalidParam, "--precision_mode=%s is not a precision mode; use one of force_fp16, "
                "allow_fp32_to_fp16, must_keep_origin_dtype, allow_mix_precision, force_fp32 (did you mean %s?)",
                m.c_str(), atc::nearest_name(m, kModes).c_str());
}

Status apply_log_level(const atc::Options& opt) {
  if (!opt.has("log")) return Status::Ok();
  static const std::map<std::string, openacl::LogLevel> kLevels = {
      {"debug", openacl::LogLevel::kDebug},
      {"info", openacl::LogLevel::kInfo},
      {"warning", openacl::LogLevel::kWarning},
      {"error", openacl::LogLevel::kError},
      {"null", openacl::LogLevel::kOff}};
  auto it = kLevels.find(opt.get("log"));
  if (it == kLevels.end())
    return Errorf(code::kInvalidParam, "--log=%s is not a log level; use debug, info, warning, error or null",
                  opt.get("log").c_str());
  openacl::detail::g_log_threshold.store(static_cast<int>(it->second));
  return Status::Ok();
}

Status check_unsupported(const atc::Options& opt) {
  if (opt.has("insert_op_conf"))
    return Errorf(code::kFeatureUnsupported, "--insert_op_conf (AIPP) is not supported yet: do the image "
                  "preprocessing (crop, color conversion, normalisation) before feeding the model, or add it to the "
                  "ONNX model");
  return Status::Ok();
}

// Everything that ends as an optimised graph plus meta: modes 0 and 3.
struct Build {
  std::shared_ptr<graph::Graph> graph;
  model::OmMeta meta;
  std::string model_path;
};

Status import_and_optimize(const atc::Options& opt, Build* b) {
  OPENACL_RETURN_IF_ERROR(check_unsupported(opt));
  if (!opt.has("model"))
    return Errorf(code::kInvalidParam, "--model is required: the source model file, e.g. --model=resnet50.onnx");
  OPENACL_RETURN_IF_ERROR(parse_framework(opt));
  OPENACL_RETURN_IF_ERROR(check_precision_mode(opt));
  int user_format = -1;
  OPENACL_RETURN_IF_ERROR(parse_input_format(opt, &user_format));
  if (opt.has("weight"))
    return Errorf(code::kInvalidParam, "--weight is the weight file of a Caffe model; an ONNX model holds its "
                  "weights (or names its external data files); drop --weight");

  // Options first, so a typo costs no import time.
  std::vector<atc::ShapeArg> shapes, ranges;
  if (opt.has("input_shape")) OPENACL_RETURN_IF_ERROR(atc::parse_input_shape(opt.get("input_shape"), &shapes));
  if (opt.has("input_shape_range")) {
    if (opt.has("input_shape"))
      return Errorf(code::kInvalidParam, "--input_shape and --input_shape_range cannot be used together; put the "
                    "ranges into --input_shape (e.g. \"input:1~16,3,224,224\") or use --input_shape_range alone");
    OPENACL_RETURN_IF_ERROR(atc::parse_input_shape_range(opt.get("input_shape_range"), &ranges));
  }
  atc::GearArgs gear_args{opt.get("dynamic_batch_size"), opt.get("dynamic_image_size"), opt.get("dynamic_dims")};
  for (const char* name : {"dynamic_batch_size", "dynamic_image_size", "dynamic_dims"})
    if (opt.has(name) && opt.get(name).empty())
      return Errorf(code::kInvalidParam, "--%s is empty; give the gears, e.g. --dynamic_batch_size=\"1,2,4,8\"",
                    name);
  if (!ranges.empty() && (!gear_args.batch.empty() || !gear_args.image_size.empty() || !gear_args.dims.empty()))
    return Errorf(code::kInvalidParam, "--input_shape_range cannot be combined with --dynamic_batch_size, "
                  "--dynamic_image_size or --dynamic_dims; choose gears or ranges");
  model::GearSpec gears;
  OPENACL_RETURN_IF_ERROR(atc::build_gears(shapes, gear_args, &gears));
  std::vector<atc::OutNode> out_nodes;
  if (opt.has("out_nodes"))
    OPENACL_RETURN_IF_ERROR(atc::parse_out_nodes("out_nodes", opt.get("out_nodes"), &out_nodes));

  b->model_path = opt.get("model");
  std::string bytes;
  auto t0 = Clock::now();
  OPENACL_RETURN_IF_ERROR(read_file("model", b->model_path, &bytes));
  switch (model::sniff_format(bytes.data(), bytes.size())) {
    case model::ModelFormat::kOnnx: break;
    case model::ModelFormat::kOm:
      return Errorf(code::kInvalidParam, "--model: '%s' is already an OpenACL .om; load it directly, or give the "
                    "ONNX model it came from", b->model_path.c_str());
    case model::ModelFormat::kCannOm:
      return Errorf(code::kInvalidParam, "--model: '%s' is an .om built by CANN's ATC, which OpenACL cannot read; "
                    "build from the source model (ONNX) instead", b->model_path.c_str());
    default:
      return Errorf(code::kParseModel, "--model: '%s' is not an ONNX model (--framework=5 expects a serialized "
                    "ModelProto, usually a .onnx file)", b->model_path.c_str());
  }
  std::unique_ptr<graph::Graph> imported;
  graph::onnx::ImportOptions io;
  io.base_dir = fs::absolute(fs::path(b->model_path)).parent_path().string();
  Status st = graph::onnx::import_model(bytes.data(), bytes.size(), io, &imported);
  if (!st.ok()) return Status(st.code(), "importing '" + b->model_path + "': " + st.message());
  const size_t imported_nodes = imported->nodes().size();
  progress("import   %s: %zu nodes, %zu input(s), %zu output(s), %s, %.2f s", b->model_path.c_str(), imported_nodes,
           imported->inputs().size(), imported->outputs().size(), human_bytes(bytes.size()).c_str(),
           seconds_since(t0));
  bytes.clear();
  bytes.shrink_to_fit();

  graph::Graph& g = *imported;
  std::vector<std::string> notes;
  if (!shapes.empty()) OPENACL_RETURN_IF_ERROR(atc::apply_input_shapes(g, "input_shape", shapes));
  if (!ranges.empty()) OPENACL_RETURN_IF_ERROR(atc::apply_input_shapes(g, "input_shape_range", ranges));
  if (!out_nodes.empty()) OPENACL_RETURN_IF_ERROR(atc::set_out_nodes(g, out_nodes));
  if (opt.has("input_fp16_nodes")) OPENACL_RETURN_IF_ERROR(atc::set_input_fp16(g, opt.get("input_fp16_nodes"), &notes));
  if (opt.has("output_type")) OPENACL_RETURN_IF_ERROR(atc::set_output_types(g, opt.get("output_type"), &notes));
  if (opt.has("precision_mode") && opt.get("precision_mode") != "must_keep_origin_dtype")
    notes.push_back("--precision_mode=" + opt.get("precision_mode") +
                    " is recorded; OpenACL computes in the source model's dtypes");
  for (const std::string& n : opt.ignored) notes.push_back("--" + n + " has no effect here (ignored)");
  for (const std::string& n : notes) progress("note: %s", n.c_str());

  b->graph = std::shared_ptr<graph::Graph>(std::move(imported));
  t0 = Clock::now();
  st = model::optimize(b->graph, model::CompileOptions());
  if (!st.ok()) return Status(st.code(), "'" + b->model_path + "' cannot be converted: " + st.message());
  progress("optimize %zu -> %zu nodes, %.2f s", imported_nodes, b->graph->nodes().size(), seconds_since(t0));

  model::OmMeta& m = b->meta;
  m.producer = std::string("OpenACL ") + OPENACL_VERSION;
  m.build_command = opt.command_line;
  m.soc_version = opt.get("soc_version");
  m.precision_mode = opt.get("precision_mode");
  m.source = fs::path(b->model_path).filename().string();
  m.gears = gears;
  // Ranged dims ("lo~hi" in --input_shape, or --input_shape_range): the
  // bounds go into the .om; execution checks shapes against them.
  for (const std::vector<atc::ShapeArg>* list : {&shapes, &ranges})
    for (const atc::ShapeArg& sa : *list) {
      bool any = false;
      for (const atc::DimArg& d : sa.dims) any = any || d.free;
      if (!any) continue;
      std::vector<std::pair<int64_t, int64_t>> dims;
      for (const atc::DimArg& d : sa.dims) dims.emplace_back(d.free ? d.lo : d.value, d.free ? d.hi : d.value);
      m.input_ranges[sa.name] = std::move(dims);
    }
  for (const graph::Value* in : b->graph->inputs()) {
    int f = user_format;
    if (f < 0) {
      if (!gears.empty() && gears.kind == model::GearKind::kDims) f = model::kFormatND;
      else f = in->type.rank() == 4 ? model::kFormatNCHW : model::kFormatND;
    }
    m.input_formats[in->name] = f;
  }
  return Status::Ok();
}

// Compiles a fresh copy of the stored graph per gear (compile rewrites the
// graph it gets) and records the largest plan. Proves every gear compiles:
// shapes infer and a kernel exists for every node. With `packs`, the kernels
// are created too, and every weight they pack is returned (the PACKED
// section); without, kernels are only chosen.
Status plan_gears(const std::string& om_bytes, model::OmMeta* meta, std::vector<openacl::kernels::PackedBlob>* packs) {
  model::OmView view;
  OPENACL_RETURN_IF_ERROR(model::open_om(om_bytes.data(), om_bytes.size(), &view));
  openacl::kernels::PackCache recorder(openacl::kernels::PackCache::Mode::kRecord, view.weights, view.weight_bytes);
  const model::GearSpec& gears = meta->gears;
  const size_t count = gears.empty() ? 1 : gears.gears.size();
  uint64_t work = 0;
  bool any_dynamic = false;
  for (size_t i = 0; i < count; ++i) {
    auto t0 = Clock::now();
    std::shared_ptr<graph::Graph> copy;
    OPENACL_RETURN_IF_ERROR(model::decode_graph(view, view.weights, nullptr, &copy));
    model::CompileOptions options;
    options.create_kernels = packs != nullptr;
    options.packs = packs ? &recorder : nullptr;
    std::string label = "model";
    if (!gears.empty()) {
      std::string values;
      for (int64_t v : gears.gears[i]) values += (values.empty() ? "" : ",") + std::to_string(v);
      label = strformat("gear %zu/%zu (%s)", i + 1, count, values.c_str());
      OPENACL_RETURN_IF_ERROR(gears.input_shapes(i, *copy, &options.input_shapes));
    }
    std::unique_ptr<model::CompiledModel> compiled;
    Status st = model::CompiledModel::compile(copy, options, &compiled);
    if (!st.ok()) return Status(st.code(), label + " does not compile: " + st.message());
    if (compiled->is_static()) {
      work = std::max<uint64_t>(work, compiled->plan().work_size);
      progress("compile  %s: work %s, %.2f s", label.c_str(), human_bytes(compiled->plan().work_size).c_str(),
               seconds_since(t0));
    } else {
      any_dynamic = true;
      progress("compile  %s: shapes resolved at execution (no static plan), %.2f s", label.c_str(), seconds_since(t0));
    }
  }
  // A model whose shapes are only known at execution has no work size to
  // promise. The weights are the stored constants, placed as they are at load
  // (what aclmdlQuerySize reports).
  meta->work_size = any_dynamic ? 0 : work;
  meta->weight_size = view.weight_bytes;
  if (packs) *packs = recorder.recorded();
  return Status::Ok();
}

int mode_build(const atc::Options& opt, bool check_only) {
  if (!check_only && !opt.has("output"))
    return fail("--output is required: the path of the .om without the extension, e.g. --output=out/resnet50");
  std::string out_path;
  if (!check_only) {
    out_path = opt.get("output");
    if (out_path.empty()) return fail("--output is empty; give the path of the .om without the extension");
    if (out_path.back() == '/' || fs::path(out_path).filename() == "." || fs::path(out_path).filename() == "..") {
      std::string folder = out_path;
      while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
      return fail("--output=%s names a folder; give the file name too, without .om (e.g. %s/model)", out_path.c_str(),
                  folder.c_str());
    }
    // ATC appends .om; a path that already ends so is taken as meant.
    if (out_path.size() < 3 || out_path.compare(out_path.size() - 3, 3, ".om") != 0) out_path += ".om";
    Status st = check_output_folder("output", out_path);
    if (!st.ok()) return fail(st);
  }
  std::fputs("ATC start working now, please wait for a moment.\n", stderr);
  Build b;
  Status st = import_and_optimize(opt, &b);
  if (!st.ok()) {
    if (check_only) std::fprintf(stderr, "atc: check failed\n");
    return fail(st);
  }
  if (check_only) {
    progress("check passed: every node of '%s' is supported (%zu nodes after optimisation)", b.model_path.c_str(),
             b.graph->nodes().size());
    return succeed();
  }
  model::OmModel om;
  om.meta = b.meta;
  om.graph = b.graph;
  std::string bytes;
  st = model::write_om(om, &bytes);
  if (!st.ok()) return fail(st);
  bool pack = true;
  if (opt.has("pack_weights")) {
    const std::string v = opt.get("pack_weights");
    if (v == "false" || v == "0") pack = false;
    else if (v != "true" && v != "1")
      return fail(Errorf(code::kInvalidParam, "--pack_weights=%s: give true or false", v.c_str()));
  }
  st = plan_gears(bytes, &om.meta, pack ? &om.packs : nullptr);
  if (!st.ok()) return fail(st);
  if (pack) {
    uint64_t packed = 0;
    for (const auto& p : om.packs) packed += p.bytes;
    progress("pack     %zu weights packed for this machine's kernels: %s", om.packs.size(), human_bytes(packed).c_str());
  }
  bytes.clear();
  auto t0 = Clock::now();
  st = model::write_om_file(om, out_path);
  if (!st.ok()) return fail(st);
  std::error_code ec;
  const auto size = fs::file_size(out_path, ec);
  progress("write    %s: %s (work %s, weights %s%s), %.2f s", out_path.c_str(), human_bytes(ec ? 0 : size).c_str(),
           human_bytes(om.meta.work_size).c_str(), human_bytes(om.meta.weight_size).c_str(),
           om.meta.gears.empty() ? "" : ", largest gear", seconds_since(t0));
  return succeed();
}

// --singleop=ops.json --output=DIR: one single-op .om per op of the list,
// named <index>_<op type>.om, for aclopSetModelDir / acl.op.set_model_dir.
int mode_singleop(const atc::Options& opt) {
  if (opt.has("model"))
    return fail("--singleop and --model do not go together: --singleop builds operators described in JSON, --model "
                "builds a model");
  if (!opt.has("output") || opt.get("output").empty())
    return fail("--output is required with --singleop: the folder the single-op .om files go to (it must exist)");
  const std::string dir = opt.get("output");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail("--output=%s: with --singleop, --output is a folder, and it does not exist; create it first",
                dir.c_str());
  std::string text;
  Status st = read_file("singleop", opt.get("singleop"), &text);
  if (!st.ok()) return fail(st);
  std::vector<op::OpCall> calls;
  st = op::parse_ops_json(text, &calls);
  if (!st.ok()) return fail(st);
  std::fputs("ATC start working now, please wait for a moment.\n", stderr);
  // Every op is tried, and every failure listed, before failing.
  std::vector<std::string> problems;
  for (size_t i = 0; i < calls.size(); ++i) {
    std::string bytes;
    st = op::write_op_om(calls[i], opt.command_line, &bytes);
    if (!st.ok()) {
      problems.push_back(strformat("op %zu (%s): %s", i, calls[i].type.c_str(), st.message().c_str()));
      continue;
    }
    const std::string path = (fs::path(dir) / strformat("%zu_%s.om", i, calls[i].type.c_str())).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      problems.push_back(strformat("op %zu (%s): cannot write %s", i, calls[i].type.c_str(), path.c_str()));
      continue;
    }
    progress("write    %s: %s", path.c_str(),
             op::describe_call(calls[i].type, calls[i].inputs, calls[i].outputs, calls[i].attrs).c_str());
  }
  if (!problems.empty()) {
    std::string all = strformat("%zu of %zu op(s) cannot be built:", problems.size(), calls.size());
    for (const std::string& p : problems) all += "\n  " + p;
    return fail(Status(code::kInvalidParam, all));
  }
  return succeed();
}

int mode_json(const atc::Options& opt) {
  Status st = check_unsupported(opt);
  if (!st.ok()) return fail(st);
  if (!opt.has("om")) return fail("--mode=1 needs --om=MODEL (an .om or ONNX file) and --json=OUT.json");
  if (!opt.has("json")) return fail("--mode=1 needs --json=OUT.json, the file to write");
  st = check_output_folder("json", opt.get("json"));
  if (!st.ok()) return fail(st);
  std::string bytes;
  st = read_file("om", opt.get("om"), &bytes);
  if (!st.ok()) return fail(st);
  model::OmModel om;
  const std::string base_dir = fs::absolute(fs::path(opt.get("om"))).parent_path().string();
  st = model::read_model(bytes.data(), bytes.size(), base_dir, &om);
  if (!st.ok()) return fail(Status(st.code(), "reading '" + opt.get("om") + "': " + st.message()));
  const std::string json = model::om_to_json(om);
  std::ofstream f(opt.get("json"), std::ios::binary | std::ios::trunc);
  if (f) f.write(json.data(), static_cast<std::streamsize>(json.size()));
  if (!f || !f.good())
    return fail(Status(code::kWriteFile, "--json: cannot write '" + opt.get("json") + "'"));
  progress("json     %s: %s", opt.get("json").c_str(), human_bytes(json.size()).c_str());
  return succeed();
}

void print_io(const char* what, const std::vector<model::IoInfo>& ios) {
  std::printf("%s (%zu):\n", what, ios.size());
  for (size_t i = 0; i < ios.size(); ++i) {
    const model::IoInfo& io = ios[i];
    std::string range;
    if (io.ranged) {
      range = ", range [";
      for (size_t a = 0; a < io.ranges.size(); ++a) {
        const auto [lo, hi] = io.ranges[a];
        range += (a ? "," : "") + (lo == hi ? std::to_string(lo) : std::to_string(lo) + "~" + std::to_string(hi));
      }
      range += "]";
    }
    std::printf("  [%zu] %s: %s %s%s, format %s, %s\n", i, io.name.c_str(), graph::dtype_name(io.dtype),
                dims_str(io.dims).c_str(), range.c_str(), format_str(io.format).c_str(),
                io.bytes ? strformat("%zu bytes", io.bytes).c_str() : "size known at execution");
  }
}

int mode_info(const atc::Options& opt) {
  if (!opt.has("om")) return fail("--mode=6 needs --om=MODEL.om");
  const std::string path = opt.get("om");
  std::string bytes;
  Status st = read_file("om", path, &bytes);
  if (!st.ok()) return fail(st);
  const model::ModelFormat format = model::sniff_format(bytes.data(), bytes.size());
  const std::string base_dir = fs::absolute(fs::path(path)).parent_path().string();
  model::ModelInfo info;
  st = model::describe(bytes.data(), bytes.size(), base_dir, &info);
  if (!st.ok()) return fail(Status(st.code(), "reading '" + path + "': " + st.message()));
  std::printf("model: %s (%s, %zu bytes)\n", path.c_str(), model::format_name(format), bytes.size());
  if (format == model::ModelFormat::kOm) {
    model::OmView view;
    st = model::open_om(bytes.data(), bytes.size(), &view);
    if (!st.ok()) return fail(st);
    const model::OmMeta& m = view.meta;
    std::printf("producer: %s\n", m.producer.c_str());
    std::printf("source: %s\n", m.source.c_str());
    std::printf("build command: %s\n", m.build_command.c_str());
    if (!m.single_op.empty()) {
      op::OpCall call;
      if (op::op_call_from_json(m.single_op, &call).ok())
        std::printf("single op: %s\n", op::describe_call(call.type, call.inputs, call.outputs, call.attrs).c_str());
    }
    std::printf("soc_version: %s\n", m.soc_version.empty() ? "(not given)" : m.soc_version.c_str());
    std::printf("precision_mode: %s (computation keeps the source dtypes)\n",
                m.precision_mode.empty() ? "(not given)" : m.precision_mode.c_str());
    std::printf("planned at build: work %llu bytes, weights %llu bytes\n",
                static_cast<unsigned long long>(m.work_size), static_cast<unsigned long long>(m.weight_size));
    size_t packed = 0;
    for (const auto& b : view.packed) packed += b.bytes;
    if (view.packed.empty())
      std::printf("packed weights: none (every weight is packed at load)\n");
    else
      std::printf("packed weights: %zu blobs, %zu bytes (used at load where this machine's kernels want their "
                  "layouts)\n", view.packed.size(), packed);
  }
  if (!info.name.empty()) std::printf("graph: %s\n", info.name.c_str());
  print_io("inputs", info.inputs);
  print_io("outputs", info.outputs);
  if (info.gears.empty()) {
    std::printf("gears: none%s\n", info.dynamic ? " (some input dims are chosen at execution)" : "");
  } else {
    std::printf("gears: %s, %zu gears: %s\n", gear_kind_name(info.gears.kind), info.gears.gears.size(),
                gears_str(info.gears).c_str());
    std::printf("gear dims: %s\n", positions_str(info.gears).c_str());
  }
  std::printf("work size: %zu bytes%s\n", info.work_size, info.work_size ? "" : " (known at execution)");
  std::printf("weight size: %zu bytes\n", info.weight_size);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  atc::Options opt;
  Status st = atc::parse_args(argc, argv, &opt);
  if (!st.ok()) return fail(st);
  if (opt.help || argc == 1) {
    std::fputs(kUsage, argc == 1 ? stderr : stdout);
    return argc == 1 ? 1 : 0;
  }
  if (opt.version) {
    std::printf("atc (OpenACL) %s\n", OPENACL_VERSION);
    return 0;
  }
  st = apply_log_level(opt);
  if (!st.ok()) return fail(st);
  int64_t mode = 0;
  if (opt.has("mode") && !atc::parse_int(opt.get("mode"), &mode)) mode = -1;
  if (opt.has("singleop")) {
    if (mode != 0) return fail("--singleop builds single-op models: use it with --mode=0 (the default)");
    return mode_singleop(opt);
  }
  switch (mode) {
    case 0: return mode_build(opt, /*check_only=*/false);
    case 1: return mode_json(opt);
    case 3: return mode_build(opt, /*check_only=*/true);
    case 6: return mode_info(opt);
    default:
      return fail("--mode=%s is not supported; modes: 0 (build the .om), 1 (model to JSON), 3 (check only), 6 "
                  "(print model info)", opt.get("mode").c_str());
  }
}
