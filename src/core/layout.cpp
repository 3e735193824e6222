#include "core/layout.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/errors.hpp"
#include "core/whole_number.hpp"

namespace cb {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError("-D/--ddt " + std::string(text) + ": " + why +
                   " (expected cont, vect:STRIDE:BLOCKLEN or indx:FILE)");
}

bool to_size(std::string_view field, size_t& v) {
  const std::optional<size_t> n = whole_number<size_t>(field);
  if (n) v = *n;
  return n.has_value();
}

std::vector<std::pair<size_t, size_t>> read_runs(std::string_view text, const std::string& path) {
  std::ifstream in(path);
  if (!in) bad(text, "cannot open the index file");
  std::vector<std::pair<size_t, size_t>> runs;
  std::string line;
  size_t end = 0;  // of the previous run
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t comma = line.find(',');
    size_t displ = 0, length = 0;
    const std::string where = "line " + std::to_string(lineno) + " ('" + line + "')";
    if (comma == std::string::npos || !to_size(std::string_view(line).substr(0, comma), displ) ||
        !to_size(std::string_view(line).substr(comma + 1), length))
      bad(text, where + " is not DISPLACEMENT,BLOCKLEN");
    if (length == 0) bad(text, where + " has an empty run");
    if (!runs.empty() && displ < end)
      bad(text, where +
                    " starts before the previous run ends: runs must be in increasing "
                    "order and may not overlap");
    runs.emplace_back(displ, length);
    end = displ + length;
  }
  if (runs.empty()) bad(text, "the index file has no run");
  return runs;
}

}  // namespace

std::string LayoutSpec::str() const {
  switch (kind) {
    case Kind::Contiguous:
      return "cont";
    case Kind::Vector:
      return "vect:" + std::to_string(stride) + ":" + std::to_string(block);
    case Kind::Indexed:
      return "indx:" + file;
    default:
      return {};
  }
}

LayoutSpec parse_layout(std::string_view text) {
  LayoutSpec l;
  if (text == "cont") {
    l.kind = LayoutSpec::Kind::Contiguous;
  } else if (text.substr(0, 5) == "vect:") {
    l.kind = LayoutSpec::Kind::Vector;
    const std::string_view rest = text.substr(5);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || !to_size(rest.substr(0, colon), l.stride) ||
        !to_size(rest.substr(colon + 1), l.block))
      bad(text, "vect takes two whole numbers");
    if (l.stride == 0 || l.block == 0) bad(text, "STRIDE and BLOCKLEN must be at least 1");
    if (l.block > l.stride)
      bad(text, "BLOCKLEN may not exceed STRIDE (overlapping runs cannot be received)");
  } else if (text.substr(0, 5) == "indx:") {
    l.kind = LayoutSpec::Kind::Indexed;
    l.file = std::string(text.substr(5));
    if (l.file.empty()) bad(text, "indx needs the index file's path");
    l.indexed = read_runs(text, l.file);
  } else {
    bad(text, "unknown derived datatype");
  }
  return l;
}

std::vector<std::pair<size_t, size_t>> layout_runs(const LayoutSpec& layout, size_t count) {
  std::vector<std::pair<size_t, size_t>> runs;
  switch (layout.kind) {
    case LayoutSpec::Kind::Contiguous:
      if (count) runs.emplace_back(0, count);
      break;
    case LayoutSpec::Kind::Vector:
      for (size_t i = 0; i < count / layout.stride; ++i)
        runs.emplace_back(i * layout.stride, layout.block);
      break;
    case LayoutSpec::Kind::Indexed:
      if (count >= layout_min_count(layout)) runs = layout.indexed;
      break;
    default:
      break;
  }
  return runs;
}

size_t layout_min_count(const LayoutSpec& layout) {
  if (layout.kind != LayoutSpec::Kind::Indexed || layout.indexed.empty()) return 1;
  return layout.indexed.back().first + layout.indexed.back().second;
}

size_t layout_moved(const LayoutSpec& layout, size_t count) {
  size_t moved = 0;
  for (const auto& run : layout_runs(layout, count)) moved += run.second;
  return moved;
}

size_t layout_mismatches(const LayoutSpec& layout, size_t count, size_t width,
                         const std::vector<std::byte>& reference,
                         const std::vector<std::byte>& initial,
                         const std::vector<std::byte>& result) {
  if (count == 0 || width == 0) return 0;
  std::vector<bool> moved(count, false);
  for (const auto& [at, length] : layout_runs(layout, count))
    for (size_t j = at; j < at + length && j < count; ++j) moved[j] = true;
  const size_t n = std::min({reference.size(), initial.size(), result.size()}) / width;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<std::byte>& want = moved[i % count] ? reference : initial;
    if (std::memcmp(&result[i * width], &want[i * width], width) != 0) ++wrong;
  }
  return wrong;
}

}  // namespace cb
