// E8's dictionary (mohamed-wijesekera): words and their definitions in
// SQLite. The database is built once from a word list into a cache folder,
// checked whenever it is opened, and rebuilt if it fails the check; every
// thread that serves calls keeps its own connection and prepared statements.
// Why these choices: docs/reference/dictionary.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wsb {

struct DictionaryOptions {
  // One word per line (Debian's wamerican); only words of ASCII letters
  // are loaded: possessives ("cat's") and accented words are skipped.
  std::filesystem::path word_list = "/usr/share/dict/american-english";
  // Where the database lives; empty: default_dictionary_dir().
  std::filesystem::path cache_dir;
  // Each definition is size_multiple x kDefinitionUnitBytes long (E8's
  // message sizes x1, x10, x15, x20).
  unsigned size_multiple = 1;
};

// The x1 definition's length in bytes (the paper gives none; see
// docs/reference/dictionary.md).
inline constexpr std::size_t kDefinitionUnitBytes = 128;
inline constexpr std::size_t kMaxWordBytes = 64;
inline constexpr std::size_t kMaxDefinitionBytes = std::size_t{64} << 10;
inline constexpr unsigned kMaxSizeMultiple = 100;

// $WSBENCH_CACHE_DIR, else $XDG_CACHE_HOME/wsbench, else
// $HOME/.cache/wsbench; throws std::runtime_error if none is set.
std::filesystem::path default_dictionary_dir();

// "x10" or "10" -> 10; throws std::invalid_argument outside 1..kMaxSizeMultiple.
unsigned parse_size_multiple(std::string_view text);

// Throws std::invalid_argument unless `word` is 1..kMaxWordBytes of ASCII
// letters, digits and '-' (so it is a URL path segment as it stands).
void check_word(std::string_view word);

// The definition `word` is built with: deterministic, so a client checks a
// reply without the database. Exactly size_multiple x kDefinitionUnitBytes
// of printable ASCII; a larger multiple extends a smaller one's text.
std::string generated_definition(std::string_view word, unsigned size_multiple);

// The words a dictionary built from `word_list` holds (sorted, unique);
// throws std::runtime_error if the list cannot be read or has none.
std::vector<std::string> dictionary_words(const std::filesystem::path& word_list);

class Dictionary {
 public:
  // Opens the database for these options, building it when it is missing;
  // one that fails its check (not a database, damaged, built from other
  // parameters, incomplete) is reported on stderr and rebuilt, never used.
  // Throws std::runtime_error if the word list cannot be read or the
  // database cannot be written.
  explicit Dictionary(DictionaryOptions options);
  ~Dictionary();
  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;

  // The word's definition, or nullopt if the dictionary has no such word.
  std::optional<std::string> define(std::string_view word) const;
  // Inserts the word or replaces its definition.
  void put(std::string_view word, std::string_view definition) const;

  const std::filesystem::path& path() const { return path_; }
  // The files a thread's connection holds open while its thread lives: the
  // database and WAL's -wal and -shm files.
  std::vector<std::filesystem::path> files() const;
  const DictionaryOptions& options() const { return options_; }
  // Words the list gave (the rows a fresh database has).
  std::size_t loaded_words() const { return loaded_words_; }
  // What opening did: "opened", "built" or "rebuilt: <why>".
  const std::string& how_opened() const { return how_opened_; }

 private:
  struct Connection;
  // The calling thread's connection, opened for this dictionary if it is
  // not (one per thread: SQLite connections are not shared).
  Connection& connection() const;
  static Connection& connection_slot();

  DictionaryOptions options_;
  std::filesystem::path path_;
  std::size_t loaded_words_ = 0;
  std::string how_opened_;
  std::uint64_t id_;  // tells this dictionary's per-thread connections apart
};

}  // namespace wsb
