// A whole number read from a field of a file or an option ("  12 "): surrounding blanks
// allowed, nothing else. Shared by -N's graph files and -D's index files and options.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace cb {

template <class T>
std::optional<T> whole_number(std::string_view field) {
  constexpr std::string_view kBlank = " \t\r\n";
  while (!field.empty() && kBlank.find(field.front()) != std::string_view::npos)
    field.remove_prefix(1);
  while (!field.empty() && kBlank.find(field.back()) != std::string_view::npos)
    field.remove_suffix(1);
  T v{};
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return v;
}

}  // namespace cb
