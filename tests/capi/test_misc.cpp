/*
 * Version, SoC name, run mode, fp16 conversions (rounding, inf, NaN, subnormals),
 * data type sizes and application logging. Contract: docs/runtime.md; acl_base.h;
 * spec/pyacl-api.md §1, §4.1.
 */
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "raw_enums.h"
#include "test_util.h"

namespace {

using acltest::AclTest;
using acltest::RunIsolated;
using acltest::ScopedEnv;

uint32_t FloatBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
float BitsFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
bool HalfIsNan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }

/* Our own reference for binary16 -> binary32 (exact). */
float RefHalfToFloat(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1F;
    const uint32_t man = h & 0x3FF;
    if (exp == 0x1F) return BitsFloat(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    return BitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

/* Our own reference for binary32 -> binary16, round to nearest even (via double math). */
uint16_t RefFloatToHalf(float f) {
    const uint32_t u = FloatBits(f);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7E00);
    double a = std::fabs(static_cast<double>(f));
    if (std::isinf(f)) return static_cast<uint16_t>(sign | 0x7C00);
    // Smallest step for the binade of a: subnormal range below 2^-14 uses 2^-24.
    int e;
    (void)std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exp2 = e - 1;         // a in [2^exp2, 2^(exp2+1))
    if (exp2 < -14) exp2 = -14;
    double ulp = std::ldexp(1.0, exp2 - 10);
    double q = a / ulp;
    double r = std::nearbyint(q);  // default rounding mode: nearest even
    double v = r * ulp;
    if (v >= 65520.0 || v > 65504.0) return static_cast<uint16_t>(sign | 0x7C00);
    // Encode v exactly.
    if (v < std::ldexp(1.0, -14)) {
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(v / std::ldexp(1.0, -24)));
    }
    int ve;
    double vm = std::frexp(v, &ve);  // v = vm * 2^ve, vm in [0.5, 1)
    uint16_t hexp = static_cast<uint16_t>(ve - 1 + 15);
    uint16_t hman = static_cast<uint16_t>(std::lround((vm * 2.0 - 1.0) * 1024.0));
    return static_cast<uint16_t>(sign | (hexp << 10) | hman);
}

// ---------------------------------------------------------------- version, soc, run mode

TEST(MiscTest, VersionMatchesTheHeader) {
    int32_t major = -1, minor = -1, patch = -1;
    EXPECT_EQ(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    EXPECT_EQ(major, ACL_MAJOR_VERSION);
    EXPECT_EQ(minor, ACL_MINOR_VERSION);
    EXPECT_EQ(patch, ACL_PATCH_VERSION);
    EXPECT_EQ(major, 1);
    EXPECT_EQ(minor, 15);
}

TEST(MiscTest, VersionNullOutputs) {
    int32_t a = 0, b = 0;
    EXPECT_EQ(aclrtGetVersion(nullptr, &a, &b), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetVersion(&a, nullptr, &b), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetVersion(&a, &b, nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST(MiscTest, SocNameDefaultBeforeAndAfterInit) {
    ScopedEnv soc("OPENACL_SOC_NAME", nullptr);
    const char *before = aclrtGetSocName();
    ASSERT_NE(before, nullptr);
    EXPECT_STREQ(before, "Ascend310P3");
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    const char *after = aclrtGetSocName();
    ASSERT_NE(after, nullptr);
    EXPECT_STREQ(after, "Ascend310P3");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(MiscTest, RunModeIsHostBeforeAndAfterInit) {
    aclrtRunMode mode = ACL_DEVICE;
    EXPECT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
    EXPECT_EQ(mode, ACL_HOST);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    mode = ACL_DEVICE;
    EXPECT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
    EXPECT_EQ(mode, ACL_HOST);
    EXPECT_EQ(aclrtGetRunMode(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// ---------------------------------------------------------------- fp16

TEST(Fp16Test, KnownValuesToHalf) {
    struct {
        float f;
        uint16_t h;
    } cases[] = {
        {0.0f, 0x0000},     {-0.0f, 0x8000},      {1.0f, 0x3C00},     {-1.0f, 0xBC00},    {2.0f, 0x4000},
        {-2.0f, 0xC000},    {0.5f, 0x3800},       {0.1f, 0x2E66},     {3.140625f, 0x4248}, {65504.0f, 0x7BFF},
        {-65504.0f, 0xFBFF}, {0.333333343f, 0x3555}, {1024.0f, 0x6400}, {2048.0f, 0x6800},
    };
    for (auto c : cases) EXPECT_EQ(aclFloatToFloat16(c.f), c.h) << c.f;
}

TEST(Fp16Test, KnownValuesToFloat) {
    EXPECT_EQ(aclFloat16ToFloat(0x3C00), 1.0f);
    EXPECT_EQ(aclFloat16ToFloat(0xC000), -2.0f);
    EXPECT_EQ(aclFloat16ToFloat(0x7BFF), 65504.0f);
    EXPECT_EQ(aclFloat16ToFloat(0x3555), 0.333251953125f);
    EXPECT_EQ(FloatBits(aclFloat16ToFloat(0x8000)), 0x80000000u);  // -0 keeps its sign
    EXPECT_EQ(aclFloat16ToFloat(0x0000), 0.0f);
}

TEST(Fp16Test, RoundToNearestEven) {
    // Halfway between 1 and 1 + 2^-10: ties to even (1).
    EXPECT_EQ(aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
    // Halfway between 1 + 2^-10 and 1 + 2^-9: ties to even (1 + 2^-9).
    EXPECT_EQ(aclFloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
    // Just above halfway rounds up; just below rounds down.
    EXPECT_EQ(aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
    EXPECT_EQ(aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)), 0x3C00);
    // Rounding that carries into the exponent.
    EXPECT_EQ(aclFloatToFloat16(2.0f - std::ldexp(1.0f, -12)), 0x4000);
    // Negative values round symmetrically.
    EXPECT_EQ(aclFloatToFloat16(-(1.0f + 3 * std::ldexp(1.0f, -11))), 0xBC02);
}

TEST(Fp16Test, OverflowGivesInfinity) {
    EXPECT_EQ(aclFloatToFloat16(65519.99f), 0x7BFF);  // rounds down to max
    EXPECT_EQ(aclFloatToFloat16(65520.0f), 0x7C00);   // halfway to 2^16: ties to even -> inf
    EXPECT_EQ(aclFloatToFloat16(65536.0f), 0x7C00);
    EXPECT_EQ(aclFloatToFloat16(1e6f), 0x7C00);
    EXPECT_EQ(aclFloatToFloat16(-1e6f), 0xFC00);
    EXPECT_EQ(aclFloatToFloat16(std::numeric_limits<float>::max()), 0x7C00);
    EXPECT_EQ(aclFloatToFloat16(std::numeric_limits<float>::infinity()), 0x7C00);
    EXPECT_EQ(aclFloatToFloat16(-std::numeric_limits<float>::infinity()), 0xFC00);
    EXPECT_TRUE(std::isinf(aclFloat16ToFloat(0x7C00)));
    EXPECT_GT(aclFloat16ToFloat(0x7C00), 0.0f);
    EXPECT_TRUE(std::isinf(aclFloat16ToFloat(0xFC00)));
    EXPECT_LT(aclFloat16ToFloat(0xFC00), 0.0f);
}

TEST(Fp16Test, NanStaysNan) {
    EXPECT_TRUE(HalfIsNan(aclFloatToFloat16(std::numeric_limits<float>::quiet_NaN())));
    EXPECT_TRUE(HalfIsNan(aclFloatToFloat16(-std::numeric_limits<float>::quiet_NaN())));
    // A NaN whose payload lives only in the low bits must not become infinity.
    EXPECT_TRUE(HalfIsNan(aclFloatToFloat16(BitsFloat(0x7F800001u))));
    EXPECT_TRUE(HalfIsNan(aclFloatToFloat16(BitsFloat(0xFF800001u))));
    for (uint16_t h : {uint16_t{0x7E00}, uint16_t{0x7C01}, uint16_t{0xFE00}, uint16_t{0x7FFF}}) {
        EXPECT_TRUE(std::isnan(aclFloat16ToFloat(h))) << std::hex << h;
    }
    // Payloads are kept half -> float (mantissa moved up by 13 bits).
    EXPECT_EQ(FloatBits(aclFloat16ToFloat(0x7C01)), 0x7F802000u);
    EXPECT_EQ(FloatBits(aclFloat16ToFloat(0xFE00)), 0xFFC00000u);
}

TEST(Fp16Test, Subnormals) {
    const float tiny = std::ldexp(1.0f, -24);  // smallest half subnormal
    EXPECT_EQ(aclFloatToFloat16(tiny), 0x0001);
    EXPECT_EQ(aclFloatToFloat16(-tiny), 0x8001);
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -25)), 0x0000);     // halfway to 0: even
    EXPECT_EQ(aclFloatToFloat16(-std::ldexp(1.0f, -25)), 0x8000);    // keeps the sign
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.5f, -25)), 0x0001);     // above halfway
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.5f, -24)), 0x0002);     // 1.5 ulp: ties to even
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(2.5f, -24)), 0x0002);     // 2.5 ulp: ties to even
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1023.0f, -24)), 0x03FF);  // largest subnormal
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into the normals
    EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -30)), 0x0000);
    EXPECT_EQ(aclFloatToFloat16(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(aclFloat16ToFloat(0x0001), tiny);
    EXPECT_EQ(aclFloat16ToFloat(0x03FF), std::ldexp(1023.0f, -24));
    EXPECT_EQ(aclFloat16ToFloat(0x8001), -tiny);
}

TEST(Fp16Test, EveryHalfConvertsExactlyAndRoundTrips) {
    for (uint32_t h = 0; h <= 0xFFFF; ++h) {
        const uint16_t hh = static_cast<uint16_t>(h);
        const float f = aclFloat16ToFloat(hh);
        if (HalfIsNan(hh)) {
            ASSERT_TRUE(std::isnan(f)) << std::hex << h;
            ASSERT_TRUE(HalfIsNan(aclFloatToFloat16(f))) << std::hex << h;
            continue;
        }
        ASSERT_EQ(FloatBits(f), FloatBits(RefHalfToFloat(hh))) << std::hex << h;
        ASSERT_EQ(aclFloatToFloat16(f), hh) << std::hex << h;
    }
}

TEST(Fp16Test, RandomFloatsMatchAReference) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<uint32_t> bits;
    int checked = 0;
    for (int i = 0; i < 200000; ++i) {
        // Bias toward the half range: exponents 100..145 cover subnormals, normals, overflow.
        uint32_t u = bits(rng);
        if (i % 2 == 0) u = (u & 0x807FFFFFu) | ((100u + (u >> 23) % 46u) << 23);
        const float f = BitsFloat(u);
        if (std::isnan(f)) continue;
        ASSERT_EQ(aclFloatToFloat16(f), RefFloatToHalf(f)) << std::hex << u;
        ++checked;
    }
    EXPECT_GT(checked, 100000);
#if defined(__FLT16_MAX__)
    // The compiler's own _Float16 conversion rounds to nearest even too.
    for (int i = 0; i < 100000; ++i) {
        uint32_t u = (bits(rng) & 0x807FFFFFu) | ((100u + bits(rng) % 46u) << 23);
        const float f = BitsFloat(u);
        _Float16 h = static_cast<_Float16>(f);
        uint16_t hb;
        std::memcpy(&hb, &h, sizeof hb);
        ASSERT_EQ(aclFloatToFloat16(f), hb) << std::hex << u;
    }
#endif
}

// ---------------------------------------------------------------- data type sizes

TEST(DataTypeSizeTest, KnownTypes) {
    struct {
        aclDataType t;
        size_t size;
    } cases[] = {
        {ACL_FLOAT, 4},          {ACL_FLOAT16, 2},     {ACL_INT8, 1},          {ACL_INT32, 4},
        {ACL_UINT8, 1},          {ACL_INT16, 2},       {ACL_UINT16, 2},        {ACL_UINT32, 4},
        {ACL_INT64, 8},          {ACL_UINT64, 8},      {ACL_DOUBLE, 8},        {ACL_BOOL, 1},
        {ACL_COMPLEX64, 8},      {ACL_COMPLEX128, 16}, {ACL_BF16, 2},          {ACL_INT4, 1},
        {ACL_UINT1, 1},          {ACL_COMPLEX32, 4},   {ACL_HIFLOAT8, 1},      {ACL_FLOAT8_E5M2, 1},
        {ACL_FLOAT8_E4M3FN, 1},  {ACL_FLOAT8_E8M0, 1},
    };
    for (auto c : cases) EXPECT_EQ(aclDataTypeSize(c.t), c.size) << "type " << c.t;
}

TEST(DataTypeSizeTest, UndefinedStringAndUnknownAreZero) {
    EXPECT_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0u);
    EXPECT_EQ(aclDataTypeSize(ACL_STRING), 0u);
    for (int t : {5, 14, 15, 18, 26, 28, 31, 32, 42, 100, 1000, -2, -100}) {
        EXPECT_EQ(raw_aclDataTypeSize(t), 0u) << "type " << t;
    }
}

TEST(DataTypeSizeTest, WorksInitialisedToo) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclDataTypeSize(ACL_FLOAT16), 2u);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// ---------------------------------------------------------------- app log

class AppLogTest : public AclTest {};

TEST_F(AppLogTest, EveryLevelAndOddArgumentsDoNotCrash) {
    for (aclLogLevel lvl : {ACL_DEBUG, ACL_INFO, ACL_WARNING, ACL_ERROR}) {
        ACL_APP_LOG(lvl, "level %d value %s %f", static_cast<int>(lvl), "text", 1.5);
    }
    raw_aclAppLog(99, "bad level");
    raw_aclAppLog(-1, "bad level");
    aclAppLog(ACL_ERROR, nullptr, nullptr, 0, "null func and file");
    aclAppLog(ACL_ERROR, "f", "file.c", 1, nullptr);
    std::string longmsg(100000, 'x');
    aclAppLog(ACL_ERROR, "f", "file.c", 1, "%s", longmsg.c_str());
    aclAppLog(ACL_ERROR, "f", "file.c", 1, "%s", "percent %d in an argument is not a format");
    SUCCEED();
}

TEST(AppLogOutputTest, OpenaclLogPrintsToStderrAtOrAboveItsLevel) {
    RunIsolated([] {
        ScopedEnv log("OPENACL_LOG", "warning");
        ScopedEnv slog("ASCEND_SLOG_PRINT_TO_STDOUT", nullptr);
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ::testing::internal::CaptureStderr();
        aclAppLog(ACL_INFO, "fn", "file.c", 7, "quiet-line-%d", 1);
        aclAppLog(ACL_ERROR, "fn", "file.c", 8, "loud-line-%d", 42);
        std::fflush(stderr);
        std::string err = ::testing::internal::GetCapturedStderr();
        EXPECT_NE(err.find("loud-line-42"), std::string::npos) << err;
        EXPECT_EQ(err.find("quiet-line-1"), std::string::npos) << err;
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST(AppLogOutputTest, SlogPrintToStdoutHonoursGlobalLevel) {
    RunIsolated([] {
        ScopedEnv log("OPENACL_LOG", nullptr);
        ScopedEnv slog("ASCEND_SLOG_PRINT_TO_STDOUT", "1");
        ScopedEnv level("ASCEND_GLOBAL_LOG_LEVEL", "1");  // info and above
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        std::fflush(stdout);
        ::testing::internal::CaptureStdout();
        aclAppLog(ACL_DEBUG, "fn", "file.c", 7, "debug-line-%d", 3);
        aclAppLog(ACL_INFO, "fn", "file.c", 8, "info-line-%d", 4);
        std::fflush(stdout);
        std::string out = ::testing::internal::GetCapturedStdout();
        EXPECT_NE(out.find("info-line-4"), std::string::npos) << out;
        EXPECT_EQ(out.find("debug-line-3"), std::string::npos) << out;
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST(AppLogOutputTest, SilentByDefault) {
    RunIsolated([] {
        ScopedEnv log("OPENACL_LOG", nullptr);
        ScopedEnv slog("ASCEND_SLOG_PRINT_TO_STDOUT", nullptr);
        ScopedEnv level("ASCEND_GLOBAL_LOG_LEVEL", nullptr);
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        std::fflush(stdout);
        ::testing::internal::CaptureStdout();
        ::testing::internal::CaptureStderr();
        aclAppLog(ACL_ERROR, "fn", "file.c", 8, "should-not-print-%d", 5);
        std::fflush(stdout);
        std::fflush(stderr);
        std::string err = ::testing::internal::GetCapturedStderr();
        std::string out = ::testing::internal::GetCapturedStdout();
        EXPECT_EQ(err.find("should-not-print-5"), std::string::npos) << err;
        EXPECT_EQ(out.find("should-not-print-5"), std::string::npos) << out;
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

}  // namespace
