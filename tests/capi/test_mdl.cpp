/*
 * The model API (acl_mdl.h) through the C entry points: loads of every variant
 * from ONNX and .om bytes, size queries and user memory, load configs, descs,
 * datasets, sync and async execution, gears, errors and concurrency.
 * Contract: include/acl/acl_mdl.h; spec/pyacl-api.md §3; compat-notes §1.
 */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_mdl_util.h"
#include "test_util.h"

namespace {

using acltest::Contains;
using acltest::RecentErrMsg;
using acltest::TempFile;

/* Device memory, freed at scope exit. */
class DevMem {
 public:
    explicit DevMem(size_t size) : size_(size) {
        if (size > 0 && aclrtMalloc(&ptr_, size, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) ptr_ = nullptr;
    }
    ~DevMem() {
        if (ptr_ != nullptr) aclrtFree(ptr_);
    }
    DevMem(const DevMem &) = delete;
    DevMem &operator=(const DevMem &) = delete;
    void *get() const { return ptr_; }
    size_t size() const { return size_; }
    void Put(const void *src, size_t n) const {
        EXPECT_EQ(aclrtMemcpy(ptr_, size_, src, n, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    }
    void Get(void *dst, size_t n) const {
        EXPECT_EQ(aclrtMemcpy(dst, n, ptr_, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    }

 private:
    void *ptr_ = nullptr;
    size_t size_;
};

/* A dataset and the data buffers made for it (destroyed at scope exit; the
 * memory they point to is the caller's). */
class Dataset {
 public:
    Dataset() : ds_(aclmdlCreateDataset()) { EXPECT_NE(ds_, nullptr); }
    ~Dataset() {
        if (ds_ != nullptr) aclmdlDestroyDataset(ds_);
        for (aclDataBuffer *b : buffers_) aclDestroyDataBuffer(b);
    }
    Dataset(const Dataset &) = delete;
    Dataset &operator=(const Dataset &) = delete;
    Dataset &Add(void *data, size_t size) {
        aclDataBuffer *b = aclCreateDataBuffer(data, size);
        EXPECT_NE(b, nullptr);
        buffers_.push_back(b);
        EXPECT_EQ(aclmdlAddDatasetBuffer(ds_, b), ACL_SUCCESS);
        return *this;
    }
    Dataset &Add(const DevMem &m) { return Add(m.get(), m.size()); }
    aclmdlDataset *get() const { return ds_; }
    aclDataBuffer *buffer(size_t i) const { return buffers_[i]; }
    /* Destroys the dataset only; its buffers stay until scope exit. */
    void DestroyDataset() {
        EXPECT_EQ(aclmdlDestroyDataset(ds_), ACL_SUCCESS);
        ds_ = nullptr;
    }

 private:
    aclmdlDataset *ds_;
    std::vector<aclDataBuffer *> buffers_;
};

const float kX[6] = {1, -2, 3, 0.5f, -0.25f, 4};
const float kB[3] = {2, -1, 0.5f};

/* Device buffers for one run of the AddRelu model. */
struct AddReluIo {
    DevMem x{sizeof kX}, b{sizeof kB}, y{6 * sizeof(float)}, z{6 * sizeof(float)};
    Dataset in, out;
    AddReluIo() {
        x.Put(kX, sizeof kX);
        b.Put(kB, sizeof kB);
        in.Add(x).Add(b);
        out.Add(y).Add(z);
    }
    /* Compares y and z with the reference. */
    void Check() const {
        float y_ref[6], z_ref[6], y_got[6], z_got[6];
        mdltest::AddReluReference(kX, kB, y_ref, z_ref);
        y.Get(y_got, sizeof y_got);
        z.Get(z_got, sizeof z_got);
        for (int i = 0; i < 6; ++i) {
            EXPECT_FLOAT_EQ(y_got[i], y_ref[i]) << "y[" << i << "]";
            EXPECT_FLOAT_EQ(z_got[i], z_ref[i]) << "z[" << i << "]";
        }
    }
};

class MdlTest : public acltest::DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        onnx_ = mdltest::AddReluOnnx();
    }
    uint32_t LoadMem(const std::string &bytes) {
        uint32_t id = 0;
        EXPECT_EQ(aclmdlLoadFromMem(bytes.data(), bytes.size(), &id), ACL_SUCCESS) << RecentErrMsg();
        return id;
    }
    std::string onnx_;
};

/* ------------------------------------------------------------------ loading */

TEST_F(MdlTest, LoadFromFileExecuteUnload) {
    TempFile file(onnx_, ".onnx");
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromFile(file.path(), &id), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_GE(id, 1u);
    AddReluIo io;
    ASSERT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
    io.Check();
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, LoadFromMemAndIdsAreNeverReused) {
    uint32_t a = LoadMem(onnx_);
    uint32_t b = LoadMem(onnx_);
    EXPECT_NE(a, b);
    EXPECT_EQ(aclmdlUnload(a), ACL_SUCCESS);
    uint32_t c = LoadMem(onnx_);
    EXPECT_NE(c, a);
    EXPECT_NE(c, b);
    AddReluIo io;
    ASSERT_EQ(aclmdlExecute(c, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
    io.Check();
    EXPECT_EQ(aclmdlUnload(b), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(c), ACL_SUCCESS);
}

TEST_F(MdlTest, FormatIsSniffedNotTakenFromTheName) {
    TempFile file(onnx_, ".om");  // an ONNX file named like an offline model
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromFile(file.path(), &id), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, OmFromMemAndFile) {
    std::string err;
    std::string om = mdltest::AddConstOm(2, {}, &err);
    ASSERT_FALSE(om.empty()) << err;
    TempFile file(om, ".om");
    uint32_t ids[2] = {0, 0};
    ASSERT_EQ(aclmdlLoadFromMem(om.data(), om.size(), &ids[0]), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlLoadFromFile(file.path(), &ids[1]), ACL_SUCCESS) << RecentErrMsg();
    const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (uint32_t id : ids) {
        DevMem dx(sizeof x), dy(sizeof x);
        dx.Put(x, sizeof x);
        Dataset in, out;
        in.Add(dx);
        out.Add(dy);
        ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
        float y[8];
        dy.Get(y, sizeof y);
        for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + static_cast<float>(i % 4 + 1)) << i;
        EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    }
}

TEST_F(MdlTest, QuerySizeThenLoadWithUserMemory) {
    TempFile file(onnx_, ".onnx");
    size_t work = 0, weight = 0, work_mem = 0, weight_mem = 0;
    ASSERT_EQ(aclmdlQuerySize(file.path(), &work, &weight), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlQuerySizeFromMem(onnx_.data(), onnx_.size(), &work_mem, &weight_mem), ACL_SUCCESS);
    EXPECT_EQ(work, work_mem);
    EXPECT_EQ(weight, weight_mem);
    EXPECT_GE(weight, sizeof(float) * 6);  // W at least

    // System-memory load: the reference results.
    uint32_t plain = LoadMem(onnx_);
    AddReluIo ref;
    ASSERT_EQ(aclmdlExecute(plain, ref.in.get(), ref.out.get()), ACL_SUCCESS) << RecentErrMsg();
    ref.Check();

    DevMem work_a(work > 0 ? work : 64), weight_a(weight), work_b(work > 0 ? work : 64), weight_b(weight);
    ASSERT_NE(weight_a.get(), nullptr);
    uint32_t from_file = 0, from_mem = 0;
    ASSERT_EQ(aclmdlLoadFromFileWithMem(file.path(), &from_file, work_a.get(), work_a.size(), weight_a.get(), weight),
              ACL_SUCCESS)
        << RecentErrMsg();
    ASSERT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &from_mem, work_b.get(), work_b.size(),
                                       weight_b.get(), weight),
              ACL_SUCCESS)
        << RecentErrMsg();
    // The weights were placed in the caller's weight memory.
    std::vector<uint8_t> placed(weight);
    weight_a.Get(placed.data(), weight);
    bool found_w = false;
    for (size_t off = 0; off + 24 <= weight && !found_w; off += 4)
        found_w = std::memcmp(placed.data() + off, mdltest::WeightW().data(), 24) == 0;
    EXPECT_TRUE(found_w) << "W not found in the user weight memory";

    for (uint32_t id : {from_file, from_mem}) {
        AddReluIo io;
        ASSERT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
        io.Check();
    }
    // NULL regions: the library allocates them.
    uint32_t half = 0;
    ASSERT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &half, nullptr, 0, nullptr, 0), ACL_SUCCESS)
        << RecentErrMsg();
    for (uint32_t id : {plain, from_file, from_mem, half}) EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, UserMemoryTooSmallOrNotDeviceMemory) {
    size_t work = 0, weight = 0;
    ASSERT_EQ(aclmdlQuerySizeFromMem(onnx_.data(), onnx_.size(), &work, &weight), ACL_SUCCESS);
    ASSERT_GT(weight, 1u);
    DevMem small(weight - 1);
    uint32_t id = 0;
    (void)RecentErrMsg();
    EXPECT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &id, nullptr, 0, small.get(), weight - 1),
              ACL_ERROR_INVALID_PARAM);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, std::to_string(weight - 1)) && Contains(msg, std::to_string(weight))) << msg;
    EXPECT_TRUE(Contains(msg, "aclmdlLoadFromMemWithMem")) << msg;

    // A size larger than the block that holds the pointer.
    DevMem block(weight);
    EXPECT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &id, nullptr, 0, block.get(), weight + 4096),
              ACL_ERROR_INVALID_PARAM);

    // Host memory is not device memory.
    std::vector<uint8_t> host(weight + 64);
    EXPECT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &id, nullptr, 0, host.data(), host.size()),
              ACL_ERROR_INVALID_PARAM);
    void *pinned = nullptr;
    ASSERT_EQ(aclrtMallocHost(&pinned, weight + 64), ACL_SUCCESS);
    EXPECT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &id, nullptr, 0, pinned, weight + 64),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclrtMalloc"));
    aclrtFreeHost(pinned);

    if (work > 0) {
        DevMem small_work(work - 1 > 0 ? work - 1 : 1);
        EXPECT_EQ(aclmdlLoadFromMemWithMem(onnx_.data(), onnx_.size(), &id, small_work.get(), work - 1, nullptr, 0),
                  ACL_ERROR_INVALID_PARAM);
        msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "work memory")) << msg;
        EXPECT_TRUE(Contains(msg, std::to_string(work))) << msg;
    }
}

TEST_F(MdlTest, LoadWithConfigEveryVariant) {
    TempFile file(onnx_, ".onnx");
    size_t work = 0, weight = 0;
    ASSERT_EQ(aclmdlQuerySizeFromMem(onnx_.data(), onnx_.size(), &work, &weight), ACL_SUCCESS);
    DevMem work_mem(work > 0 ? work : 64), weight_mem(weight);
    size_t work_size = work_mem.size();
    std::vector<uint32_t> ids;
    for (size_t type : {ACL_MDL_LOAD_FROM_FILE, ACL_MDL_LOAD_FROM_FILE_WITH_MEM, ACL_MDL_LOAD_FROM_MEM,
                        ACL_MDL_LOAD_FROM_MEM_WITH_MEM}) {
        aclmdlConfigHandle *h = aclmdlCreateConfigHandle();
        ASSERT_NE(h, nullptr);
        ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type), ACL_SUCCESS) << RecentErrMsg();
        int32_t priority = 1;
        EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_PRIORITY_INT32, &priority, sizeof priority), ACL_SUCCESS);
        {
            // The path is copied at set time: the caller's string may go away.
            std::string path = file.path();
            const char *p = path.c_str();
            ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_PATH_PTR, &p, sizeof p), ACL_SUCCESS);
            path.assign(path.size(), 'X');
        }
        const void *mem = onnx_.data();
        size_t mem_size = onnx_.size();
        ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_MEM_ADDR_PTR, &mem, sizeof mem), ACL_SUCCESS);
        ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_MEM_SIZET, &mem_size, sizeof mem_size), ACL_SUCCESS);
        if (type == ACL_MDL_LOAD_FROM_FILE_WITH_MEM || type == ACL_MDL_LOAD_FROM_MEM_WITH_MEM) {
            void *wp = weight_mem.get();
            void *kp = work_mem.get();
            ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_WEIGHT_ADDR_PTR, &wp, sizeof wp), ACL_SUCCESS);
            ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_WEIGHT_SIZET, &weight, sizeof weight), ACL_SUCCESS);
            ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_WORKSPACE_ADDR_PTR, &kp, sizeof kp), ACL_SUCCESS);
            ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_WORKSPACE_SIZET, &work_size, sizeof work_size), ACL_SUCCESS);
        }
        uint32_t id = 0;
        ASSERT_EQ(aclmdlLoadWithConfig(h, &id), ACL_SUCCESS) << "type " << type << ": " << RecentErrMsg();
        ids.push_back(id);
        EXPECT_EQ(aclmdlDestroyConfigHandle(h), ACL_SUCCESS);
        // Two WithMem loads would share one weight region; unload each before the next.
        AddReluIo io;
        ASSERT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
        io.Check();
        EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    }
}

TEST_F(MdlTest, ConfigHandleErrors) {
    aclmdlConfigHandle *h = aclmdlCreateConfigHandle();
    ASSERT_NE(h, nullptr);
    uint32_t id = 0;
    // No load type yet.
    EXPECT_EQ(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "ACL_MDL_LOAD_TYPE_SIZET"));
    size_t type = ACL_MDL_LOAD_FROM_FILE;
    // valueSize checked per attribute.
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, 4), ACL_ERROR_INVALID_PARAM);
    int32_t prio = 0;
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_PRIORITY_INT32, &prio, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, nullptr, sizeof type), ACL_ERROR_INVALID_PARAM);
    // Queue-fed models are not supported.
    size_t q = 1;
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_INPUTQ_NUM_SIZET, &q, sizeof q), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "queue"));
    size_t qtype = ACL_MDL_LOAD_FROM_FILE_WITH_Q;
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &qtype, sizeof qtype), ACL_ERROR_API_NOT_SUPPORT);
    size_t bad_type = 9;
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &bad_type, sizeof bad_type), ACL_ERROR_INVALID_PARAM);
    // A file load without a path.
    ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type), ACL_SUCCESS);
    EXPECT_EQ(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "ACL_MDL_PATH_PTR"));
    const char *null_path = nullptr;
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_PATH_PTR, &null_path, sizeof null_path), ACL_ERROR_INVALID_PARAM);
    // A memory load without the bytes.
    type = ACL_MDL_LOAD_FROM_MEM;
    ASSERT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type), ACL_SUCCESS);
    EXPECT_EQ(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "ACL_MDL_MEM_ADDR_PTR"));
    EXPECT_EQ(aclmdlDestroyConfigHandle(h), ACL_SUCCESS);
    EXPECT_EQ(aclmdlDestroyConfigHandle(h), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof type), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlDestroyConfigHandle(nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST_F(MdlTest, LoadErrors) {
    uint32_t id = 0;
    // Missing file: 100003 naming the path.
    (void)RecentErrMsg();
    EXPECT_EQ(aclmdlLoadFromFile("/nonexistent/dir/model.om", &id), ACL_ERROR_INVALID_FILE);
    EXPECT_TRUE(Contains(RecentErrMsg(), "/nonexistent/dir/model.om"));
    EXPECT_EQ(aclmdlLoadFromFile("/tmp", &id), ACL_ERROR_INVALID_FILE);
    size_t w = 0, g = 0;
    EXPECT_EQ(aclmdlQuerySize("/nonexistent/x.onnx", &w, &g), ACL_ERROR_INVALID_FILE);
    EXPECT_EQ(aclmdlLoadFromFile(nullptr, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlLoadFromMem(nullptr, 10, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlLoadFromMem(onnx_.data(), 0, &id), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlLoadFromMem(onnx_.data(), onnx_.size(), nullptr), ACL_ERROR_INVALID_PARAM);

    // A CANN-built .om: refused with a message on how to rebuild it.
    std::string cann(512, '\0');
    const uint32_t magic = 0x444F4D49;
    std::memcpy(cann.data(), &magic, sizeof magic);
    EXPECT_EQ(aclmdlLoadFromMem(cann.data(), cann.size(), &id), ACL_ERROR_DESERIALIZE_MODEL);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "atc")) << msg;
    TempFile cann_file(cann, ".om");
    EXPECT_EQ(aclmdlLoadFromFile(cann_file.path(), &id), ACL_ERROR_DESERIALIZE_MODEL);

    // Random bytes: a model error, never a crash.
    std::mt19937 rng(7);
    for (int round = 0; round < 20; ++round) {
        std::string junk(static_cast<size_t>(1 + rng() % 2000), '\0');
        for (char &c : junk) c = static_cast<char>(rng());
        aclError r = aclmdlLoadFromMem(junk.data(), junk.size(), &id);
        EXPECT_TRUE(r == ACL_ERROR_PARSE_MODEL || r == ACL_ERROR_DESERIALIZE_MODEL || r == ACL_ERROR_INVALID_PARAM ||
                    r == ACL_ERROR_MODEL_SIZE_INVALID)
            << "round " << round << ": " << r << " " << RecentErrMsg();
        if (r == ACL_SUCCESS) aclmdlUnload(id);
    }
    // A truncated model.
    EXPECT_NE(aclmdlLoadFromMem(onnx_.data(), onnx_.size() / 2, &id), ACL_SUCCESS);
}

TEST(MdlNoDevice, LoadNeedsInitAndAContext) {
    std::string onnx = mdltest::AddReluOnnx();
    uint32_t id = 0;
    EXPECT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_ERROR_UNINITIALIZE);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    // Run in a fresh thread: no aclrtSetDevice there.
    aclError r = ACL_SUCCESS;
    std::string msg;
    std::thread t([&] {
        r = aclmdlLoadFromMem(onnx.data(), onnx.size(), &id);
        msg = RecentErrMsg();
    });
    t.join();
    EXPECT_EQ(r, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_TRUE(Contains(msg, "aclrtSetDevice")) << msg;
    aclFinalize();
}

/* ------------------------------------------------------------------ descriptions */

TEST_F(MdlTest, DescDescribesTheModel) {
    uint32_t id = LoadMem(onnx_);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_NE(desc, nullptr);
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlGetNumInputs(desc), 2u);
    ASSERT_EQ(aclmdlGetNumOutputs(desc), 2u);
    EXPECT_EQ(aclmdlGetInputSizeByIndex(desc, 0), 24u);
    EXPECT_EQ(aclmdlGetInputSizeByIndex(desc, 1), 12u);
    EXPECT_EQ(aclmdlGetOutputSizeByIndex(desc, 0), 24u);
    EXPECT_EQ(aclmdlGetOutputSizeByIndex(desc, 1), 24u);
    EXPECT_STREQ(aclmdlGetInputNameByIndex(desc, 0), "x");
    EXPECT_STREQ(aclmdlGetInputNameByIndex(desc, 1), "b");
    EXPECT_STREQ(aclmdlGetOutputNameByIndex(desc, 0), "y");
    EXPECT_STREQ(aclmdlGetOutputNameByIndex(desc, 1), "z");
    EXPECT_EQ(aclmdlGetInputDataType(desc, 0), ACL_FLOAT);
    EXPECT_EQ(aclmdlGetOutputDataType(desc, 1), ACL_FLOAT);
    EXPECT_EQ(aclmdlGetInputFormat(desc, 0), ACL_FORMAT_ND);
    EXPECT_EQ(aclmdlGetOutputFormat(desc, 0), ACL_FORMAT_ND);

    aclmdlIODims dims;
    std::memset(&dims, 0x5A, sizeof dims);
    ASSERT_EQ(aclmdlGetInputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_STREQ(dims.name, "x");
    ASSERT_EQ(dims.dimCount, 2u);
    EXPECT_EQ(dims.dims[0], 2);
    EXPECT_EQ(dims.dims[1], 3);
    ASSERT_EQ(aclmdlGetInputDimsV2(desc, 1, &dims), ACL_SUCCESS);
    EXPECT_STREQ(dims.name, "b");
    ASSERT_EQ(dims.dimCount, 1u);
    EXPECT_EQ(dims.dims[0], 3);
    ASSERT_EQ(aclmdlGetOutputDims(desc, 1, &dims), ACL_SUCCESS);
    EXPECT_STREQ(dims.name, "z");
    EXPECT_EQ(dims.dimCount, 2u);
    ASSERT_EQ(aclmdlGetCurOutputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_STREQ(dims.name, "y");
    EXPECT_EQ(dims.dims[0], 2);
    aclmdlIODimsRange range;
    ASSERT_EQ(aclmdlGetInputDimsRange(desc, 0, &range), ACL_SUCCESS);
    ASSERT_EQ(range.rangeCount, 2u);
    EXPECT_EQ(range.range[0][0], 2);
    EXPECT_EQ(range.range[0][1], 2);
    EXPECT_EQ(range.range[1][0], 3);
    EXPECT_EQ(range.range[1][1], 3);

    size_t index = 99;
    EXPECT_EQ(aclmdlGetInputIndexByName(desc, "b", &index), ACL_SUCCESS);
    EXPECT_EQ(index, 1u);
    EXPECT_EQ(aclmdlGetOutputIndexByName(desc, "z", &index), ACL_SUCCESS);
    EXPECT_EQ(index, 1u);
    EXPECT_STREQ(aclmdlGetTensorRealName(desc, "y"), "y");
    EXPECT_EQ(aclmdlGetTensorRealName(desc, "nope"), nullptr);

    // No gears.
    aclmdlBatch batch;
    batch.batchCount = 77;
    EXPECT_EQ(aclmdlGetDynamicBatch(desc, &batch), ACL_SUCCESS);
    EXPECT_EQ(batch.batchCount, 0u);
    aclmdlHW hw;
    hw.hwCount = 77;
    EXPECT_EQ(aclmdlGetDynamicHW(desc, static_cast<size_t>(-1), &hw), ACL_SUCCESS);
    EXPECT_EQ(hw.hwCount, 0u);
    size_t gears = 77;
    EXPECT_EQ(aclmdlGetInputDynamicGearCount(desc, static_cast<size_t>(-1), &gears), ACL_SUCCESS);
    EXPECT_EQ(gears, 0u);
    EXPECT_EQ(aclmdlGetInputDynamicDims(desc, static_cast<size_t>(-1), nullptr, 0), ACL_SUCCESS);

    EXPECT_EQ(aclmdlDestroyDesc(desc), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, ProbingForTheGearInputIsSilent) {
    uint32_t id = LoadMem(onnx_);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    (void)aclGetRecentErrMsg();  // clear
    size_t index = 42;
    EXPECT_EQ(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &index), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclGetRecentErrMsg(), nullptr) << "an unknown name must not record an error";
    EXPECT_EQ(aclmdlGetOutputIndexByName(desc, "nope", &index), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
    // Other errors of the same call do record one.
    EXPECT_EQ(aclmdlGetInputIndexByName(desc, nullptr, &index), ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(aclGetRecentErrMsg(), nullptr);
    aclmdlDestroyDesc(desc);
    aclmdlUnload(id);
}

TEST_F(MdlTest, DescErrorsAndBadIndexes) {
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_NE(desc, nullptr);
    // Empty desc.
    EXPECT_EQ(aclmdlGetNumInputs(desc), 0u);
    aclmdlIODims dims;
    EXPECT_EQ(aclmdlGetInputDims(desc, 0, &dims), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "empty"));
    EXPECT_EQ(aclmdlGetDesc(desc, 999999), ACL_ERROR_INVALID_MODEL_ID);

    ASSERT_EQ(aclmdlGetDescFromMem(desc, onnx_.data(), onnx_.size()), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclmdlGetInputSizeByIndex(desc, 2), 0u);
    EXPECT_EQ(aclmdlGetOutputSizeByIndex(desc, 7), 0u);
    EXPECT_EQ(aclmdlGetInputFormat(desc, 2), ACL_FORMAT_UNDEFINED);
    EXPECT_EQ(aclmdlGetOutputDataType(desc, 2), ACL_DT_UNDEFINED);
    EXPECT_EQ(aclmdlGetInputNameByIndex(desc, 2), nullptr);
    EXPECT_EQ(aclmdlGetInputDims(desc, 2, &dims), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "index 2"));
    EXPECT_EQ(aclmdlGetOutputDims(desc, 0, nullptr), ACL_ERROR_INVALID_PARAM);
    // A desc filled from bytes answers like one from a loaded model.
    EXPECT_EQ(aclmdlGetNumInputs(desc), 2u);
    ASSERT_EQ(aclmdlGetCurOutputDims(desc, 1, &dims), ACL_SUCCESS);
    EXPECT_EQ(dims.dimCount, 2u);

    TempFile file(onnx_, ".onnx");
    aclmdlDesc *from_file = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDescFromFile(from_file, file.path()), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclmdlGetOutputSizeByIndex(from_file, 0), 24u);
    EXPECT_EQ(aclmdlGetDescFromFile(from_file, "/nonexistent.onnx"), ACL_ERROR_INVALID_FILE);
    EXPECT_EQ(aclmdlDestroyDesc(from_file), ACL_SUCCESS);

    // Destroyed or bogus descs are refused, never read.
    EXPECT_EQ(aclmdlDestroyDesc(desc), ACL_SUCCESS);
    EXPECT_EQ(aclmdlDestroyDesc(desc), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlGetNumInputs(desc), 0u);
    auto *bogus = static_cast<aclmdlDesc *>(acltest::BogusPointer());
    EXPECT_EQ(aclmdlGetNumOutputs(bogus), 0u);
    EXPECT_EQ(aclmdlGetInputDataType(bogus, 0), ACL_DT_UNDEFINED);
    EXPECT_EQ(aclmdlGetNumInputs(nullptr), 0u);
}

TEST_F(MdlTest, LongNamesGetAGeneratedNameAndTheRealOneBack) {
    const std::string long_name(200, 'n');
    std::string onnx = mdltest::LongNameOnnx(long_name);
    uint32_t id = LoadMem(onnx);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    const char *shown = aclmdlGetInputNameByIndex(desc, 0);
    ASSERT_NE(shown, nullptr);
    EXPECT_LT(std::strlen(shown), static_cast<size_t>(ACL_MAX_TENSOR_NAME_LEN));
    EXPECT_STREQ(aclmdlGetTensorRealName(desc, shown), long_name.c_str());
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetInputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_STREQ(dims.name, shown);
    size_t index = 9;
    EXPECT_EQ(aclmdlGetInputIndexByName(desc, shown, &index), ACL_SUCCESS);
    EXPECT_EQ(index, 0u);
    EXPECT_EQ(aclmdlGetInputIndexByName(desc, long_name.c_str(), &index), ACL_SUCCESS);
    aclmdlDestroyDesc(desc);
    aclmdlUnload(id);
}

/* ------------------------------------------------------------------ datasets */

TEST_F(MdlTest, Datasets) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    ASSERT_NE(ds, nullptr);
    EXPECT_EQ(aclmdlGetDatasetNumBuffers(ds), 0u);
    int a = 0, b = 0;
    aclDataBuffer *ba = aclCreateDataBuffer(&a, sizeof a);
    aclDataBuffer *bb = aclCreateDataBuffer(&b, sizeof b);
    EXPECT_EQ(aclmdlAddDatasetBuffer(ds, ba), ACL_SUCCESS);
    EXPECT_EQ(aclmdlAddDatasetBuffer(ds, bb), ACL_SUCCESS);
    EXPECT_EQ(aclmdlAddDatasetBuffer(ds, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlGetDatasetNumBuffers(ds), 2u);
    EXPECT_EQ(aclmdlGetDatasetBuffer(ds, 0), ba);
    EXPECT_EQ(aclmdlGetDatasetBuffer(ds, 1), bb);
    EXPECT_EQ(aclmdlGetDatasetBuffer(ds, 2), nullptr);
    EXPECT_EQ(aclmdlDestroyDataset(ds), ACL_SUCCESS);
    // The buffers survive their dataset.
    EXPECT_EQ(aclGetDataBufferAddr(ba), &a);
    EXPECT_EQ(aclGetDataBufferSizeV2(bb), sizeof b);
    EXPECT_EQ(aclDestroyDataBuffer(ba), ACL_SUCCESS);
    EXPECT_EQ(aclDestroyDataBuffer(bb), ACL_SUCCESS);
    // Destroyed, NULL and bogus datasets.
    EXPECT_EQ(aclmdlDestroyDataset(ds), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlGetDatasetNumBuffers(ds), 0u);
    EXPECT_EQ(aclmdlGetDatasetBuffer(ds, 0), nullptr);
    EXPECT_EQ(aclmdlAddDatasetBuffer(ds, ba), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlDestroyDataset(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlGetDatasetNumBuffers(static_cast<aclmdlDataset *>(acltest::BogusPointer())), 0u);
}

/* ------------------------------------------------------------------ execution */

TEST_F(MdlTest, ExecuteAsyncIsOrderedWithCopies) {
    uint32_t id = LoadMem(onnx_);
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    DevMem x(sizeof kX), b(sizeof kB), y(24), z(24);
    float y_host[6] = {}, z_host[6] = {};
    for (int round = 0; round < 3; ++round) {
        float xs[6];
        for (int i = 0; i < 6; ++i) xs[i] = kX[i] * static_cast<float>(round + 1);
        Dataset in, out;
        in.Add(x).Add(b);
        out.Add(y).Add(z);
        ASSERT_EQ(aclrtMemcpyAsync(x.get(), x.size(), xs, sizeof xs, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
        ASSERT_EQ(aclrtMemcpyAsync(b.get(), b.size(), kB, sizeof kB, ACL_MEMCPY_HOST_TO_DEVICE, stream), ACL_SUCCESS);
        ASSERT_EQ(aclmdlExecuteAsync(id, in.get(), out.get(), stream), ACL_SUCCESS) << RecentErrMsg();
        // The datasets are read at queue time: destroying them now is fine.
        in.DestroyDataset();
        out.DestroyDataset();
        ASSERT_EQ(aclrtMemcpyAsync(y_host, sizeof y_host, y.get(), 24, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
        ASSERT_EQ(aclrtMemcpyAsync(z_host, sizeof z_host, z.get(), 24, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
        ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << RecentErrMsg();
        float y_ref[6], z_ref[6];
        mdltest::AddReluReference(xs, kB, y_ref, z_ref);
        for (int i = 0; i < 6; ++i) {
            EXPECT_FLOAT_EQ(y_host[i], y_ref[i]) << "round " << round << " y[" << i << "]";
            EXPECT_FLOAT_EQ(z_host[i], z_ref[i]) << "round " << round << " z[" << i << "]";
        }
    }
    // The default stream (NULL) too.
    AddReluIo io;
    ASSERT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), nullptr), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    io.Check();
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, ExecuteRefusesMismatchedBuffers) {
    uint32_t id = LoadMem(onnx_);
    DevMem x(24), b(12), y(24), z(24), small(8);
    {
        Dataset in, out;
        in.Add(x);  // b missing
        out.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "2 input buffers") && Contains(msg, "holds 1")) << msg;
        aclrtStream none = nullptr;
        EXPECT_EQ(aclmdlExecuteAsync(id, in.get(), out.get(), none), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    }
    {
        Dataset in, out;
        in.Add(x).Add(b);
        out.Add(y);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    }
    {
        Dataset in, out;
        in.Add(x).Add(small);  // b needs 12 bytes
        out.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "12") && Contains(msg, "8")) << msg;
    }
    {
        Dataset in, out;
        in.Add(x).Add(b);
        out.Add(y).Add(small);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
        // Queued executions are checked before they are queued.
        EXPECT_EQ(aclmdlExecuteAsync(id, in.get(), out.get(), nullptr), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "24 bytes") && Contains(msg, "float32[2,3]")) << msg;
    }
    {
        Dataset in, out;
        in.Add(x).Add(small);
        out.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecuteAsync(id, in.get(), out.get(), nullptr), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
        EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);  // nothing was queued
    }
    {
        // A buffer that claims more bytes than its block holds.
        Dataset in, out;
        in.Add(x.get(), 24).Add(b.get(), 4096);
        out.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_INVALID_PARAM);
        EXPECT_TRUE(Contains(RecentErrMsg(), "input 1"));
    }
    {
        Dataset out;
        out.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecute(id, nullptr, out.get()), ACL_ERROR_INVALID_PARAM);
    }
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, HostBuffersRunInDefaultMode) {
    uint32_t id = LoadMem(onnx_);
    std::vector<float> x(kX, kX + 6), b(kB, kB + 3), y(6), z(6);
    Dataset in, out;
    in.Add(x.data(), 24).Add(b.data(), 12);
    out.Add(y.data(), 24).Add(z.data(), 24);
    ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    float y_ref[6], z_ref[6];
    mdltest::AddReluReference(kX, kB, y_ref, z_ref);
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[static_cast<size_t>(i)], y_ref[i]);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST(MdlStrict, HostBuffersAreRefusedInStrictMode) {
    acltest::RunIsolated([] {
        acltest::ScopedEnv strict("OPENACL_STRICT", "1");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        std::string onnx = mdltest::AddReluOnnx();
        uint32_t id = 0;
        ASSERT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_SUCCESS) << RecentErrMsg();
        std::vector<float> host(6);
        DevMem x(24), b(12), y(24), z(24);
        Dataset in, out;
        in.Add(x).Add(b);
        out.Add(host.data(), 24).Add(z);
        EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_INVALID_PARAM);
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "strict") && Contains(msg, "output 0")) << msg;
        Dataset in2, out2;
        in2.Add(x).Add(b);
        out2.Add(y).Add(z);
        EXPECT_EQ(aclmdlExecute(id, in2.get(), out2.get()), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    });
}

TEST_F(MdlTest, BadIdsAndUnload) {
    AddReluIo io;
    EXPECT_EQ(aclmdlExecute(0, io.in.get(), io.out.get()), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlExecute(123456, io.in.get(), io.out.get()), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_TRUE(Contains(RecentErrMsg(), "123456"));
    EXPECT_EQ(aclmdlExecuteAsync(123456, io.in.get(), io.out.get(), nullptr), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlUnload(123456), ACL_ERROR_INVALID_MODEL_ID);
    uint32_t id = LoadMem(onnx_);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlGetDesc(desc, id), ACL_ERROR_INVALID_MODEL_ID);
    // The desc outlives the model: static answers stay, the current gear is gone.
    EXPECT_EQ(aclmdlGetNumInputs(desc), 2u);
    aclmdlIODims dims;
    EXPECT_EQ(aclmdlGetOutputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_EQ(aclmdlGetCurOutputDims(desc, 0, &dims), ACL_ERROR_INVALID_MODEL_ID);
    aclmdlDestroyDesc(desc);
}

TEST_F(MdlTest, UnloadWhileQueuedFailsTheQueuedExecution) {
    uint32_t id = LoadMem(onnx_);
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    AddReluIo io;
    acltest::Gate gate;
    ASSERT_TRUE(gate.Launch(stream));
    ASSERT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), stream), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);  // does not wait for the stream
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_TRUE(Contains(RecentErrMsg(), "unloaded"));
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

TEST_F(MdlTest, MemoryIsReleasedAtUnload) {
    size_t free_before = 0, total = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_DDR_MEM, &free_before, &total), ACL_SUCCESS);
    uint32_t id = LoadMem(onnx_);
    AddReluIo io;
    ASSERT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS);
    size_t free_loaded = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_DDR_MEM, &free_loaded, &total), ACL_SUCCESS);
    ASSERT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    size_t free_after = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_DDR_MEM, &free_after, &total), ACL_SUCCESS);
    EXPECT_GT(free_after, free_loaded) << "the model's memory should count against the device until unload";
}

TEST_F(MdlTest, ModelsDoNotOutliveTheirContext) {
    uint32_t id = LoadMem(onnx_);
    ASSERT_EQ(aclrtResetDevice(0), ACL_SUCCESS);  // releases the context the model was loaded under
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    {
        AddReluIo io;
        EXPECT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_ERROR_INVALID_MODEL_ID);
        EXPECT_TRUE(Contains(RecentErrMsg(), "load it again"));
        EXPECT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), nullptr), ACL_ERROR_INVALID_MODEL_ID);
        EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    }

    // aclFinalize (which frees all device memory) unloads every model first:
    // after a new aclInit the old id is unknown.
    id = LoadMem(onnx_);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    AddReluIo io2;
    EXPECT_EQ(aclmdlExecute(id, io2.in.get(), io2.out.get()), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlUnload(id), ACL_ERROR_INVALID_MODEL_ID);
}

TEST_F(MdlTest, ConcurrentExecutesOfOneModel) {
    uint32_t id = LoadMem(onnx_);
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
                failures++;
                return;
            }
            DevMem x(24), b(12), y(24), z(24);
            Dataset in, out;
            in.Add(x).Add(b);
            out.Add(y).Add(z);
            for (int iter = 0; iter < 25; ++iter) {
                float xs[6], bs[3];
                for (int i = 0; i < 6; ++i) xs[i] = kX[i] + static_cast<float>(t * 100 + iter);
                for (int i = 0; i < 3; ++i) bs[i] = kB[i] * static_cast<float>(t + 1);
                x.Put(xs, sizeof xs);
                b.Put(bs, sizeof bs);
                if (aclmdlExecute(id, in.get(), out.get()) != ACL_SUCCESS) {
                    failures++;
                    continue;
                }
                float y_ref[6], z_ref[6], y_got[6], z_got[6];
                mdltest::AddReluReference(xs, bs, y_ref, z_ref);
                y.Get(y_got, sizeof y_got);
                z.Get(z_got, sizeof z_got);
                for (int i = 0; i < 6; ++i)
                    if (y_got[i] != y_ref[i] || z_got[i] != z_ref[i]) failures++;
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, UnloadRacingExecutesNeverCrashes) {
    uint32_t id = LoadMem(onnx_);
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    std::atomic<int> ok{0}, gone{0}, other{0};
    std::atomic<bool> started{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([&] {
            if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
                other++;
                return;
            }
            AddReluIo io;
            for (int iter = 0; iter < 200; ++iter) {
                aclError r = aclmdlExecute(id, io.in.get(), io.out.get());
                started = true;
                if (r == ACL_SUCCESS) {
                    ok++;
                } else if (r == ACL_ERROR_INVALID_MODEL_ID) {
                    gone++;
                    break;
                } else {
                    other++;
                }
            }
        });
    }
    while (!started.load()) std::this_thread::yield();
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    for (auto &th : threads) th.join();
    EXPECT_EQ(other.load(), 0);
    EXPECT_GT(ok.load(), 0);
}

TEST_F(MdlTest, AsyncExecutesOnSeveralStreams) {
    uint32_t id = LoadMem(onnx_);
    constexpr int kStreams = 3;
    aclrtStream streams[kStreams];
    std::vector<std::unique_ptr<AddReluIo>> ios;
    for (int i = 0; i < kStreams; ++i) {
        ASSERT_EQ(aclrtCreateStream(&streams[i]), ACL_SUCCESS);
        ios.push_back(std::make_unique<AddReluIo>());
    }
    for (int round = 0; round < 10; ++round)
        for (int i = 0; i < kStreams; ++i)
            ASSERT_EQ(aclmdlExecuteAsync(id, ios[i]->in.get(), ios[i]->out.get(), streams[i]), ACL_SUCCESS)
                << RecentErrMsg();
    for (int i = 0; i < kStreams; ++i) {
        EXPECT_EQ(aclrtSynchronizeStream(streams[i]), ACL_SUCCESS) << RecentErrMsg();
        ios[i]->Check();
        EXPECT_EQ(aclrtDestroyStream(streams[i]), ACL_SUCCESS);
    }
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, OtherDeviceContextIsRefused) {
    if (device_count_ < 2) GTEST_SKIP() << "needs two devices";
    uint32_t id = LoadMem(onnx_);
    AddReluIo io;  // allocated on device 0
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_ERROR_RT_MODEL_CONTEXT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "device 0"));
    aclrtStream dev1_stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&dev1_stream), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), dev1_stream), ACL_ERROR_RT_MODEL_CONTEXT);
    EXPECT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), nullptr), ACL_ERROR_RT_MODEL_CONTEXT);
    EXPECT_EQ(aclrtDestroyStream(dev1_stream), ACL_SUCCESS);
    // Another context on the model's device is fine.
    aclrtContext other = nullptr;
    ASSERT_EQ(aclrtCreateContext(&other, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
    io.Check();
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(other), ACL_SUCCESS);
    aclrtResetDevice(1);
}

TEST_F(MdlTest, ModelsOnTwoDevicesRunAtOnce) {
    if (device_count_ < 2) GTEST_SKIP() << "needs two devices";
    // One copy of the model per device, each executed by its own thread under
    // a context of its device, with buffers on that device.
    uint32_t ids[2] = {LoadMem(onnx_), 0};
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    ids[1] = LoadMem(onnx_);
    ASSERT_NE(ids[1], 0u);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int dev = 0; dev < 2; ++dev)
        threads.emplace_back([&, dev] {
            aclrtContext ctx = nullptr;
            if (aclrtCreateContext(&ctx, dev) != ACL_SUCCESS) {
                ++failures;
                return;
            }
            {
                AddReluIo io;
                for (int i = 0; i < 20; ++i)
                    if (aclmdlExecute(ids[dev], io.in.get(), io.out.get()) != ACL_SUCCESS) ++failures;
                io.Check();
            }
            aclrtDestroyContext(ctx);
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(aclmdlUnload(ids[1]), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(ids[0]), ACL_SUCCESS);
    aclrtResetDevice(1);
}

/* ------------------------------------------------------------------ gears */

class MdlGearTest : public MdlTest {
 protected:
    void SetUp() override {
        MdlTest::SetUp();
        if (HasFatalFailure()) return;
        std::string err;
        om_ = mdltest::AddConstOm(-1, {1, 2, 4}, &err);
        ASSERT_FALSE(om_.empty()) << err;
        id_ = LoadMem(om_);
        ASSERT_NE(id_, 0u);
        desc_ = aclmdlCreateDesc();
        ASSERT_EQ(aclmdlGetDesc(desc_, id_), ACL_SUCCESS) << RecentErrMsg();
    }
    void TearDown() override {
        if (desc_ != nullptr) aclmdlDestroyDesc(desc_);
        if (id_ != 0) aclmdlUnload(id_);
        MdlTest::TearDown();
    }
    std::string om_;
    uint32_t id_ = 0;
    aclmdlDesc *desc_ = nullptr;
};

TEST_F(MdlGearTest, DescShowsTheGearInputLast) {
    ASSERT_EQ(aclmdlGetNumInputs(desc_), 2u);
    EXPECT_STREQ(aclmdlGetInputNameByIndex(desc_, 1), ACL_DYNAMIC_TENSOR_NAME);
    size_t index = 0;
    EXPECT_EQ(aclmdlGetInputIndexByName(desc_, ACL_DYNAMIC_TENSOR_NAME, &index), ACL_SUCCESS);
    EXPECT_EQ(index, 1u);
    EXPECT_GT(aclmdlGetInputSizeByIndex(desc_, 1), 0u);
    EXPECT_EQ(aclmdlGetInputSizeByIndex(desc_, 0), 4u * 4 * sizeof(float));  // the largest gear
    EXPECT_EQ(aclmdlGetOutputSizeByIndex(desc_, 0), 4u * 4 * sizeof(float));
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetInputDims(desc_, 0, &dims), ACL_SUCCESS);
    ASSERT_EQ(dims.dimCount, 2u);
    EXPECT_EQ(dims.dims[0], -1);
    EXPECT_EQ(dims.dims[1], 4);
    ASSERT_EQ(aclmdlGetOutputDims(desc_, 0, &dims), ACL_SUCCESS);
    ASSERT_EQ(dims.dimCount, 2u);
    EXPECT_EQ(dims.dims[0], 4);  // the largest gear
    aclmdlBatch batch;
    ASSERT_EQ(aclmdlGetDynamicBatch(desc_, &batch), ACL_SUCCESS);
    ASSERT_EQ(batch.batchCount, 3u);
    EXPECT_EQ(batch.batch[0], 1u);
    EXPECT_EQ(batch.batch[1], 2u);
    EXPECT_EQ(batch.batch[2], 4u);
    aclmdlHW hw;
    ASSERT_EQ(aclmdlGetDynamicHW(desc_, 1, &hw), ACL_SUCCESS);
    EXPECT_EQ(hw.hwCount, 0u);
    size_t gears = 9;
    ASSERT_EQ(aclmdlGetInputDynamicGearCount(desc_, static_cast<size_t>(-1), &gears), ACL_SUCCESS);
    EXPECT_EQ(gears, 0u);
}

TEST_F(MdlGearTest, SetBatchThenExecute) {
    size_t shape_bytes = aclmdlGetInputSizeByIndex(desc_, 1);
    DevMem x(64), shape(shape_bytes), y(64);
    const float xs[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    x.Put(xs, sizeof xs);
    Dataset in, out;
    in.Add(x.get(), sizeof xs).Add(shape);  // batch-2 data: 32 bytes
    out.Add(y);
    // Wrong index, non-gear value, wrong kind.
    EXPECT_EQ(aclmdlSetDynamicBatchSize(id_, in.get(), 0, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "pass 1"));
    EXPECT_EQ(aclmdlSetDynamicBatchSize(id_, in.get(), 1, 3), ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "1, 2, 4")) << msg;
    EXPECT_EQ(aclmdlSetDynamicHWSize(id_, in.get(), 1, 2, 2), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetDynamicBatchSize(999999, in.get(), 1, 2), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_EQ(aclmdlSetDynamicBatchSize(id_, nullptr, 1, 2), ACL_ERROR_INVALID_PARAM);

    ASSERT_EQ(aclmdlSetDynamicBatchSize(id_, in.get(), 1, 2), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecute(id_, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    float ys[8];
    y.Get(ys, sizeof ys);
    for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(ys[i], xs[i] + static_cast<float>(i % 4 + 1)) << i;
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetCurOutputDims(desc_, 0, &dims), ACL_SUCCESS);
    ASSERT_EQ(dims.dimCount, 2u);
    EXPECT_EQ(dims.dims[0], 2);
    EXPECT_EQ(dims.dims[1], 4);

    // Batch 4 with the full 64 bytes.
    const float x4[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    x.Put(x4, sizeof x4);
    Dataset in4;
    in4.Add(x).Add(shape);
    ASSERT_EQ(aclmdlSetDynamicBatchSize(id_, in4.get(), 1, 4), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecute(id_, in4.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    float y4[16];
    y.Get(y4, sizeof y4);
    for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(y4[i], x4[i] + static_cast<float>(i % 4 + 1)) << i;
    ASSERT_EQ(aclmdlGetCurOutputDims(desc_, 0, &dims), ACL_SUCCESS);
    EXPECT_EQ(dims.dims[0], 4);
}

TEST_F(MdlGearTest, DescFromFileAndQuerySizeOfAnOm) {
    TempFile file(om_, ".om");
    aclmdlDesc *d = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDescFromFile(d, file.path()), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclmdlGetNumInputs(d), 2u);
    EXPECT_EQ(aclmdlGetInputSizeByIndex(d, 0), aclmdlGetInputSizeByIndex(desc_, 0));
    aclmdlBatch batch;
    ASSERT_EQ(aclmdlGetDynamicBatch(d, &batch), ACL_SUCCESS);
    EXPECT_EQ(batch.batchCount, 3u);
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetCurOutputDims(d, 0, &dims), ACL_SUCCESS);  // not from a loaded model: the largest gear
    EXPECT_EQ(dims.dims[0], 4);
    aclmdlDestroyDesc(d);
    size_t work_file = 0, weight_file = 0, work_mem = 0, weight_mem = 0;
    ASSERT_EQ(aclmdlQuerySize(file.path(), &work_file, &weight_file), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlQuerySizeFromMem(om_.data(), om_.size(), &work_mem, &weight_mem), ACL_SUCCESS);
    EXPECT_EQ(work_file, work_mem);
    EXPECT_EQ(weight_file, weight_mem);
    EXPECT_GE(weight_file, 16u);  // C
}

TEST_F(MdlGearTest, UserMemoryCoversTheLargestGear) {
    size_t work = 0, weight = 0;
    ASSERT_EQ(aclmdlQuerySizeFromMem(om_.data(), om_.size(), &work, &weight), ACL_SUCCESS) << RecentErrMsg();
    DevMem work_mem(work > 0 ? work : 64), weight_mem(weight > 0 ? weight : 64);
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromMemWithMem(om_.data(), om_.size(), &id, work > 0 ? work_mem.get() : nullptr, work,
                                       weight > 0 ? weight_mem.get() : nullptr, weight),
              ACL_SUCCESS)
        << RecentErrMsg();
    DevMem x(64), shape(aclmdlGetInputSizeByIndex(desc_, 1)), y(64);
    float xs[16];
    for (int i = 0; i < 16; ++i) xs[i] = static_cast<float>(i) * 0.5f;
    x.Put(xs, sizeof xs);
    Dataset in, out;
    in.Add(x).Add(shape);
    out.Add(y);
    for (uint64_t batch : {4u, 1u, 2u}) {
        ASSERT_EQ(aclmdlSetDynamicBatchSize(id, in.get(), 1, batch), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
        float ys[16];
        y.Get(ys, sizeof ys);
        for (uint64_t i = 0; i < batch * 4; ++i) EXPECT_FLOAT_EQ(ys[i], xs[i] + static_cast<float>(i % 4 + 1));
    }
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlGearTest, WithoutTheGearBufferTheCountIsWrong) {
    DevMem x(64), y(64);
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    EXPECT_EQ(aclmdlExecute(id_, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, ACL_DYNAMIC_TENSOR_NAME)) << msg;
}

TEST_F(MdlTest, ImageSizeGears) {
    openacl::model::GearSpec spec;
    spec.kind = openacl::model::GearKind::kImageSize;
    spec.positions = {{"x", 2}, {"x", 3}};
    spec.gears = {{2, 3}, {4, 4}};
    std::string err;
    std::string om = mdltest::AddTenOm({1, 1, -1, -1}, spec, &err);
    ASSERT_FALSE(om.empty()) << err;
    uint32_t id = LoadMem(om);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    aclmdlHW hw;
    ASSERT_EQ(aclmdlGetDynamicHW(desc, static_cast<size_t>(-1), &hw), ACL_SUCCESS);
    ASSERT_EQ(hw.hwCount, 2u);
    EXPECT_EQ(hw.hw[0][0], 2u);
    EXPECT_EQ(hw.hw[0][1], 3u);
    EXPECT_EQ(hw.hw[1][0], 4u);
    EXPECT_EQ(hw.hw[1][1], 4u);
    aclmdlBatch batch;
    ASSERT_EQ(aclmdlGetDynamicBatch(desc, &batch), ACL_SUCCESS);
    EXPECT_EQ(batch.batchCount, 0u);
    size_t index = 0;
    ASSERT_EQ(aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &index), ACL_SUCCESS);
    EXPECT_EQ(index, 1u);
    EXPECT_EQ(aclmdlGetInputSizeByIndex(desc, 0), 16u * sizeof(float));

    DevMem x(16 * sizeof(float)), shape(aclmdlGetInputSizeByIndex(desc, 1)), y(16 * sizeof(float));
    float xs[6] = {0, 1, 2, 3, 4, 5};
    x.Put(xs, sizeof xs);
    Dataset in, out;
    in.Add(x.get(), sizeof xs).Add(shape);
    out.Add(y);
    EXPECT_EQ(aclmdlSetDynamicHWSize(id, in.get(), 1, 3, 2), ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID);
    EXPECT_TRUE(Contains(RecentErrMsg(), "2x3, 4x4"));
    EXPECT_EQ(aclmdlSetDynamicBatchSize(id, in.get(), 1, 2), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclmdlSetDynamicHWSize(id, in.get(), 1, 2, 3), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    float ys[6];
    y.Get(ys, sizeof ys);
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(ys[i], xs[i] + 10) << i;
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetCurOutputDims(desc, 0, &dims), ACL_SUCCESS);
    ASSERT_EQ(dims.dimCount, 4u);
    EXPECT_EQ(dims.dims[2], 2);
    EXPECT_EQ(dims.dims[3], 3);
    aclmdlDestroyDesc(desc);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, DimsGears) {
    openacl::model::GearSpec spec;
    spec.kind = openacl::model::GearKind::kDims;
    spec.positions = {{"x", 0}};
    spec.gears = {{1}, {3}};
    std::string err;
    std::string om = mdltest::AddTenOm({-1, 4}, spec, &err);
    ASSERT_FALSE(om.empty()) << err;
    uint32_t id = LoadMem(om);
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    size_t count = 0;
    ASSERT_EQ(aclmdlGetInputDynamicGearCount(desc, static_cast<size_t>(-1), &count), ACL_SUCCESS);
    ASSERT_EQ(count, 2u);
    aclmdlIODims gears[2];
    EXPECT_EQ(aclmdlGetInputDynamicDims(desc, static_cast<size_t>(-1), gears, 1), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclmdlGetInputDynamicDims(desc, static_cast<size_t>(-1), gears, 2), ACL_SUCCESS);
    ASSERT_EQ(gears[0].dimCount, 1u);
    EXPECT_EQ(gears[0].dims[0], 1);
    EXPECT_EQ(gears[1].dims[0], 3);

    DevMem x(12 * sizeof(float)), shape(aclmdlGetInputSizeByIndex(desc, 1)), y(12 * sizeof(float));
    float xs[12];
    for (int i = 0; i < 12; ++i) xs[i] = static_cast<float>(i);
    x.Put(xs, sizeof xs);
    Dataset in, out;
    in.Add(x).Add(shape);
    out.Add(y);
    aclmdlIODims sel{};
    sel.dimCount = 1;
    sel.dims[0] = 2;  // not a gear
    EXPECT_EQ(aclmdlSetInputDynamicDims(id, in.get(), 1, &sel), ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID);
    // The full-shape form (CANN's samples) with a wrong fixed dim.
    sel.dimCount = 2;
    sel.dims[0] = 3;
    sel.dims[1] = 5;
    EXPECT_EQ(aclmdlSetInputDynamicDims(id, in.get(), 1, &sel), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "fixed at 4"));
    sel.dims[1] = 4;
    ASSERT_EQ(aclmdlSetInputDynamicDims(id, in.get(), 1, &sel), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    float ys[12];
    y.Get(ys, sizeof ys);
    for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(ys[i], xs[i] + 10) << i;
    aclmdlIODims dims;
    ASSERT_EQ(aclmdlGetCurOutputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_EQ(dims.dims[0], 3);
    // The values-only form.
    sel.dimCount = 1;
    sel.dims[0] = 1;
    ASSERT_EQ(aclmdlSetInputDynamicDims(id, in.get(), 1, &sel), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlGetCurOutputDims(desc, 0, &dims), ACL_SUCCESS);
    EXPECT_EQ(dims.dims[0], 1);
    aclmdlDestroyDesc(desc);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, DestroyedDataBufferReadsAsEmpty) {
    uint32_t id = LoadMem(onnx_);
    DevMem x(24), b(12), y(24), z(24);
    aclmdlDataset *in = aclmdlCreateDataset();
    aclDataBuffer *bx = aclCreateDataBuffer(x.get(), 24);
    aclDataBuffer *bb = aclCreateDataBuffer(b.get(), 12);
    ASSERT_EQ(aclmdlAddDatasetBuffer(in, bx), ACL_SUCCESS);
    ASSERT_EQ(aclmdlAddDatasetBuffer(in, bb), ACL_SUCCESS);
    ASSERT_EQ(aclDestroyDataBuffer(bb), ACL_SUCCESS);  // still listed in the dataset
    Dataset out;
    out.Add(y).Add(z);
    EXPECT_EQ(aclmdlExecute(id, in, out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    aclDestroyDataBuffer(bx);
    aclmdlDestroyDataset(in);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, GearSettersOnAStaticModel) {
    uint32_t id = LoadMem(onnx_);
    AddReluIo io;
    EXPECT_EQ(aclmdlSetDynamicBatchSize(id, io.in.get(), 1, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_EQ(aclmdlSetDynamicHWSize(id, io.in.get(), 1, 2, 2), ACL_ERROR_MODEL_NOT_DYNAMIC);
    aclmdlIODims dims{};
    dims.dimCount = 1;
    dims.dims[0] = 2;
    EXPECT_EQ(aclmdlSetInputDynamicDims(id, io.in.get(), 1, &dims), ACL_ERROR_MODEL_NOT_DYNAMIC);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

/* ------------------------------------------------- tensor descs: free dims */

/* x float[H, W] (two free dims, distinct names) -> y = Relu(x). */
std::string FreeDimsReluOnnx() {
    auto value_info = [](const std::string &name) {
        mdltest::Pb shape;
        for (const char *param : {"H", "W"}) {
            mdltest::Pb dim;
            dim.bytes(2, param);
            shape.msg(1, dim);
        }
        mdltest::Pb tensor_type;
        tensor_type.u64(1, mdltest::kOnnxFloat).msg(2, shape);
        mdltest::Pb type;
        type.msg(1, tensor_type);
        mdltest::Pb vi;
        vi.bytes(1, name).msg(2, type);
        return vi;
    };
    mdltest::Pb g;
    g.msg(1, mdltest::OnnxNode("Relu", {"x"}, {"y"}));
    g.bytes(2, "freerelu");
    g.msg(11, value_info("x"));
    g.msg(12, value_info("y"));
    return mdltest::OnnxModel(g);
}

std::vector<int64_t> DescDims(const aclTensorDesc *d) {
    std::vector<int64_t> v;
    const size_t n = aclGetTensorDescNumDims(d);
    for (size_t i = 0; i < n && n != ACL_UNKNOWN_RANK; ++i) {
        int64_t x = -100;
        EXPECT_EQ(aclGetTensorDescDimV2(d, i, &x), ACL_SUCCESS);
        v.push_back(x);
    }
    return v;
}

/* Runs the free-dim model on an h x w input given by a desc; checks y. */
void RunFreeRelu(uint32_t id, int64_t h, int64_t w, Dataset &in, Dataset &out, const DevMem &x, const DevMem &y) {
    std::vector<float> xs(static_cast<size_t>(h * w));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = (i % 3 == 0 ? -1.0f : 1.0f) * static_cast<float>(i);
    x.Put(xs.data(), xs.size() * sizeof(float));
    const int64_t dims[2] = {h, w};
    aclTensorDesc *desc = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), desc, 0), ACL_SUCCESS) << RecentErrMsg();
    aclDestroyTensorDesc(desc);  // the dataset holds its own copy
    ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
    std::vector<float> ys(xs.size());
    y.Get(ys.data(), ys.size() * sizeof(float));
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(ys[i], std::max(xs[i], 0.0f)) << i;
}

TEST_F(MdlTest, FreeDimsTakeTheirShapeFromTheInputDesc) {
    uint32_t id = LoadMem(FreeDimsReluOnnx());
    aclmdlDesc *md = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(md, id), ACL_SUCCESS);
    aclmdlIODims io{};
    ASSERT_EQ(aclmdlGetInputDims(md, 0, &io), ACL_SUCCESS);
    ASSERT_EQ(io.dimCount, 2u);
    EXPECT_EQ(io.dims[0], -1);
    EXPECT_EQ(io.dims[1], -1);
    aclmdlDestroyDesc(md);

    DevMem x(64 * sizeof(float)), y(64 * sizeof(float));
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(out.get(), 0), nullptr);  // none before executing
    RunFreeRelu(id, 3, 5, in, out, x, y);
    aclTensorDesc *od = aclmdlGetDatasetTensorDesc(out.get(), 0);
    ASSERT_NE(od, nullptr) << "the execution gives every output a desc";
    EXPECT_EQ(DescDims(od), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(aclGetTensorDescType(od), ACL_FLOAT);
    EXPECT_EQ(aclGetTensorDescSize(od), 15 * sizeof(float));
    EXPECT_EQ(aclGetTensorDescAddress(od), y.get());

    // Another shape through the same datasets: the same output desc, updated.
    RunFreeRelu(id, 4, 2, in, out, x, y);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(out.get(), 0), od);
    EXPECT_EQ(DescDims(od), (std::vector<int64_t>{4, 2}));

    // A desc the user set on the output is overwritten with the real shape.
    const int64_t guess[1] = {64};
    aclTensorDesc *user = aclCreateTensorDesc(ACL_FLOAT, 1, guess, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(out.get(), user, 0), ACL_SUCCESS);
    RunFreeRelu(id, 2, 7, in, out, x, y);
    EXPECT_EQ(DescDims(aclmdlGetDatasetTensorDesc(out.get(), 0)), (std::vector<int64_t>{2, 7}));
    EXPECT_EQ(DescDims(user), (std::vector<int64_t>{64}));  // the user's own desc is not touched
    aclDestroyTensorDesc(user);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

/* x float of unknown rank (no shape at all) -> y = Relu(x). */
std::string UnknownRankReluOnnx() {
    auto value_info = [](const std::string &name) {
        mdltest::Pb tensor_type;
        tensor_type.u64(1, mdltest::kOnnxFloat);
        mdltest::Pb type;
        type.msg(1, tensor_type);
        mdltest::Pb vi;
        vi.bytes(1, name).msg(2, type);
        return vi;
    };
    mdltest::Pb g;
    g.msg(1, mdltest::OnnxNode("Relu", {"x"}, {"y"}));
    g.bytes(2, "rankrelu");
    g.msg(11, value_info("x"));
    g.msg(12, value_info("y"));
    return mdltest::OnnxModel(g);
}

TEST_F(MdlTest, UnknownRankInputTakesAnyRankFromItsDesc) {
    uint32_t id = 0;
    const std::string bytes = UnknownRankReluOnnx();
    if (aclmdlLoadFromMem(bytes.data(), bytes.size(), &id) != ACL_SUCCESS) {
        GTEST_SKIP() << "the importer refuses an input without a shape: " << RecentErrMsg();
    }
    DevMem x(64 * sizeof(float)), y(64 * sizeof(float));
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    for (const std::vector<int64_t> &dims : {std::vector<int64_t>{6}, std::vector<int64_t>{2, 2, 3}}) {
        std::vector<float> xs(12);
        for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 5.5f;
        x.Put(xs.data(), xs.size() * sizeof(float));
        aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, static_cast<int>(dims.size()), dims.data(), ACL_FORMAT_ND);
        ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), d, 0), ACL_SUCCESS);
        aclDestroyTensorDesc(d);
        ASSERT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(DescDims(aclmdlGetDatasetTensorDesc(out.get(), 0)), dims);
    }
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, FreeDimsWithoutADescAreRefused) {
    uint32_t id = LoadMem(FreeDimsReluOnnx());
    DevMem x(64), y(64);
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclmdlSetDatasetTensorDesc")) << RecentErrMsg();
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(out.get(), 0), nullptr);  // a failed execution reports nothing

    // A desc with an unknown dim does not give the shape either.
    const int64_t unknown[2] = {-1, 4};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 2, unknown, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), d, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    EXPECT_TRUE(Contains(RecentErrMsg(), "[-1,4]")) << RecentErrMsg();
    // Nor one of the wrong rank.
    const int64_t flat[1] = {4};
    ASSERT_EQ(aclSetTensorOriginShape(d, 1, flat), ACL_SUCCESS);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), d, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    EXPECT_TRUE(Contains(RecentErrMsg(), "the model takes")) << RecentErrMsg();
    aclDestroyTensorDesc(d);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

TEST_F(MdlTest, InputDescMustMatchTheModelAndTheBuffer) {
    uint32_t id = LoadMem(onnx_);  // x float[2,3], b float[3]
    AddReluIo io;
    const int64_t swapped[2] = {3, 2};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 2, swapped, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(io.in.get(), d, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "input 0 ('x')") && Contains(msg, "[3,2]") && Contains(msg, "[2,3]")) << msg;
    EXPECT_EQ(aclmdlExecuteAsync(id, io.in.get(), io.out.get(), nullptr), ACL_ERROR_MODEL_INPUT_NOT_MATCH);

    // The model's own shape in the desc is fine (a static model takes descs too).
    const int64_t same[2] = {2, 3};
    ASSERT_EQ(aclSetTensorOriginShape(d, 2, same), ACL_SUCCESS);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(io.in.get(), d, 0), ACL_SUCCESS);
    ASSERT_EQ(aclmdlExecute(id, io.in.get(), io.out.get()), ACL_SUCCESS) << RecentErrMsg();
    io.Check();
    EXPECT_EQ(DescDims(aclmdlGetDatasetTensorDesc(io.out.get(), 1)), (std::vector<int64_t>{2, 3}));
    aclDestroyTensorDesc(d);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);

    // A buffer smaller than the desc's shape is refused before running.
    uint32_t free_id = LoadMem(FreeDimsReluOnnx());
    DevMem x(10 * sizeof(float)), y(64 * sizeof(float));
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    const int64_t big[2] = {4, 4};
    aclTensorDesc *bd = aclCreateTensorDesc(ACL_FLOAT, 2, big, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), bd, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(free_id, in.get(), out.get()), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "64 bytes") && Contains(msg, "holds 40 bytes")) << msg;
    EXPECT_EQ(aclmdlExecuteAsync(free_id, in.get(), out.get(), nullptr), ACL_ERROR_MODEL_INPUT_NOT_MATCH);
    // An output buffer too small for the real output: refused, nothing reported.
    DevMem small_y(8);
    Dataset out_small;
    out_small.Add(small_y);
    const int64_t fits[2] = {2, 5};
    ASSERT_EQ(aclSetTensorOriginShape(bd, 2, fits), ACL_SUCCESS);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), bd, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlExecute(free_id, in.get(), out_small.get()), ACL_ERROR_MODEL_OUTPUT_NOT_MATCH);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(out_small.get(), 0), nullptr);
    aclDestroyTensorDesc(bd);
    EXPECT_EQ(aclmdlUnload(free_id), ACL_SUCCESS);
}

TEST_F(MdlTest, AsyncExecuteWritesOutputDescsWhenItRuns) {
    uint32_t id = LoadMem(FreeDimsReluOnnx());
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    DevMem x(64 * sizeof(float)), y(64 * sizeof(float));
    std::vector<float> xs(12, -3.0f);
    xs[5] = 2.5f;
    x.Put(xs.data(), xs.size() * sizeof(float));
    Dataset in, out;
    in.Add(x);
    out.Add(y);
    const int64_t dims[2] = {6, 2};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(in.get(), d, 0), ACL_SUCCESS);
    aclDestroyTensorDesc(d);
    ASSERT_EQ(aclmdlExecuteAsync(id, in.get(), out.get(), stream), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(DescDims(aclmdlGetDatasetTensorDesc(out.get(), 0)), (std::vector<int64_t>{6, 2}));
    float y5 = 0;
    std::vector<float> ys(12);
    y.Get(ys.data(), ys.size() * sizeof(float));
    y5 = ys[5];
    EXPECT_FLOAT_EQ(y5, 2.5f);
    EXPECT_FLOAT_EQ(ys[0], 0.0f);

    // The datasets may be destroyed once queued (usually before the execution
    // runs): it still runs, and reports into no dataset (ASan watches).
    Dataset out2;
    out2.Add(y);
    ASSERT_EQ(aclmdlExecuteAsync(id, in.get(), out2.get(), stream), ACL_SUCCESS) << RecentErrMsg();
    out2.DestroyDataset();
    in.DestroyDataset();
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

}  // namespace
