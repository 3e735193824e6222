// --off-cache, --vary-data and -u/--misalign: parsing, the sysfs cache reading, the ring
// and offset arithmetic, and the varied data (harness/placement.hpp, core/verify_values.hpp).
#include "harness/placement.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"
#include "gpu/memory.hpp"
#include "harness/options.hpp"
#include "parse_helpers.hpp"

namespace cb {
namespace {

using test::error_of;
using test::parse;
constexpr const BenchDesc& kColl = test::kAllreduceDesc;

constexpr BenchDesc kPt2pt{.name = "latency",
                           .title = "Latency Test",
                           .family = Family::Pt2pt,
                           .default_sizes = {0, 4 << 20},
                           .defaults = {100, 10, 20, 2}};

TEST(Placement, OptionsOffByDefaultAndInTheJson) {
  const Options o = parse(kColl, {});
  EXPECT_FALSE(o.off_cache);
  EXPECT_FALSE(o.vary_data);
  EXPECT_EQ(o.misalign, 0u);
  EXPECT_EQ(placement_options_given(o), "");
  const nlohmann::json j = o;
  EXPECT_EQ(j["off_cache"], false);
  EXPECT_EQ(j["off_cache_bytes"], 0);
  EXPECT_EQ(j["vary_data"], false);
  EXPECT_EQ(j["misalign_bytes"], 0);
}

TEST(Placement, ParsesEachOption) {
  const Options a = parse(kColl, {"--off-cache", "--vary-data", "-u", "3"});
  EXPECT_TRUE(a.off_cache);
  EXPECT_EQ(a.off_cache_bytes, 0u);  // the default, resolved when the run starts
  EXPECT_TRUE(a.vary_data);
  EXPECT_EQ(a.misalign, 3u);
  EXPECT_EQ(placement_options_given(a), "--off-cache, --vary-data, -u/--misalign");
  const Options b = parse(kPt2pt, {"--off-cache", "8M", "--misalign", "4095"});
  EXPECT_TRUE(b.off_cache);
  EXPECT_EQ(b.off_cache_bytes, size_t{8} << 20);
  EXPECT_EQ(b.misalign, 4095u);
  const nlohmann::json j = b;
  EXPECT_EQ(j["off_cache"], true);
  EXPECT_EQ(j["off_cache_bytes"], 8 << 20);
  EXPECT_EQ(j["misalign_bytes"], 4095);
}

TEST(Placement, RefusesBadValues) {
  for (const char* bad : {"-1", "4096", "abc", "1.5", "", "99999999999999999999999"})
    EXPECT_NE(error_of(kColl, {"-u", bad})
                  .find("-u/--misalign must be a whole number of bytes "
                        "from 0 to 4095"),
              std::string::npos)
        << bad;
  for (const char* bad : {"-5", "0", "1023", "12Q", "lots"})
    EXPECT_NE(error_of(kColl, {"--off-cache", bad}).find("--off-cache must be a size"),
              std::string::npos)
        << bad;
  // More than any machine has: says it cannot fit, never allocates.
  EXPECT_NE(error_of(kColl, {"--off-cache", "16000000G"}).find("cannot fit"), std::string::npos);
  EXPECT_THROW(parse_off_cache("64G", size_t{64} << 30), UsageError);  // > half of memory
  EXPECT_EQ(parse_off_cache("1K", 0), 1024u);
  // With what changes buffers between iterations in a way they cannot follow.
  EXPECT_NE(error_of(kColl, {"--vary-data", "--blocking", "0"}).find("--blocking 3"),
            std::string::npos);
}

TEST(Placement, CacheSizeText) {
  EXPECT_EQ(parse_cache_size("32768K"), size_t{32} << 20);
  EXPECT_EQ(parse_cache_size("8M"), size_t{8} << 20);
  EXPECT_EQ(parse_cache_size("512"), 512u);
  EXPECT_EQ(parse_cache_size(""), 0u);
  EXPECT_EQ(parse_cache_size("K"), 0u);
  EXPECT_EQ(parse_cache_size("12X"), 0u);
}

// A fake sysfs cache directory: index* with level, type and size.
struct FakeCaches {
  std::filesystem::path dir;
  explicit FakeCaches(const std::string& name)
      : dir(std::filesystem::temp_directory_path() /
            (name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~FakeCaches() { std::filesystem::remove_all(dir); }
  void add(int index, int level, const std::string& type, const std::string& size) const {
    const auto d = dir / ("index" + std::to_string(index));
    std::filesystem::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
  }
};

TEST(Placement, LastLevelCacheFromSysfs) {
  {
    FakeCaches c("cb_llc3");
    c.add(0, 1, "Data", "48K");
    c.add(1, 1, "Instruction", "32K");
    c.add(2, 2, "Unified", "2048K");
    c.add(3, 3, "Unified", "307200K");
    const CacheInfo llc = last_level_cache(c.dir.string());
    EXPECT_EQ(llc.level, 3);
    EXPECT_EQ(llc.bytes, size_t{300} << 20);
    const OffCacheTarget t = off_cache_target(0, false, llc);
    EXPECT_EQ(t.bytes, size_t{600} << 20);  // 2 x L3
    EXPECT_NE(t.source.find("L3"), std::string::npos);
  }
  {
    FakeCaches c("cb_llc2");  // no L3: the highest level listed
    c.add(0, 1, "Data", "32K");
    c.add(1, 2, "Unified", "1M");
    const CacheInfo llc = last_level_cache(c.dir.string());
    EXPECT_EQ(llc.level, 2);
    EXPECT_EQ(llc.bytes, size_t{1} << 20);
  }
  const CacheInfo none = last_level_cache("/nonexistent/cb/cache");
  EXPECT_EQ(none.bytes, 0u);
  EXPECT_EQ(off_cache_target(0, false, none).bytes, kFallbackOffCache);
  EXPECT_EQ(off_cache_target(0, true, {size_t{1} << 30, 3}).bytes, kDefaultDeviceOffCache);
  EXPECT_EQ(off_cache_target(4096, true, none).bytes, 4096u);  // BYTES wins everywhere
}

TEST(Placement, RingArithmetic) {
  // Off: one slot, so every iteration's offset is the misalignment alone.
  const Ring off = ring_for(1000, 0);
  EXPECT_EQ(off.slots, 1u);
  EXPECT_EQ(ring_offset(off, 12345, 7), 7u);
  EXPECT_EQ(ring_footprint(off, 1000, 7), 1007u);
  // 1000 B: 16 lines, plus one line apart (IMB's offset); ceil(64 KiB / 1088) slots.
  const Ring r = ring_for(1000, 65536);
  EXPECT_EQ(r.stride, 1088u);
  EXPECT_EQ(r.slots, 61u);
  EXPECT_GE(r.slots * r.stride, 65536u);        // covers the target
  EXPECT_LT((r.slots - 1) * r.stride, 65536u);  // and no more slots than it needs
  EXPECT_EQ(ring_offset(r, 0, 0), 0u);
  EXPECT_EQ(ring_offset(r, 1, 0), 1088u);
  EXPECT_EQ(ring_offset(r, 61, 0), 0u);  // wraps around
  EXPECT_EQ(ring_offset(r, 62, 5), 1088u + 5);
  // Every slot, misaligned, stays inside the footprint and apart from its neighbours.
  const size_t foot = ring_footprint(r, 1000, 4095);
  std::set<size_t> starts;
  for (uint64_t k = 0; k < r.slots; ++k) {
    const size_t at = ring_offset(r, k, 4095);
    EXPECT_LE(at + 1000, foot);
    EXPECT_TRUE(starts.insert(at).second);
    if (k > 0) {
      EXPECT_GE(at - ring_offset(r, k - 1, 4095), 1000u + kRingLine);
    }
  }
  // A message larger than the target: one slot (it does not fit in the cache anyway).
  EXPECT_EQ(ring_for(size_t{1} << 20, 4096).slots, 1u);
  EXPECT_EQ(ring_for(0, 4096).stride, kRingLine);  // empty messages still a line apart
}

TEST(Placement, VariedDataChangesOneElementPerLine) {
  // Generation 0 is the plain data; any other changes the first element of every 64-byte
  // line (and only those), differently per generation.
  for (Dtype dt : {Dtype::Char, Dtype::Float, Dtype::Double, Dtype::Half}) {
    const uint64_t per_line = 64 / dtype_size(dt);
    for (uint64_t i = 0; i < 4 * per_line; ++i) {
      EXPECT_EQ(values::varied_index(dt, i, 0), i);
      if (i % per_line != 0) {
        EXPECT_EQ(values::varied_index(dt, i, 5), i);
      }
    }
    EXPECT_NE(values::varied_index(dt, 0, 1), 0u);
    EXPECT_NE(values::varied_index(dt, per_line, 1), values::varied_index(dt, per_line, 2));
  }
  // Float sum inputs: the varied values differ from the plain ones in most lines.
  int changed = 0;
  for (uint64_t line = 0; line < 64; ++line)
    changed += input_value(Dtype::Float, Op::Sum, 0, 2, line * 16, 7) !=
               input_value(Dtype::Float, Op::Sum, 0, 2, line * 16);
  EXPECT_GT(changed, 56);
  // The byte pattern (point to point): stamp, then count against the right generation.
  std::vector<std::byte> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(pattern_byte(1, i));
  EXPECT_EQ(count_varied_errors(data, 1, 0), 0u);
  stamp_pattern(data.data(), data.size(), 1, 9);
  EXPECT_EQ(count_varied_errors(data, 1, 9), 0u);
  EXPECT_GT(count_varied_errors(data, 1, 8), 0u);  // another generation's data is caught
  EXPECT_LE(count_varied_errors(data, 1, 0), 5u);  // only the 5 line starts differ
}

TEST(Placement, VariedCollectiveInputsValidateExactly) {
  // The allreduce spec's fill and check with a generation: every element still exact, and
  // a check against the other generation's data fails.
  const CollSpec& spec = kAllreduceSpec;
  CollArgs a;
  a.coll = Coll::Allreduce;
  a.dtype = Dtype::Float;
  a.op = Op::Sum;
  a.count = 256;
  a.generation = 3;
  std::vector<std::byte> send[2], recv(a.count * 4), result(a.count * 4);
  for (int r = 0; r < 2; ++r) {
    send[r].resize(a.count * 4);
    spec.fill(a, r, 2, send[r].data(), recv.data());
  }
  for (size_t i = 0; i < a.count; ++i)
    store_element(
        result.data(), i, a.dtype,
        load_element(send[0].data(), i, a.dtype) + load_element(send[1].data(), i, a.dtype));
  EXPECT_EQ(spec.check(a, 0, 2, result.data()), 0u);
  CollArgs plain = a;
  plain.generation = 0;
  EXPECT_GT(spec.check(plain, 0, 2, result.data()), 0u);
  EXPECT_LE(spec.check(plain, 0, 2, result.data()), a.count / 16);  // one per line at most
}

}  // namespace
}  // namespace cb
