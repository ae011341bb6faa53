// Protocol Buffers bodies via libprotobuf (proto3, schema in wsbench.proto).
//
// Both directions go through the generated message, the library's own
// representation: bind fills a wsbench::Response from the model, write
// serializes it; read parses into a Response, unbind walks it into the model.
//
// Message lifetime under the reuse policy (the fresh policy makes a new heap
// message for every bind and every read, without an arena):
// - Encode reuses one heap Response. Response::Clear() would delete the
//   oneof's sub-message (a oneof case owns it), so bind clears the current
//   sub-message in place instead when the payload kind repeats: its
//   repeated fields and strings keep their capacity and a steady-state
//   encode allocates nothing.
// - Decode parses into a Response on an Arena that is Reset before each
//   parse. ParseFromArray starts with Clear(), which on the heap frees the
//   whole previous tree and then allocates every sub-message and string
//   again; on an arena those allocations are pointer bumps and the frees
//   one Reset, which is what the protobuf docs recommend for parse-heavy
//   servers. Measured here: objects/3200 decodes about 30% faster than with
//   a reused heap Response (default arena block sizes; larger ones made no
//   difference).
//
// Strictness beyond what the parser checks: the oneof must be set, ttl must
// fit int16, footprint xs and ys must have the same length, and no message
// may carry unknown fields (a known field sent with the wrong wire type also
// lands there, so this is the type check).
#include <google/protobuf/arena.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include <limits>

#include "rest/protobuf_mapping.h"
#include "rest/rest_codecs.h"

namespace wsb::rest {
namespace {

namespace pb = google::protobuf;

[[noreturn]] void fail(std::string_view what) {
  throw DecodeError("protobuf: " + std::string(what));
}

// ---- binding: model -> message ----

// Returns the oneof's sub-message, emptied but keeping its capacity when the
// previous payload was of the same kind.
template <class Sub>
Sub* reuse(Sub* sub) {
  sub->Clear();
  return sub;
}

// set_<bytes>(pointer, size) goes through a temporary std::string (an extra
// allocation and copy of what may be megabytes); assigning into the field's
// own string copies once and keeps its capacity.
void assign(std::string* field, const Bytes& bytes) {
  field->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

class Binder {
 public:
  explicit Binder(wsbench::Response& r) : r_(r) {}

  void operator()(const Text& p) { r_.set_text(p.value); }
  void operator()(const IntArray& p) {
    auto* values = reuse(r_.mutable_ints())->mutable_values();
    values->Add(p.values.begin(), p.values.end());
  }
  void operator()(const StringArray& p) {
    auto* strings = reuse(r_.mutable_strings());
    strings->mutable_values()->Reserve(static_cast<int>(p.values.size()));
    for (const auto& s : p.values) strings->add_values(s);
  }
  void operator()(const ObjectArray& p) {
    auto* objects = reuse(r_.mutable_objects());
    objects->mutable_values()->Reserve(static_cast<int>(p.values.size()));
    for (const auto& o : p.values) {
      auto* m = objects->add_values();
      m->set_id(o.id);
      m->set_name(o.name);
      m->set_value(o.value);
      m->set_active(o.active);
    }
  }
  void operator()(const Message& p) { bind_message(p, reuse(r_.mutable_message())); }
  void operator()(const MessageList& p) {
    auto* list = reuse(r_.mutable_messages());
    list->mutable_messages()->Reserve(static_cast<int>(p.messages.size()));
    for (const auto& m : p.messages) bind_message(m, list->add_messages());
  }
  void operator()(const Binary& p) { assign(r_.mutable_binary(), p.data); }
  void operator()(const BuildingCollection& p) {
    auto* buildings = reuse(r_.mutable_buildings());
    buildings->mutable_values()->Reserve(static_cast<int>(p.buildings.size()));
    for (const auto& b : p.buildings) {
      auto* m = buildings->add_values();
      m->set_id(b.id);
      m->set_name(b.name);
      m->set_height(b.height);
      m->set_floors(b.floors);
      auto* xs = m->mutable_xs();
      auto* ys = m->mutable_ys();
      xs->Reserve(static_cast<int>(b.footprint.size()));
      ys->Reserve(static_cast<int>(b.footprint.size()));
      for (const auto& pt : b.footprint) {
        xs->AddAlreadyReserved(pt.x);
        ys->AddAlreadyReserved(pt.y);
      }
    }
  }

  static void bind_message(const Message& p, wsbench::Message* m) {
    m->set_recipient(p.meta.recipient);
    m->set_sender(p.meta.sender);
    m->set_auth_token(p.meta.auth_token);
    m->set_timestamp(p.meta.timestamp);
    m->mutable_records()->Reserve(static_cast<int>(p.records.size()));
    for (const auto& r : p.records) {
      auto* rec = m->add_records();
      rec->set_title(r.title);
      rec->set_author(r.author);
      rec->set_body(r.body);
      rec->set_sequence(r.sequence);
      rec->set_created(r.created);
      rec->set_priority(r.priority);
      rec->set_category(r.category);
      rec->set_flags(r.flags);
      rec->set_ttl(r.ttl);
    }
    assign(m->mutable_attachment(), p.attachment);
  }

 private:
  wsbench::Response& r_;
};

// ---- unbinding: message -> model, every message checked ----

template <class M>
const M& known(const M& m, const char* what) {
  // One Reflection per message type: looking it up per object (a virtual
  // GetMetadata call) cost about 10% of decoding objects/3200.
  static const pb::Reflection* const reflection = M::GetReflection();
  if (!reflection->GetUnknownFields(m).empty())
    fail(std::string(what) + " has unknown fields or fields of the wrong wire type");
  return m;
}

Bytes bytes_of(const std::string& s) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
  return Bytes(p, p + s.size());
}

Record record_of(const wsbench::Record& r) {
  known(r, "record");
  if (r.ttl() < std::numeric_limits<std::int16_t>::min() ||
      r.ttl() > std::numeric_limits<std::int16_t>::max())
    fail("ttl " + std::to_string(r.ttl()) + " is out of 16-bit range");
  return Record{r.title(),    r.author(),  r.body(),
                r.sequence(), r.created(), r.priority(),
                r.category(), r.flags(),   static_cast<std::int16_t>(r.ttl())};
}

Message message_of(const wsbench::Message& m) {
  known(m, "message");
  Message out;
  out.meta = Metadata{m.recipient(), m.sender(), m.auth_token(), m.timestamp()};
  out.records.reserve(static_cast<std::size_t>(m.records_size()));
  for (const auto& r : m.records()) out.records.push_back(record_of(r));
  out.attachment = bytes_of(m.attachment());
  return out;
}

Building building_of(const wsbench::Building& b) {
  known(b, "building");
  if (b.xs_size() != b.ys_size())
    fail("footprint has " + std::to_string(b.xs_size()) + " x and " + std::to_string(b.ys_size()) +
         " y coordinates");
  Building out{b.id(), b.name(), b.height(), b.floors(), {}};
  out.footprint.reserve(static_cast<std::size_t>(b.xs_size()));
  for (int i = 0; i < b.xs_size(); ++i) out.footprint.push_back({b.xs(i), b.ys(i)});
  return out;
}

Payload payload_of(const wsbench::Response& r) {
  known(r, "response");
  switch (r.payload_case()) {
    case wsbench::Response::kText:
      return Text{r.text()};
    case wsbench::Response::kInts: {
      const auto& values = known(r.ints(), "ints").values();
      return IntArray{{values.begin(), values.end()}};
    }
    case wsbench::Response::kStrings: {
      const auto& values = known(r.strings(), "strings").values();
      return StringArray{{values.begin(), values.end()}};
    }
    case wsbench::Response::kObjects: {
      ObjectArray p;
      const auto& values = known(r.objects(), "objects").values();
      p.values.reserve(static_cast<std::size_t>(values.size()));
      for (const auto& o : values) {
        known(o, "object");
        p.values.push_back(Object{o.id(), o.name(), o.value(), o.active()});
      }
      return p;
    }
    case wsbench::Response::kMessage:
      return message_of(r.message());
    case wsbench::Response::kMessages: {
      MessageList p;
      const auto& messages = known(r.messages(), "message list").messages();
      p.messages.reserve(static_cast<std::size_t>(messages.size()));
      for (const auto& m : messages) p.messages.push_back(message_of(m));
      return p;
    }
    case wsbench::Response::kBinary:
      return Binary{bytes_of(r.binary())};
    case wsbench::Response::kBuildings: {
      BuildingCollection p;
      const auto& values = known(r.buildings(), "buildings").values();
      p.buildings.reserve(static_cast<std::size_t>(values.size()));
      for (const auto& b : values) p.buildings.push_back(building_of(b));
      return p;
    }
    case wsbench::Response::PAYLOAD_NOT_SET:
      break;
  }
  fail("no payload field is set");
}

class ProtobufCodec final : public StagedCodec {
 public:
  std::string content_type() const override { return "application/x-protobuf"; }

  void bind(const Payload& in) override {
    renew_if_fresh();
    std::visit(Binder(*encoded_), in);
  }
  void encode_message(const Message& in, std::string& out) override {
    renew_if_fresh();
    Binder binder(*encoded_);
    binder(in);
    write(out);
  }
  // Fresh: a new heap message per call, as a typical user fills one.
  void renew_if_fresh() {
    if (fresh()) encoded_ = std::make_unique<wsbench::Response>();
  }

  void write(std::string& out) override {
    // Fails only past protobuf's 2 GiB message limit.
    if (!encoded_->SerializeToString(&out))
      throw std::length_error("protobuf: message too large to serialize");
  }

  void read(std::string_view wire) override {
    decoded_ = nullptr;
    fresh_decoded_.reset();
    arena_.Reset();
    if (wire.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      fail("body exceeds protobuf's 2 GiB limit");
    // Fresh: ParseFromArray into a new heap message, no arena.
    wsbench::Response* message = nullptr;
    if (fresh()) {
      fresh_decoded_ = std::make_unique<wsbench::Response>();
      message = fresh_decoded_.get();
    } else {
      message = pb::Arena::CreateMessage<wsbench::Response>(&arena_);
    }
    if (!message->ParseFromArray(wire.data(), static_cast<int>(wire.size())))
      fail("malformed message (truncated, invalid wire format or invalid UTF-8 string)");
    decoded_ = message;
  }

  void unbind(Payload& out) override {
    if (decoded_ == nullptr) throw std::logic_error("protobuf: unbind without a successful read");
    out = payload_of(*decoded_);
  }

 private:
  // A proto3 string field holding invalid UTF-8 fails the parse, as it
  // must, but libprotobuf also logs an ERROR line to stderr for it; the
  // DecodeError is the report. Silenced for the codec's lifetime, not per
  // read: a LogSilencer takes protobuf's global log mutex, which would sit
  // in every timed decode.
  const pb::LogSilencer silence_;
  std::unique_ptr<wsbench::Response> encoded_ = std::make_unique<wsbench::Response>();
  pb::Arena arena_;
  std::unique_ptr<wsbench::Response> fresh_decoded_;  // the fresh policy's message
  const wsbench::Response* decoded_ = nullptr;  // on arena_ or fresh_decoded_, until the next read
};

}  // namespace

void bind_response(const Payload& in, wsbench::Response& out) { std::visit(Binder(out), in); }
void bind_message(const Message& in, wsbench::Message& out) {
  out.Clear();  // its records are appended
  Binder::bind_message(in, &out);
}
Payload unbind_response(const wsbench::Response& in) { return payload_of(in); }
Message unbind_message(const wsbench::Message& in) { return message_of(in); }

std::unique_ptr<Codec> make_protobuf_codec() { return std::make_unique<ProtobufCodec>(); }

}  // namespace wsb::rest
