// Byte-size readers: parse_byte_size() (core/settings: CB_* variables) and parse_bytes() /
// parse_size_range() (harness/sizes: -m, -M), and the CB_* setting readers through the
// environment. Expected: UsageError. Findings: any other exception; a value that does not
// read back from its own formatting; the two byte-size readers disagreeing on text both
// accept; a size sweep that does not double from MIN to MAX.
#include <stdlib.h>

#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "core/settings.hpp"
#include "fuzz_util.hpp"
#include "harness/sizes.hpp"

namespace {

using namespace cb;

template <typename F>
bool accepted(F&& parse) {
  try {
    parse();
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  size_t a = 0, b = 0;
  const bool core_ok = accepted([&] { a = parse_byte_size(text); });
  const bool harness_ok = accepted([&] { b = parse_bytes(text); });
  if (core_ok && parse_byte_size(format_byte_size(a)) != a)
    fuzz::finding("format_byte_size(" + std::to_string(a) + ") does not read back");
  if (harness_ok && parse_bytes(std::to_string(b)) != b)
    fuzz::finding("parse_bytes(\"" + std::to_string(b) + "\") does not read back");
  if (core_ok && harness_ok && a != b)
    fuzz::finding("\"" + text + "\" is " + std::to_string(a) + " B for parse_byte_size but " +
                  std::to_string(b) + " B for parse_bytes");

  SizeRange range;
  if (accepted([&] { range = parse_size_range(text, {4, 1 << 20}); })) {
    if (range.min > range.max) fuzz::finding("size range MIN > MAX from \"" + text + "\"");
    const auto sweep = size_sweep(range);
    if (sweep.empty() || sweep.front() != range.min || sweep.size() > 66)
      fuzz::finding("size sweep of \"" + text + "\" is malformed");
    for (size_t i = 1; i < sweep.size(); ++i)
      if (sweep[i] <= sweep[i - 1] || sweep[i] > range.max)
        fuzz::finding("size sweep of \"" + text + "\" does not grow within MAX");
    (void)format_bytes(range.max);
  }

  // The environment readers (a value with a NUL byte cannot be set: it ends the value).
  if (text.find('\0') == std::string::npos) {
    ::setenv("CB_FUZZ_SETTING", text.c_str(), 1);
    size_t bytes = 0;
    if (accepted([&] { bytes = setting_bytes("CB_FUZZ_SETTING", 7, 1, size_t{1} << 40); }) &&
        !text.empty() && (bytes < 1 || bytes > (size_t{1} << 40)))
      fuzz::finding("setting_bytes out of its range");
    long long n = 0;
    if (accepted([&] { n = setting_int("CB_FUZZ_SETTING", 7, -5, 1000); }) && !text.empty() &&
        (n < -5 || n > 1000))
      fuzz::finding("setting_int out of its range");
    (void)accepted([&] { setting_flag("CB_FUZZ_SETTING", false); });
  }
  return 0;
}
