// E8's define and put on every stack x codec: the generated definitions,
// insert and replace, the protocol's error for a word the dictionary
// lacks or refuses, and several clients writing at once (each server
// thread with its own SQLite connection).
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/dictionary.h"
#include "common/service.h"
#include "common/transport.h"
#include "dictionary_fixture.h"
#include "stack_fixture.h"
#include "xmlrpc/xmlrpc_api.h"

namespace wsb {
namespace {

using Combo = testing::StackCodec;

constexpr unsigned kMultiple = 10;

// One Service with a small dictionary in a folder of the test's own, and
// one server per stack, for the whole binary.
struct Fixture {
  testing::TempFolder folder;
  Service service{{},
                  {},
                  {testing::write_word_list(folder.path(), {"apple", "zebra", "cat's"}),
                   folder.path(), kMultiple}};
  std::map<std::string, std::unique_ptr<Server>> servers;

  Endpoint server_for(const std::string& stack) {
    auto& server = servers[stack];
    if (!server) server = find_stack(stack).start_server(service, ServerOptions{});
    return server->endpoint();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

class DictionaryStack : public ::testing::TestWithParam<Combo> {
 protected:
  std::unique_ptr<Client> connect() const {
    return find_stack(GetParam().stack)
        .connect(fixture().server_for(GetParam().stack), GetParam().codec);
  }
  // Words of this test alone: the parameters share one database.
  std::string word(const std::string& stem) const {
    std::string w = stem + "-" + GetParam().stack + "-" + GetParam().codec;
    for (char& c : w)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
    return w;
  }
};

TEST_P(DictionaryStack, DefineReturnsTheGeneratedDefinition) {
  const auto client = connect();
  EXPECT_EQ(client->define("apple"), generated_definition("apple", kMultiple));
  EXPECT_EQ(client->define("zebra"), generated_definition("zebra", kMultiple));
}

TEST_P(DictionaryStack, PutInsertsAndReplaces) {
  const auto client = connect();
  const std::string w = word("quokka");
  client->put(w, "a small marsupial");
  EXPECT_EQ(client->define(w), "a small marsupial");
  // Markup and non-ASCII text travel as text in every codec.
  const std::string replaced = "<b>&amp;</b> \"quoted\" caf\xc3\xa9 " + std::string(3000, 'z');
  client->put(w, replaced);
  EXPECT_EQ(client->define(w), replaced);
  EXPECT_EQ(fixture().service.dictionary().define(w), replaced);
  client->put(w, "");
  EXPECT_EQ(client->define(w), "");
}

// The protocol's own error: HTTP 404, a SOAP Fault, XML-RPC fault 404; the
// connection keeps serving.
TEST_P(DictionaryStack, UnknownWordIsTheProtocolsError) {
  const auto client = connect();
  try {
    client->define(word("nonesuch"));
    FAIL() << "defined a word the dictionary lacks";
  } catch (const xmlrpc::FaultError& e) {
    EXPECT_EQ(e.code(), xmlrpc::kFaultNotFound) << e.what();
  } catch (const CallError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no word"), std::string::npos) << what;
    if (GetParam().codec.starts_with("soap"))
      EXPECT_NE(what.find("SOAP-ENV:Client"), std::string::npos) << what;
    else if (GetParam().stack.starts_with("grpc"))  // grpc, grpc-tls
      EXPECT_NE(what.find("NOT_FOUND"), std::string::npos) << what;
    else
      EXPECT_NE(what.find("404"), std::string::npos) << what;
  }
  EXPECT_EQ(client->define("apple"), generated_definition("apple", kMultiple));
}

TEST_P(DictionaryStack, RefusedWordsAndDefinitions) {
  const auto client = connect();
  EXPECT_THROW(client->define("cat's"), CallError);
  EXPECT_THROW(client->put(std::string(kMaxWordBytes + 1, 'a'), "x"), CallError);
  EXPECT_THROW(client->put(word("big"), std::string(kMaxDefinitionBytes + 1, 'd')), CallError);
  EXPECT_THROW(client->define(word("big")), CallError);
  EXPECT_EQ(client->define("apple"), generated_definition("apple", kMultiple));
}

// Several clients, each on its own connection (so its own server thread or
// handler), put words and read them back while all overwrite one word.
TEST_P(DictionaryStack, ConcurrentWriters) {
  constexpr int kClients = 4, kWords = 25;
  std::atomic<int> wrong{0};
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> threads;
  const std::string shared = word("shared");
  // Connected here: the fixture starts servers on one thread only.
  std::vector<std::unique_ptr<Client>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(connect());
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      try {
        Client* const client = clients[c].get();
        for (int i = 0; i < kWords; ++i) {
          const std::string w = word("c" + std::to_string(c) + "-" + std::to_string(i));
          const std::string definition =
              "from client " + std::to_string(c) + " #" + std::to_string(i);
          client->put(w, definition);
          client->put(shared, "client " + std::to_string(c));
          if (client->define(w) != definition) ++wrong;
        }
      } catch (const std::exception& e) {
        failures[c] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(wrong.load(), 0);
  const auto client = connect();
  EXPECT_EQ(client->define(shared).rfind("client ", 0), 0u);
  EXPECT_EQ(client->define(word("c3-24")), "from client 3 #24");
}

INSTANTIATE_TEST_SUITE_P(AllStacks, DictionaryStack,
                         ::testing::ValuesIn(testing::every_stack_codec()),
                         [](const auto& p) { return testing::test_name(p.param); });

}  // namespace
}  // namespace wsb
