/*
 * aclTensorDesc: every §4.3 function, its NULL / unknown-pointer / range
 * behaviour, CANN's origin-vs-storage quirk, format conversion, and the
 * dataset descs (aclmdlSetDatasetTensorDesc / aclmdlGetDatasetTensorDesc).
 * Contract: include/acl/acl_base.h "tensor descriptors", acl_mdl.h datasets;
 * spec/pyacl-api.md §4.3, §3.4, §9.
 */
#include <cstring>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::BogusPointer;
using acltest::Contains;
using acltest::RecentErrMsg;

aclTensorDesc *Bogus() { return static_cast<aclTensorDesc *>(BogusPointer()); }

/* A desc destroyed at scope exit. */
class Desc {
 public:
    Desc(aclDataType t, std::vector<int64_t> dims, aclFormat f)
        : d_(aclCreateTensorDesc(t, static_cast<int>(dims.size()), dims.data(), f)) {
        EXPECT_NE(d_, nullptr) << RecentErrMsg();
    }
    ~Desc() { aclDestroyTensorDesc(d_); }
    Desc(const Desc &) = delete;
    Desc &operator=(const Desc &) = delete;
    aclTensorDesc *get() const { return d_; }

 private:
    aclTensorDesc *d_;
};

std::vector<int64_t> Dims(const aclTensorDesc *d) {
    std::vector<int64_t> v;
    const size_t n = aclGetTensorDescNumDims(d);
    for (size_t i = 0; i < n && n != ACL_UNKNOWN_RANK; ++i) {
        int64_t x = 0;
        EXPECT_EQ(aclGetTensorDescDimV2(d, i, &x), ACL_SUCCESS);
        v.push_back(x);
    }
    return v;
}

TEST(TensorDesc, CreateAndRead) {
    Desc d(ACL_FLOAT16, {2, 3, 4}, ACL_FORMAT_NCHW);
    EXPECT_EQ(aclGetTensorDescType(d.get()), ACL_FLOAT16);
    EXPECT_EQ(aclGetTensorDescFormat(d.get()), ACL_FORMAT_NCHW);
    EXPECT_EQ(aclGetTensorDescNumDims(d.get()), 3u);
    EXPECT_EQ(aclGetTensorDescElementCount(d.get()), 24u);
    EXPECT_EQ(aclGetTensorDescSize(d.get()), 48u);
    EXPECT_EQ(aclGetTensorDescDim(d.get(), 1), 3);
    int64_t dim = 0;
    EXPECT_EQ(aclGetTensorDescDimV2(d.get(), 2, &dim), ACL_SUCCESS);
    EXPECT_EQ(dim, 4);
    EXPECT_STREQ(aclGetTensorDescName(d.get()), "");
    EXPECT_EQ(aclGetTensorDescAddress(d.get()), nullptr);
}

TEST(TensorDesc, ScalarUnknownDimAndUnknownRank) {
    aclTensorDesc *scalar = aclCreateTensorDesc(ACL_INT32, 0, nullptr, ACL_FORMAT_ND);
    ASSERT_NE(scalar, nullptr);
    EXPECT_EQ(aclGetTensorDescNumDims(scalar), 0u);
    EXPECT_EQ(aclGetTensorDescElementCount(scalar), 1u);
    EXPECT_EQ(aclGetTensorDescSize(scalar), 4u);
    aclDestroyTensorDesc(scalar);

    Desc unknown(ACL_FLOAT, {-1, 3}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescNumDims(unknown.get()), 2u);
    EXPECT_EQ(aclGetTensorDescDim(unknown.get(), 0), -1);
    EXPECT_EQ(aclGetTensorDescElementCount(unknown.get()), 0u);
    EXPECT_EQ(aclGetTensorDescSize(unknown.get()), 0u);

    Desc rank(ACL_FLOAT, {-2}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescNumDims(rank.get()), static_cast<size_t>(ACL_UNKNOWN_RANK));
    EXPECT_EQ(aclGetTensorDescElementCount(rank.get()), 0u);

    // The "unused optional input" placeholder.
    aclTensorDesc *none = aclCreateTensorDesc(ACL_DT_UNDEFINED, 0, nullptr, ACL_FORMAT_UNDEFINED);
    ASSERT_NE(none, nullptr);
    EXPECT_EQ(aclGetTensorDescSize(none), 0u);
    EXPECT_EQ(aclGetTensorDescType(none), ACL_DT_UNDEFINED);
    aclDestroyTensorDesc(none);
}

TEST(TensorDesc, CreateRefusesBadArguments) {
    const int64_t dims[2] = {2, 3};
    EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, -1, dims, ACL_FORMAT_ND), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "numDims -1")) << RecentErrMsg();
    EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, 2, nullptr, ACL_FORMAT_ND), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "dims is NULL")) << RecentErrMsg();
    const int64_t bad[2] = {2, -3};
    EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, 2, bad, ACL_FORMAT_ND), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "dims[1] = -3")) << RecentErrMsg();
    const int64_t rank_not_alone[2] = {-2, 3};
    EXPECT_EQ(aclCreateTensorDesc(ACL_FLOAT, 2, rank_not_alone, ACL_FORMAT_ND), nullptr);
}

TEST(TensorDesc, SizeOverflowIsZero) {
    Desc big(ACL_FLOAT, {INT64_MAX, INT64_MAX}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescElementCount(big.get()), 0u);
    EXPECT_EQ(aclGetTensorDescSize(big.get()), 0u);
    Desc almost(ACL_DOUBLE, {static_cast<int64_t>(SIZE_MAX / 4)}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescElementCount(almost.get()), SIZE_MAX / 4);
    EXPECT_EQ(aclGetTensorDescSize(almost.get()), 0u);  // x8 bytes overflows
}

TEST(TensorDesc, NullAndUnknownDescsGetNullValues) {
    for (aclTensorDesc *d : {static_cast<aclTensorDesc *>(nullptr), Bogus()}) {
        EXPECT_EQ(aclGetTensorDescType(d), ACL_DT_UNDEFINED);
        EXPECT_EQ(aclGetTensorDescFormat(d), ACL_FORMAT_UNDEFINED);
        EXPECT_EQ(aclGetTensorDescSize(d), 0u);
        EXPECT_EQ(aclGetTensorDescElementCount(d), 0u);
        EXPECT_EQ(aclGetTensorDescNumDims(d), 0u);
        EXPECT_EQ(aclGetTensorDescDim(d, 0), -1);
        int64_t dim = 7;
        EXPECT_EQ(aclGetTensorDescDimV2(d, 0, &dim), ACL_ERROR_INVALID_PARAM);
        int64_t range[2];
        EXPECT_EQ(aclGetTensorDescDimRange(d, 0, 2, range), ACL_ERROR_INVALID_PARAM);
        EXPECT_STREQ(aclGetTensorDescName(d), "");
        EXPECT_EQ(aclGetTensorDescAddress(d), nullptr);
        const int64_t dims[1] = {1};
        EXPECT_EQ(aclSetTensorShape(d, 1, dims), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclSetTensorStorageShape(d, 1, dims), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclSetTensorOriginShape(d, 1, dims), ACL_ERROR_INVALID_PARAM);
        int64_t pairs[1][2] = {{1, 2}};
        EXPECT_EQ(aclSetTensorShapeRange(d, 1, pairs), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclSetTensorValueRange(d, 1, pairs), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclSetTensorDynamicInput(d, "x"), ACL_ERROR_INVALID_PARAM);
        char byte = 1;
        EXPECT_EQ(aclSetTensorConst(d, &byte, 1), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclSetTensorPlaceMent(d, ACL_MEMTYPE_HOST), ACL_ERROR_INVALID_PARAM);
        aclTensorDesc *out = nullptr;
        EXPECT_EQ(aclTransTensorDescFormat(d, ACL_FORMAT_NHWC, &out), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(out, nullptr);
        aclSetTensorDescName(d, "ignored");  // void: must not crash
    }
    EXPECT_TRUE(Contains(RecentErrMsg(), "unknown or already destroyed")) << RecentErrMsg();
    // Format setters: NULL is ignored with success (CANN); an unknown pointer is refused.
    EXPECT_EQ(aclSetTensorFormat(nullptr, ACL_FORMAT_NCHW), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorStorageFormat(nullptr, ACL_FORMAT_NCHW), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorOriginFormat(nullptr, ACL_FORMAT_NCHW), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorFormat(Bogus(), ACL_FORMAT_NCHW), ACL_ERROR_INVALID_PARAM);
    aclDestroyTensorDesc(nullptr);
    aclDestroyTensorDesc(Bogus());
    EXPECT_TRUE(Contains(RecentErrMsg(), "unknown or already destroyed")) << RecentErrMsg();
}

TEST(TensorDesc, DestroyedDescIsRefused) {
    const int64_t dims[1] = {4};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    ASSERT_NE(d, nullptr);
    aclDestroyTensorDesc(d);
    // The pointer may be reused by a later allocation; only check while nothing else was created.
    EXPECT_EQ(aclGetTensorDescType(d), ACL_DT_UNDEFINED);
    aclDestroyTensorDesc(d);  // double destroy: refused, no crash
    EXPECT_TRUE(Contains(RecentErrMsg(), "already destroyed")) << RecentErrMsg();
}

TEST(TensorDesc, DimIndexOutOfRange) {
    Desc d(ACL_FLOAT, {5}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescDim(d.get(), 1), -1);
    int64_t dim = 9;
    EXPECT_EQ(aclGetTensorDescDimV2(d.get(), 1, &dim), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "index 1 is out of range")) << RecentErrMsg();
    EXPECT_EQ(aclGetTensorDescDimV2(d.get(), 0, nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(TensorDesc, ShapeSettersWriteStorageExceptOrigin) {
    Desc d(ACL_FLOAT, {2, 3}, ACL_FORMAT_NCHW);
    const int64_t other[3] = {4, 5, 6};
    EXPECT_EQ(aclSetTensorShape(d.get(), 3, other), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorStorageShape(d.get(), 3, other), ACL_SUCCESS);
    EXPECT_EQ(Dims(d.get()), (std::vector<int64_t>{2, 3}));  // storage only: the getters do not see it
    EXPECT_EQ(aclSetTensorFormat(d.get(), ACL_FORMAT_NHWC), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorStorageFormat(d.get(), ACL_FORMAT_NC1HWC0), ACL_SUCCESS);
    EXPECT_EQ(aclGetTensorDescFormat(d.get()), ACL_FORMAT_NCHW);

    EXPECT_EQ(aclSetTensorOriginShape(d.get(), 3, other), ACL_SUCCESS);
    EXPECT_EQ(Dims(d.get()), (std::vector<int64_t>{4, 5, 6}));
    EXPECT_EQ(aclGetTensorDescElementCount(d.get()), 120u);
    EXPECT_EQ(aclSetTensorOriginFormat(d.get(), ACL_FORMAT_ND), ACL_SUCCESS);
    EXPECT_EQ(aclGetTensorDescFormat(d.get()), ACL_FORMAT_ND);

    EXPECT_EQ(aclSetTensorOriginShape(d.get(), 0, nullptr), ACL_SUCCESS);  // scalar
    EXPECT_EQ(aclGetTensorDescNumDims(d.get()), 0u);
    EXPECT_EQ(aclSetTensorOriginShape(d.get(), 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetTensorShape(d.get(), -1, other), ACL_ERROR_INVALID_PARAM);
}

TEST(TensorDesc, ShapeRanges) {
    Desc d(ACL_FLOAT, {16, -1}, ACL_FORMAT_ND);
    int64_t out[4] = {9, 9, 9, 9};
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 0, 2, out), ACL_ERROR_INVALID_PARAM);  // none set yet
    int64_t ranges[2][2] = {{16, 16}, {1, 128}};
    ASSERT_EQ(aclSetTensorShapeRange(d.get(), 2, ranges), ACL_SUCCESS);
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 1, 4, out), ACL_SUCCESS);
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(out[1], 128);
    EXPECT_EQ(out[2], 9);  // exactly two values written
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 1, 1, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "dimRangeNum 1")) << RecentErrMsg();
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 2, 2, out), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 0, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetTensorShapeRange(d.get(), 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetTensorShapeRange(d.get(), 0, nullptr), ACL_SUCCESS);  // clears
    EXPECT_EQ(aclGetTensorDescDimRange(d.get(), 0, 2, out), ACL_ERROR_INVALID_PARAM);
    int64_t values[1][2] = {{0, 10}};
    EXPECT_EQ(aclSetTensorValueRange(d.get(), 1, values), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorValueRange(d.get(), 1, nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(TensorDesc, NameDynamicInputConstPlacement) {
    Desc d(ACL_INT32, {2}, ACL_FORMAT_ND);
    aclSetTensorDescName(d.get(), "x");
    EXPECT_STREQ(aclGetTensorDescName(d.get()), "x");
    aclSetTensorDescName(d.get(), nullptr);
    EXPECT_STREQ(aclGetTensorDescName(d.get()), "");

    EXPECT_EQ(aclSetTensorDynamicInput(d.get(), "xs"), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorDynamicInput(d.get(), nullptr), ACL_ERROR_INVALID_PARAM);

    int32_t data[2] = {7, 8};
    EXPECT_EQ(aclSetTensorConst(d.get(), data, sizeof data), ACL_SUCCESS);
    data[0] = 0;  // copied: changing the source afterwards is harmless
    EXPECT_EQ(aclSetTensorConst(d.get(), nullptr, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetTensorConst(d.get(), data, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "length is 0")) << RecentErrMsg();

    EXPECT_EQ(aclSetTensorPlaceMent(d.get(), ACL_MEMTYPE_HOST), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorPlaceMent(d.get(), ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT), ACL_SUCCESS);
    EXPECT_EQ(aclSetTensorPlaceMent(d.get(), static_cast<aclMemType>(7)), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "memType 7")) << RecentErrMsg();
}

TEST(TensorDesc, TransFormat) {
    Desc nchw(ACL_FLOAT16, {1, 3, 4, 5}, ACL_FORMAT_NCHW);
    aclTensorDesc *out = nullptr;
    ASSERT_EQ(aclTransTensorDescFormat(nchw.get(), ACL_FORMAT_NHWC, &out), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(Dims(out), (std::vector<int64_t>{1, 4, 5, 3}));
    EXPECT_EQ(aclGetTensorDescFormat(out), ACL_FORMAT_NHWC);
    EXPECT_EQ(aclGetTensorDescType(out), ACL_FLOAT16);
    aclDestroyTensorDesc(out);
    EXPECT_EQ(aclGetTensorDescFormat(nchw.get()), ACL_FORMAT_NCHW);  // source unchanged

    ASSERT_EQ(aclTransTensorDescFormat(nchw.get(), ACL_FORMAT_HWCN, &out), ACL_SUCCESS);
    EXPECT_EQ(Dims(out), (std::vector<int64_t>{4, 5, 3, 1}));
    aclDestroyTensorDesc(out);
    ASSERT_EQ(aclTransTensorDescFormat(nchw.get(), ACL_FORMAT_NC1HWC0, &out), ACL_SUCCESS);
    EXPECT_EQ(Dims(out), (std::vector<int64_t>{1, 1, 4, 5, 16}));
    aclDestroyTensorDesc(out);
    ASSERT_EQ(aclTransTensorDescFormat(nchw.get(), ACL_FORMAT_FRACTAL_Z, &out), ACL_SUCCESS);
    EXPECT_EQ(Dims(out), (std::vector<int64_t>{20, 1, 16, 16}));
    aclDestroyTensorDesc(out);

    Desc nd(ACL_INT8, {3, 40, 70}, ACL_FORMAT_ND);
    ASSERT_EQ(aclTransTensorDescFormat(nd.get(), ACL_FORMAT_FRACTAL_NZ, &out), ACL_SUCCESS);
    EXPECT_EQ(Dims(out), (std::vector<int64_t>{3, 3, 3, 16, 32}));  // n=70 -> 3 x C0 32; m=40 -> 3 x 16
    aclDestroyTensorDesc(out);

    Desc nc1(ACL_FLOAT16, {1, 1, 4, 5, 16}, ACL_FORMAT_NC1HWC0);
    out = nullptr;
    EXPECT_EQ(aclTransTensorDescFormat(nc1.get(), ACL_FORMAT_NCHW, &out), ACL_ERROR_FORMAT_NOT_MATCH);
    EXPECT_EQ(out, nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "NC1HWC0")) << RecentErrMsg();
    Desc three(ACL_FLOAT, {3, 4, 5}, ACL_FORMAT_NCHW);
    EXPECT_EQ(aclTransTensorDescFormat(three.get(), ACL_FORMAT_NHWC, &out), ACL_ERROR_FORMAT_NOT_MATCH);
    EXPECT_EQ(aclTransTensorDescFormat(nchw.get(), ACL_FORMAT_NHWC, nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(TensorDesc, ByIndexIsPointerArithmetic) {
    Desc d(ACL_FLOAT, {1}, ACL_FORMAT_ND);
    EXPECT_EQ(aclGetTensorDescByIndex(d.get(), 0), d.get());
    // aclTensorDesc is incomplete here: compare the steps between elements.
    const auto at = [&](size_t i) { return reinterpret_cast<uintptr_t>(aclGetTensorDescByIndex(d.get(), i)); };
    EXPECT_GT(at(1), at(0));
    EXPECT_EQ(at(2) - at(1), at(1) - at(0));
    EXPECT_EQ(aclGetTensorDescByIndex(nullptr, 0), nullptr);
    // Past a lone desc: not a desc, so every getter refuses it.
    EXPECT_EQ(aclGetTensorDescType(aclGetTensorDescByIndex(d.get(), 1)), ACL_DT_UNDEFINED);
}

TEST(TensorDesc, ConcurrentUseIsSafe) {
    Desc shared(ACL_FLOAT, {2, 2}, ACL_FORMAT_ND);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                const int64_t dims[2] = {t + 1, i};
                EXPECT_EQ(aclSetTensorOriginShape(shared.get(), 2, dims), ACL_SUCCESS);
                (void)aclGetTensorDescElementCount(shared.get());
                aclTensorDesc *own = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
                EXPECT_EQ(aclGetTensorDescDim(own, 0), t + 1);
                aclDestroyTensorDesc(own);
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(aclGetTensorDescNumDims(shared.get()), 2u);
}

/* ---- dataset descs (no model needed) ---- */

TEST(DatasetTensorDesc, SetCopiesGetReturnsTheDatasetsOwn) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    ASSERT_NE(ds, nullptr);
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    Desc d(ACL_FLOAT, {2, 3}, ACL_FORMAT_ND);
    EXPECT_EQ(aclmdlSetDatasetTensorDesc(ds, d.get(), 0), ACL_ERROR_INVALID_PARAM);  // no buffer 0 yet
    EXPECT_TRUE(Contains(RecentErrMsg(), "index 0 is out of range")) << RecentErrMsg();
    ASSERT_EQ(aclmdlAddDatasetBuffer(ds, b), ACL_SUCCESS);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(ds, 0), nullptr);  // none set
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(ds, d.get(), 0), ACL_SUCCESS);
    aclTensorDesc *held = aclmdlGetDatasetTensorDesc(ds, 0);
    ASSERT_NE(held, nullptr);
    EXPECT_NE(held, d.get());  // a copy
    EXPECT_EQ(Dims(held), (std::vector<int64_t>{2, 3}));
    const int64_t other[1] = {9};
    EXPECT_EQ(aclSetTensorOriginShape(d.get(), 1, other), ACL_SUCCESS);
    EXPECT_EQ(Dims(held), (std::vector<int64_t>{2, 3}));  // later changes to the user's desc are not seen
    aclDestroyTensorDesc(held);  // the dataset's: refused
    EXPECT_TRUE(Contains(RecentErrMsg(), "belongs to a dataset")) << RecentErrMsg();
    EXPECT_EQ(aclGetTensorDescNumDims(held), 2u);
    // Setting again updates the dataset's desc; NULL removes it.
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(ds, d.get(), 0), ACL_SUCCESS);
    EXPECT_EQ(Dims(aclmdlGetDatasetTensorDesc(ds, 0)), (std::vector<int64_t>{9}));
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(ds, nullptr, 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(ds, 0), nullptr);
    ASSERT_EQ(aclmdlSetDatasetTensorDesc(ds, d.get(), 0), ACL_SUCCESS);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(ds, 1), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "index 1 is out of range")) << RecentErrMsg();
    EXPECT_EQ(aclmdlSetDatasetTensorDesc(ds, Bogus(), 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetDatasetTensorDesc(nullptr, d.get(), 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlGetDatasetTensorDesc(nullptr, 0), nullptr);
    // Destroying the dataset frees its desc: the pointer is no longer a desc.
    held = aclmdlGetDatasetTensorDesc(ds, 0);
    EXPECT_EQ(aclmdlDestroyDataset(ds), ACL_SUCCESS);
    EXPECT_EQ(aclGetTensorDescType(held), ACL_DT_UNDEFINED);
    EXPECT_EQ(aclmdlSetDatasetTensorDesc(ds, d.get(), 0), ACL_ERROR_INVALID_PARAM);
    // The user's desc is untouched by all of it.
    EXPECT_EQ(Dims(d.get()), (std::vector<int64_t>{9}));
    aclDestroyDataBuffer(b);
}

}  // namespace
