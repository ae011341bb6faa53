// The SQLite dictionary store (E8): definitions, the word list's filter,
// the database's life in its cache folder (built, reopened, rebuilt when
// missing or damaged) and concurrent writers.
#include "common/dictionary.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dictionary_fixture.h"

namespace wsb {
namespace {

using testing::TempFolder;
using testing::write_word_list;

void execute_sql(const std::filesystem::path& database, const char* sql) {
  sqlite3* db = nullptr;
  const bool opened =
      sqlite3_open_v2(database.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK;
  const bool done = opened && sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  const std::string why = sqlite3_errmsg(db);
  sqlite3_close_v2(db);
  if (!done) throw std::runtime_error("execute_sql: " + why);
}

TEST(Dictionary, DefinitionsAreDeterministicAndSized) {
  for (const unsigned multiple : {1u, 10u, 15u, 20u}) {
    const std::string d = generated_definition("apple", multiple);
    EXPECT_EQ(d.size(), multiple * kDefinitionUnitBytes);
    EXPECT_EQ(d, generated_definition("apple", multiple));
    EXPECT_EQ(d.rfind("apple: ", 0), 0u);
    EXPECT_EQ(d.back(), '.');
    for (const char c : d) EXPECT_TRUE(c >= ' ' && c <= '~') << int(c);
  }
  EXPECT_NE(generated_definition("apple", 1), generated_definition("apples", 1));
}

TEST(Dictionary, SizeMultiples) {
  EXPECT_EQ(parse_size_multiple("x1"), 1u);
  EXPECT_EQ(parse_size_multiple("x20"), 20u);
  EXPECT_EQ(parse_size_multiple("15"), 15u);
  for (const char* bad : {"", "x", "x0", "y2", "x2a", "x101", "x99999999999"})
    EXPECT_THROW(parse_size_multiple(bad), std::invalid_argument) << bad;
}

TEST(Dictionary, WordRule) {
  EXPECT_NO_THROW(check_word("well-known2"));
  for (const char* bad : {"", "cat's", "a b", "a/b", "caf\xc3\xa9", "%41"})
    EXPECT_THROW(check_word(bad), std::invalid_argument) << bad;
  EXPECT_THROW(check_word(std::string(kMaxWordBytes + 1, 'a')), std::invalid_argument);
}

TEST(Dictionary, BuildsFromTheListIntoTheCacheFolder) {
  const TempFolder folder;
  const auto list = write_word_list(
      folder.path(), {"apple", "cat's", "Asunci\xc3\xb3n", "zebra", "apple", "Zulu"});
  const Dictionary dict({list, folder.path() / "cache", 10});
  EXPECT_EQ(dict.how_opened(), "built");
  // Possessives and accented words are skipped, duplicates counted once.
  EXPECT_EQ(dict.loaded_words(), 3u);
  EXPECT_EQ(dict.path().parent_path(), folder.path() / "cache");
  EXPECT_NE(dict.path().filename().string().find("-x10-"), std::string::npos);
  EXPECT_EQ(dict.define("zebra"), generated_definition("zebra", 10));
  EXPECT_EQ(dict.define("Zulu"), generated_definition("Zulu", 10));
  EXPECT_EQ(dict.define("zulu"), std::nullopt);
  EXPECT_EQ(dict.define("cat"), std::nullopt);
  // Nothing but the database is left in the folder.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(folder.path() / "cache"))
    ++files;
  EXPECT_LE(files, 3u);  // the database, and WAL's -wal and -shm while open
}

TEST(Dictionary, ReopensAndKeepsPuts) {
  const TempFolder folder;
  const auto list = write_word_list(folder.path(), {"apple", "zebra"});
  {
    const Dictionary dict({list, folder.path(), 1});
    dict.put("apple", "a fruit");
    dict.put("quokka", "a marsupial");
  }
  const Dictionary again({list, folder.path(), 1});
  EXPECT_EQ(again.how_opened(), "opened");
  EXPECT_EQ(again.define("apple"), "a fruit");
  EXPECT_EQ(again.define("quokka"), "a marsupial");
  // Another size multiple is another database.
  const Dictionary other({list, folder.path(), 15});
  EXPECT_EQ(other.how_opened(), "built");
  EXPECT_NE(other.path(), again.path());
  EXPECT_EQ(other.define("apple"), generated_definition("apple", 15));
}

TEST(Dictionary, MissingFileIsRebuilt) {
  const TempFolder folder;
  const auto list = write_word_list(folder.path(), {"apple", "zebra"});
  std::filesystem::path path;
  {
    const Dictionary dict({list, folder.path(), 1});
    path = dict.path();
  }
  ASSERT_TRUE(std::filesystem::remove(path));
  const Dictionary again({list, folder.path(), 1});
  EXPECT_EQ(again.how_opened(), "built");
  EXPECT_EQ(again.define("zebra"), generated_definition("zebra", 1));
}

// Damage of three kinds: not a database at all, a damaged page, a build
// that never finished. Each is reported and rebuilt, never used.
class DamagedDictionary : public ::testing::TestWithParam<const char*> {};

TEST_P(DamagedDictionary, IsRefusedWithAMessageAndRebuilt) {
  const TempFolder folder;
  const auto words = TempFolder::many_words(2000);
  const auto list = write_word_list(folder.path(), words);
  std::filesystem::path path;
  {
    const Dictionary dict({list, folder.path(), 1});
    path = dict.path();
  }
  const std::string damage = GetParam();
  if (damage == "garbage") {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << std::string(8192, 'x');
  } else if (damage == "page") {
    // Overwrite the middle of the file (b-tree pages of the words table).
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(path) / 2));
    f << std::string(4096, '\xff');
  } else {  // incomplete
    execute_sql(path, "DELETE FROM meta WHERE key = 'complete'");
  }
  ::testing::internal::CaptureStderr();
  const Dictionary again({list, folder.path(), 1});
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(again.how_opened().rfind("rebuilt: ", 0), 0u) << again.how_opened();
  EXPECT_NE(said.find("is unusable"), std::string::npos) << said;
  EXPECT_NE(said.find(path.string()), std::string::npos) << said;
  EXPECT_EQ(again.loaded_words(), words.size());
  EXPECT_EQ(again.define(words.back()), generated_definition(words.back(), 1));
  const Dictionary third({list, folder.path(), 1});
  EXPECT_EQ(third.how_opened(), "opened");
}

INSTANTIATE_TEST_SUITE_P(Damage, DamagedDictionary,
                         ::testing::Values("garbage", "page", "incomplete"));

TEST(Dictionary, MissingWordListIsAClearError) {
  const TempFolder folder;
  try {
    const Dictionary dict({folder.path() / "no-such-list", folder.path(), 1});
    FAIL() << "opened without a word list";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("wamerican"), std::string::npos) << e.what();
  }
}

// Several threads, each with its own connection, put words and read them
// back, and all overwrite one shared word: WAL serialises the writers.
TEST(Dictionary, ConcurrentWriters) {
  const TempFolder folder;
  const auto list = write_word_list(folder.path(), {"apple", "shared"});
  const Dictionary dict({list, folder.path(), 1});
  constexpr int kThreads = 4, kWords = 100;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWords; ++i) {
        const std::string word = "t" + std::to_string(t) + "-w" + std::to_string(i);
        const std::string definition = "definition " + std::to_string(t * 1000 + i);
        dict.put(word, definition);
        dict.put("shared", "by thread " + std::to_string(t));
        if (dict.define(word) != definition) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kWords; ++i)
      EXPECT_EQ(dict.define("t" + std::to_string(t) + "-w" + std::to_string(i)),
                "definition " + std::to_string(t * 1000 + i));
  const auto shared = dict.define("shared");
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->rfind("by thread ", 0), 0u);
}

// The real list, where Debian's wamerican is installed.
TEST(Dictionary, LoadsWamerican) {
  const DictionaryOptions defaults;
  if (!std::filesystem::exists(defaults.word_list))
    GTEST_SKIP() << defaults.word_list << " is absent (Debian package wamerican)";
  const TempFolder folder;
  const Dictionary dict({defaults.word_list, folder.path(), 1});
  EXPECT_GT(dict.loaded_words(), 50'000u);
  EXPECT_EQ(dict.define("dictionary"), generated_definition("dictionary", 1));
  EXPECT_EQ(dict.define("dictionary's"), std::nullopt);
}

}  // namespace
}  // namespace wsb
