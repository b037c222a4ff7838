#include "support/templates.h"

#include <cctype>
#include <filesystem>

namespace tenet {

std::string substitute_marks(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string mark = "@" + key + "@";
    for (size_t at = text.find(mark); at != std::string::npos;
         at = text.find(mark, at + value.size()))
      text.replace(at, mark.size(), value);
  }
  return text;
}

std::string identifier_from_stem(const std::string& path, const std::string& prefix) {
  std::string name = std::filesystem::path(path).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = prefix + name;
  return name;
}

}  // namespace tenet
