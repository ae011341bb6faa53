// What dictionary tests share: a temporary folder of their own (the
// database never goes near the user's cache) and small word lists.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wsb::testing {

class TempFolder {
 public:
  TempFolder() {
    static std::atomic<int> serial{0};
    path_ = std::filesystem::temp_directory_path() /
            ("wsbench-dictionary-test-" + std::to_string(::getpid()) + "-" +
             std::to_string(serial.fetch_add(1)));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // n distinct words of letters ("worda", "wordb", ..., "wordba", ...):
  // the list's filter keeps only letters.
  static std::vector<std::string> many_words(int n) {
    std::vector<std::string> words;
    for (int i = 0; i < n; ++i) {
      std::string suffix;
      for (int v = i; suffix.empty() || v > 0; v /= 26) suffix.insert(0, 1, char('a' + v % 26));
      words.push_back("word" + suffix);
    }
    return words;
  }

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path write_word_list(const std::filesystem::path& folder,
                                             const std::vector<std::string>& words) {
  const auto path = folder / "words.txt";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& w : words) out << w << '\n';
  return path;
}

}  // namespace wsb::testing
