// The dictionary database: built from the word list into a temporary file
// and renamed into place, so no process ever opens a half-built one; the
// file's name carries what it was built from (list digest, size multiple,
// format), and its meta table says so again for the check on opening.
#include "common/dictionary.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace wsb {
namespace {

// Bumped whenever the schema or the generated definitions change: a file of
// another format gets another name.
constexpr int kFormat = 1;
constexpr int kBusyTimeoutMs = 10'000;

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A counter-based mixer (splitmix64's finaliser): the nth filler draw of a
// word, the same with any compiler.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

bool is_list_word(std::string_view line) {
  return !line.empty() && line.size() <= kMaxWordBytes &&
         std::all_of(line.begin(), line.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
}

// The list's words (sorted, unique) and the digest of its bytes.
struct WordList {
  std::vector<std::string> words;
  std::uint64_t digest = 0;
};

WordList read_word_list(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("dictionary: cannot read the word list " + path.string() +
                             " (Debian package wamerican)");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  WordList list;
  list.digest = fnv1a(bytes);
  std::istringstream lines(bytes);
  for (std::string line; std::getline(lines, line);)
    if (is_list_word(line)) list.words.push_back(line);
  std::sort(list.words.begin(), list.words.end());
  list.words.erase(std::unique(list.words.begin(), list.words.end()), list.words.end());
  if (list.words.empty())
    throw std::runtime_error("dictionary: the word list " + path.string() + " has no words");
  return list;
}

// An open database handle, closed on scope exit.
struct Db {
  sqlite3* handle = nullptr;
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() { sqlite3_close_v2(handle); }
};

// A prepared statement, finalised on scope exit.
struct Statement {
  sqlite3_stmt* handle = nullptr;
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &handle, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("dictionary: ") + sqlite3_errmsg(db) + " (in: " + sql +
                               ")");
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(handle); }
};

void exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error != nullptr ? error : sqlite3_errmsg(db);
    sqlite3_free(error);
    throw std::runtime_error("dictionary: " + why + " (in: " + sql + ")");
  }
}

void bind_text(sqlite3_stmt* statement, int index, std::string_view text) {
  sqlite3_bind_text(statement, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

std::string column_text(sqlite3_stmt* statement, int column) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
  return text == nullptr
             ? std::string()
             : std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(statement, column)));
}

// What the meta table records: the content parameters and the row count of
// the finished build.
std::map<std::string, std::string> expected_meta(const WordList& list, unsigned multiple) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(list.digest));
  return {{"format", std::to_string(kFormat)},
          {"size_multiple", std::to_string(multiple)},
          {"word_list_digest", digest},
          {"words", std::to_string(list.words.size())}};
}

// Empty if the file at `path` is a finished database of these parameters,
// else why not. Read-write (WAL's shared memory needs it), without create.
std::string problem_with(const std::filesystem::path& path,
                         const std::map<std::string, std::string>& meta) {
  Db db;
  if (sqlite3_open_v2(path.c_str(), &db.handle, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
    return sqlite3_errmsg(db.handle);
  try {
    {
      Statement check(db.handle, "PRAGMA integrity_check");
      if (sqlite3_step(check.handle) != SQLITE_ROW) return sqlite3_errmsg(db.handle);
      if (const std::string result = column_text(check.handle, 0); result != "ok")
        return "PRAGMA integrity_check: " + result;
    }
    Statement rows(db.handle, "SELECT key, value FROM meta");
    std::map<std::string, std::string> found;
    int rc = 0;
    while ((rc = sqlite3_step(rows.handle)) == SQLITE_ROW)
      found[column_text(rows.handle, 0)] = column_text(rows.handle, 1);
    if (rc != SQLITE_DONE) return sqlite3_errmsg(db.handle);
    if (found.count("complete") == 0) return "the build did not finish";
    for (const auto& [key, value] : meta)
      if (found[key] != value)
        return "built with " + key + " '" + found[key] + "', expected '" + value + "'";
    Statement count(db.handle, "SELECT count(*) FROM words");
    if (sqlite3_step(count.handle) != SQLITE_ROW) return sqlite3_errmsg(db.handle);
    const auto words = static_cast<std::size_t>(sqlite3_column_int64(count.handle, 0));
    // put() only adds words or replaces definitions, so fewer rows is damage.
    if (words < std::stoull(meta.at("words")))
      return "it has " + std::to_string(words) + " words, expected at least " + meta.at("words");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void remove_database(const std::filesystem::path& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path.string() + suffix, ignored);
}

// Builds the database into a temporary file beside `path` and renames it
// into place: concurrent builders each finish their own file, and the last
// rename wins with a complete one.
void build(const std::filesystem::path& path, const WordList& list, unsigned multiple,
           const std::map<std::string, std::string>& meta) {
  static std::atomic<unsigned> serial{0};
  const std::filesystem::path temporary = path.string() + ".tmp-" + std::to_string(::getpid()) +
                                          "-" + std::to_string(serial.fetch_add(1));
  remove_database(temporary);
  try {
    {
      Db db;
      if (sqlite3_open_v2(temporary.c_str(), &db.handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                          nullptr) != SQLITE_OK)
        throw std::runtime_error("dictionary: cannot create " + temporary.string() + ": " +
                                 sqlite3_errmsg(db.handle));
      // Nothing to recover if the build dies: the file is thrown away.
      exec(db.handle, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN");
      exec(db.handle,
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "CREATE TABLE words (word TEXT PRIMARY KEY, definition TEXT NOT NULL)");
      {
        Statement insert(db.handle, "INSERT INTO words (word, definition) VALUES (?1, ?2)");
        for (const std::string& word : list.words) {
          const std::string definition = generated_definition(word, multiple);
          sqlite3_reset(insert.handle);
          bind_text(insert.handle, 1, word);
          bind_text(insert.handle, 2, definition);
          if (sqlite3_step(insert.handle) != SQLITE_DONE)
            throw std::runtime_error(std::string("dictionary: insert: ") +
                                     sqlite3_errmsg(db.handle));
        }
        Statement note(db.handle, "INSERT INTO meta (key, value) VALUES (?1, ?2)");
        auto record = [&](std::string_view key, std::string_view value) {
          sqlite3_reset(note.handle);
          bind_text(note.handle, 1, key);
          bind_text(note.handle, 2, value);
          if (sqlite3_step(note.handle) != SQLITE_DONE)
            throw std::runtime_error(std::string("dictionary: meta: ") + sqlite3_errmsg(db.handle));
        };
        for (const auto& [key, value] : meta) record(key, value);
        record("complete", "1");
      }
      exec(db.handle, "COMMIT; PRAGMA journal_mode = WAL");
    }
    remove_database(path);
    std::filesystem::rename(temporary, path);
  } catch (...) {
    remove_database(temporary);
    throw;
  }
}

}  // namespace

struct Dictionary::Connection {
  std::uint64_t owner = 0;
  sqlite3* db = nullptr;
  sqlite3_stmt* select = nullptr;
  sqlite3_stmt* upsert = nullptr;

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { close(); }

  void close() {
    sqlite3_finalize(select);
    sqlite3_finalize(upsert);
    sqlite3_close_v2(db);
    select = upsert = nullptr;
    db = nullptr;
    owner = 0;
  }

  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(std::string("dictionary: ") + what + ": " + sqlite3_errmsg(db));
  }

  void open(const std::filesystem::path& path) {
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK)
      fail(("cannot open " + path.string()).c_str());
    // Writers queue for WAL's one write lock rather than failing at once.
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    // WAL's recommended durability: a commit survives a crash of the
    // process, not necessarily of the machine.
    exec(db, "PRAGMA synchronous = NORMAL");
    if (sqlite3_prepare_v2(db, "SELECT definition FROM words WHERE word = ?1", -1, &select,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "INSERT INTO words (word, definition) VALUES (?1, ?2) "
                           "ON CONFLICT (word) DO UPDATE SET definition = excluded.definition",
                           -1, &upsert, nullptr) != SQLITE_OK)
      fail("prepare");
  }
};

std::filesystem::path default_dictionary_dir() {
  if (const char* dir = std::getenv("WSBENCH_CACHE_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path(xdg) / "wsbench";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "wsbench";
  throw std::runtime_error(
      "dictionary: no cache folder: set WSBENCH_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

unsigned parse_size_multiple(std::string_view text) {
  const std::string original(text);
  if (!text.empty() && text.front() == 'x') text.remove_prefix(1);
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9' || value > kMaxSizeMultiple) {
      value = 0;
      break;
    }
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value < 1 || value > kMaxSizeMultiple)
    throw std::invalid_argument("dictionary size '" + original + "': expected x1 to x" +
                                std::to_string(kMaxSizeMultiple));
  return value;
}

void check_word(std::string_view word) {
  if (word.empty() || word.size() > kMaxWordBytes ||
      !std::all_of(word.begin(), word.end(), is_word_char))
    throw std::invalid_argument("a word is 1 to " + std::to_string(kMaxWordBytes) +
                                " ASCII letters, digits or '-'");
}

std::string generated_definition(std::string_view word, unsigned size_multiple) {
  static constexpr std::string_view kSyllables[16] = {"ka", "lo", "mi", "ne", "ru", "sa",
                                                      "ti", "vo", "ba", "de", "fi", "go",
                                                      "hu", "ja", "pe", "qu"};
  const std::size_t size = std::size_t{size_multiple} * kDefinitionUnitBytes;
  std::string out;
  out.reserve(size + 16);
  out.append(word.substr(0, kMaxWordBytes));
  out += ": ";
  const std::uint64_t seed = fnv1a(word);
  for (std::uint64_t draw = 0; out.size() < size; ++draw) {
    std::uint64_t bits = mix(seed + draw * 0x9e3779b97f4a7c15ULL);
    const unsigned syllables = 1 + static_cast<unsigned>(bits & 3);
    bits >>= 2;
    for (unsigned i = 0; i < syllables; ++i, bits >>= 4) out += kSyllables[bits & 15];
    out += ' ';
  }
  out.resize(size);
  out.back() = '.';
  return out;
}

std::vector<std::string> dictionary_words(const std::filesystem::path& word_list) {
  return read_word_list(word_list).words;
}

Dictionary::Dictionary(DictionaryOptions options) : options_(std::move(options)) {
  static std::atomic<std::uint64_t> next_id{1};
  id_ = next_id.fetch_add(1);
  if (options_.size_multiple < 1 || options_.size_multiple > kMaxSizeMultiple)
    throw std::invalid_argument("dictionary: size multiple " +
                                std::to_string(options_.size_multiple) + " outside 1.." +
                                std::to_string(kMaxSizeMultiple));
  const WordList list = read_word_list(options_.word_list);
  loaded_words_ = list.words.size();
  const auto meta = expected_meta(list, options_.size_multiple);
  const std::filesystem::path dir =
      options_.cache_dir.empty() ? default_dictionary_dir() : options_.cache_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error("dictionary: cannot create the folder " + dir.string() + ": " +
                             ec.message());
  path_ = dir / ("dictionary-" + options_.word_list.stem().string() + "-x" +
                 std::to_string(options_.size_multiple) + "-" + meta.at("word_list_digest") + "-v" +
                 std::to_string(kFormat) + ".sqlite");

  if (!std::filesystem::exists(path_)) {
    how_opened_ = "built";
  } else if (const std::string problem = problem_with(path_, meta); !problem.empty()) {
    how_opened_ = "rebuilt: " + problem;
    std::fprintf(stderr, "wsbench: the dictionary database %s is unusable (%s); rebuilding it\n",
                 path_.c_str(), problem.c_str());
  } else {
    how_opened_ = "opened";
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  build(path_, list, options_.size_multiple, meta);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "wsbench: built the dictionary database %s (%zu words, x%u) in %.2f s\n",
               path_.c_str(), loaded_words_, options_.size_multiple, took.count());
}

std::vector<std::filesystem::path> Dictionary::files() const {
  return {path_, path_.string() + "-wal", path_.string() + "-shm"};
}

// Threads' connections close when their threads end or open another
// dictionary's: this thread's slot may already be gone at exit, when static
// objects (a Service among them) are destroyed, so it is not touched here.
Dictionary::~Dictionary() = default;

Dictionary::Connection& Dictionary::connection_slot() {
  thread_local Connection slot;
  return slot;
}

Dictionary::Connection& Dictionary::connection() const {
  Connection& c = connection_slot();
  if (c.owner != id_) {
    c.close();
    try {
      c.open(path_);
    } catch (...) {
      c.close();
      throw;
    }
    c.owner = id_;
  }
  return c;
}

std::optional<std::string> Dictionary::define(std::string_view word) const {
  Connection& c = connection();
  sqlite3_stmt* const s = c.select;
  bind_text(s, 1, word);
  std::optional<std::string> definition;
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) definition = column_text(s, 0);
  const std::string error = rc == SQLITE_ROW || rc == SQLITE_DONE ? "" : sqlite3_errmsg(c.db);
  // Reset at once: a statement left open holds WAL's read snapshot.
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (!error.empty()) throw std::runtime_error("dictionary: define: " + error);
  return definition;
}

void Dictionary::put(std::string_view word, std::string_view definition) const {
  Connection& c = connection();
  sqlite3_stmt* const s = c.upsert;
  bind_text(s, 1, word);
  bind_text(s, 2, definition);
  const int rc = sqlite3_step(s);
  const std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(c.db);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (!error.empty()) throw std::runtime_error("dictionary: put: " + error);
}

}  // namespace wsb
