#include "core/settings.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/errors.hpp"

namespace cb {
namespace {

constexpr size_t KiB = size_t{1} << 10, MiB = size_t{1} << 20, GiB = size_t{1} << 30,
                 TiB = size_t{1} << 40;

// Sets (or, with nullptr, unsets) a variable for the duration of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// The message of the UsageError `f` throws ("" if it throws none).
template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kVar = "CB_SETTINGS_TEST_VALUE";

TEST(Settings, PlainIntegers) {
  EXPECT_EQ(parse_byte_size("0"), 0u);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("007"), 7u);
  EXPECT_EQ(parse_byte_size("18446744073709551615"), SIZE_MAX);
}

TEST(Settings, BinarySuffixes) {
  EXPECT_EQ(parse_byte_size("256K"), 256 * KiB);
  EXPECT_EQ(parse_byte_size("16M"), 16 * MiB);
  EXPECT_EQ(parse_byte_size("8G"), 8 * GiB);
  EXPECT_EQ(parse_byte_size("2T"), 2 * TiB);
  EXPECT_EQ(parse_byte_size("256KiB"), 256 * KiB);
  EXPECT_EQ(parse_byte_size("256KB"), 256 * KiB);
  EXPECT_EQ(parse_byte_size("512B"), 512u);
  EXPECT_EQ(parse_byte_size("0K"), 0u);
}

TEST(Settings, SuffixesInAnyCase) {
  EXPECT_EQ(parse_byte_size("1m"), MiB);
  EXPECT_EQ(parse_byte_size("1k"), KiB);
  EXPECT_EQ(parse_byte_size("3g"), 3 * GiB);
  EXPECT_EQ(parse_byte_size("1t"), TiB);
  EXPECT_EQ(parse_byte_size("4kib"), 4 * KiB);
  EXPECT_EQ(parse_byte_size("4KIB"), 4 * KiB);
  EXPECT_EQ(parse_byte_size("4mb"), 4 * MiB);
  EXPECT_EQ(parse_byte_size("64b"), 64u);
}

TEST(Settings, RejectsBadText) {
  for (const char* bad :
       {"",    "K",  "8Q", "-1",  "-4K", "+4",   "1.5",   "1.5G", "0x10", "8GG",
        "8 G", " 8", "8 ", "8iB", "8Gi", "8GBs", "8KiBB", "1e3",  "abc",  "4 096"}) {
    const std::string msg = usage_error([&] { parse_byte_size(bad); });
    EXPECT_NE(msg.find("expected a byte size such as 4096, 256K, 8G"), std::string::npos)
        << "'" << bad << "': " << msg;
  }
}

TEST(Settings, RejectsOverflow) {
  for (const char* big : {"18446744073709551616", "99999999999999999999999", "16777216T",
                          "17179869184G", "18014398509481984M", "18014398509481984K"}) {
    const std::string msg = usage_error([&] { parse_byte_size(big); });
    EXPECT_NE(msg.find("too large"), std::string::npos) << big << ": " << msg;
  }
  EXPECT_EQ(parse_byte_size("16777215T"), 16777215 * TiB);  // the largest in T
}

TEST(Settings, FormatsWithTheLargestExactSuffix) {
  EXPECT_EQ(format_byte_size(0), "0");
  EXPECT_EQ(format_byte_size(64), "64");
  EXPECT_EQ(format_byte_size(4097), "4097");
  EXPECT_EQ(format_byte_size(256 * KiB), "256K");
  EXPECT_EQ(format_byte_size(1536 * KiB), "1536K");
  EXPECT_EQ(format_byte_size(4 * GiB), "4G");
  EXPECT_EQ(format_byte_size(TiB), "1T");
  for (size_t b : {size_t{0}, size_t{1}, 3 * MiB, 1536 * KiB, SIZE_MAX})
    EXPECT_EQ(parse_byte_size(format_byte_size(b)), b);
}

TEST(Settings, TextUnsetOrEmptyIsNothing) {
  {
    ScopedEnv env(kVar, nullptr);
    EXPECT_FALSE(setting_text(kVar).has_value());
  }
  {
    ScopedEnv env(kVar, "");
    EXPECT_FALSE(setting_text(kVar).has_value());
  }
  ScopedEnv env(kVar, "abc");
  EXPECT_EQ(setting_text(kVar), "abc");
}

TEST(Settings, BytesFromTheEnvironment) {
  {
    ScopedEnv env(kVar, nullptr);
    EXPECT_EQ(setting_bytes(kVar, 4 * GiB, 1, 8 * GiB), 4 * GiB);
  }
  {
    ScopedEnv env(kVar, "");
    EXPECT_EQ(setting_bytes(kVar, 123, 1, 8 * GiB), 123u);
  }
  {
    ScopedEnv env(kVar, "8G");
    EXPECT_EQ(setting_bytes(kVar, 4 * GiB, 1, 8 * GiB), 8 * GiB);
  }
  {
    ScopedEnv env(kVar, "64MiB");
    EXPECT_EQ(setting_bytes(kVar, 4 * GiB, 1, 8 * GiB), 64 * MiB);
  }
  // The fallback is not range-checked (SIZE_MAX can mean "never").
  ScopedEnv env(kVar, nullptr);
  EXPECT_EQ(setting_bytes(kVar, SIZE_MAX, 1, 10), SIZE_MAX);
}

TEST(Settings, BadBytesNameTheVariable) {
  ScopedEnv env("CB_SHM_HEAP_BYTES", "8Q");
  EXPECT_EQ(usage_error([] { setting_bytes("CB_SHM_HEAP_BYTES", 4 * GiB, 1, TiB); }),
            "CB_SHM_HEAP_BYTES=8Q: expected a byte size such as 4096, 256K, 8G");
}

TEST(Settings, BytesOutOfRange) {
  {
    ScopedEnv env(kVar, "32");
    EXPECT_EQ(usage_error([] { setting_bytes(kVar, 256 * KiB, 64, GiB); }),
              std::string(kVar) + "=32: must be between 64 and 1G");
  }
  {
    ScopedEnv env(kVar, "2G");
    EXPECT_EQ(usage_error([] { setting_bytes(kVar, 256 * KiB, 64, GiB); }),
              std::string(kVar) + "=2G: must be between 64 and 1G");
  }
  {
    ScopedEnv env(kVar, "99999999999999999999");
    EXPECT_EQ(usage_error([] { setting_bytes(kVar, 256 * KiB, 64, GiB); }),
              std::string(kVar) + "=99999999999999999999: must be between 64 and 1G");
  }
  ScopedEnv env(kVar, "1G");
  EXPECT_EQ(setting_bytes(kVar, 256 * KiB, 64, GiB), GiB);  // bounds are inclusive
}

TEST(Settings, Integers) {
  {
    ScopedEnv env(kVar, nullptr);
    EXPECT_EQ(setting_int(kVar, 8, 1, 1 << 20), 8);
  }
  {
    ScopedEnv env(kVar, "16");
    EXPECT_EQ(setting_int(kVar, 8, 1, 1 << 20), 16);
  }
  {
    ScopedEnv env(kVar, "-3");
    EXPECT_EQ(setting_int(kVar, 0, -5, 5), -3);
  }
  for (const char* bad : {"8K", "1.5", "abc", "+4", " 4", "4 ", "0x8", "--1", "-"}) {
    ScopedEnv env(kVar, bad);
    EXPECT_EQ(usage_error([] { setting_int(kVar, 8, 1, 1 << 20); }),
              std::string(kVar) + "=" + bad + ": expected an integer");
  }
}

TEST(Settings, IntegersOutOfRange) {
  {
    ScopedEnv env("CB_ALLTOALL_WINDOW", "0");
    EXPECT_EQ(usage_error([] { setting_int("CB_ALLTOALL_WINDOW", 8, 1, 1048576); }),
              "CB_ALLTOALL_WINDOW=0: must be between 1 and 1048576");
  }
  {
    ScopedEnv env("CB_ALLTOALL_WINDOW", "-1");
    EXPECT_EQ(usage_error([] { setting_int("CB_ALLTOALL_WINDOW", 8, 1, 1048576); }),
              "CB_ALLTOALL_WINDOW=-1: must be between 1 and 1048576");
  }
  ScopedEnv env("CB_ALLTOALL_WINDOW", "99999999999999999999");
  EXPECT_EQ(usage_error([] { setting_int("CB_ALLTOALL_WINDOW", 8, 1, 1048576); }),
            "CB_ALLTOALL_WINDOW=99999999999999999999: must be between 1 and 1048576");
}

TEST(Settings, Flags) {
  {
    ScopedEnv env(kVar, nullptr);
    EXPECT_TRUE(setting_flag(kVar, true));
    EXPECT_FALSE(setting_flag(kVar, false));
  }
  for (const char* yes : {"1", "on", "yes", "true", "ON", "Yes", "TRUE"}) {
    ScopedEnv env(kVar, yes);
    EXPECT_TRUE(setting_flag(kVar, false)) << yes;
  }
  for (const char* no : {"0", "off", "no", "false", "OFF", "No", "False"}) {
    ScopedEnv env(kVar, no);
    EXPECT_FALSE(setting_flag(kVar, true)) << no;
  }
  for (const char* bad : {"2", "maybe", "y", "enable", " 1", "00"}) {
    ScopedEnv env(kVar, bad);
    EXPECT_EQ(usage_error([] { setting_flag(kVar, true); }),
              std::string(kVar) + "=" + bad + ": expected 0/1, on/off, yes/no or true/false");
  }
}

}  // namespace
}  // namespace cb
