#include "soap/soap_binding.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>
#include <variant>

#include "common/codec.h"

namespace wsb::soap {

ContextPtr new_context() {
  ContextPtr ctx(soap_new());
  if (!ctx) throw std::bad_alloc();
  soap_set_namespaces(ctx.get(), namespaces);
  return ctx;
}

std::size_t take_input(std::string_view& input, char* buf, std::size_t size) {
  const std::size_t n = std::min(size, input.size());
  std::memcpy(buf, input.data(), n);
  input.remove_prefix(n);
  return n;
}

void check_no_trailing_content(const Context* ctx, std::string_view unread,
                               const std::string& who) {
  const auto is_xml_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  const std::string_view buffered(ctx->buf + ctx->bufidx, ctx->buflen - ctx->bufidx);
  if (!std::all_of(buffered.begin(), buffered.end(), is_xml_space) ||
      !std::all_of(unread.begin(), unread.end(), is_xml_space))
    throw DecodeError(who + ": content after the end of the message");
}

namespace {

template <class T>
T* checked(T* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// ---- bind: model -> generated structs ----

struct Binder::Visitor {
  const Binder& b;
  int& choice;
  wsb__PayloadChoice& out;

  wsb__PayloadChoice& set(int c) const {
    choice = c;
    return out;
  }

  void operator()(const Text& p) const {
    std::string* s = checked(soap_new_std__string(b.ctx_));
    *s = p.value;
    set(SOAP_UNION_wsb__PayloadChoice_text).text = s;
  }
  void operator()(const IntArray& p) const {
    wsb__IntList* l = checked(soap_new_wsb__IntList(b.ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_ints).ints = l;
  }
  void operator()(const StringArray& p) const {
    wsb__StringList* l = checked(soap_new_wsb__StringList(b.ctx_));
    l->item.assign(p.values.begin(), p.values.end());
    set(SOAP_UNION_wsb__PayloadChoice_strings).strings = l;
  }
  void operator()(const ObjectArray& p) const {
    wsb__ObjectList* l = checked(soap_new_wsb__ObjectList(b.ctx_));
    l->object.resize(p.values.size());
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      const Object& o = p.values[i];
      wsb__Object& w = l->object[i];
      w.id = o.id;
      w.name = o.name;
      w.value = o.value;
      w.active = o.active;
    }
    set(SOAP_UNION_wsb__PayloadChoice_objects).objects = l;
  }
  void operator()(const Message& m) const {
    set(SOAP_UNION_wsb__PayloadChoice_message).message = b.new_message(m);
  }
  void operator()(const MessageList& p) const {
    wsb__MessageList* l = checked(soap_new_wsb__MessageList(b.ctx_));
    l->message.resize(p.messages.size());
    for (std::size_t i = 0; i < p.messages.size(); ++i) b.message(p.messages[i], l->message[i]);
    set(SOAP_UNION_wsb__PayloadChoice_messages).messages = l;
  }
  void operator()(const Binary& p) const {
    set(SOAP_UNION_wsb__PayloadChoice_binary).binary = b.binary(p.data);
  }
  void operator()(const BuildingCollection& p) const {
    wsb__BuildingList* l = checked(soap_new_wsb__BuildingList(b.ctx_));
    l->building.resize(p.buildings.size());
    for (std::size_t i = 0; i < p.buildings.size(); ++i) {
      const Building& m = p.buildings[i];
      wsb__Building& w = l->building[i];
      w.id = m.id;
      w.name = m.name;
      w.height = m.height;
      w.floors = m.floors;
      w.point.resize(m.footprint.size());
      for (std::size_t j = 0; j < m.footprint.size(); ++j) {
        w.point[j].x = m.footprint[j].x;
        w.point[j].y = m.footprint[j].y;
      }
    }
    set(SOAP_UNION_wsb__PayloadChoice_buildings).buildings = l;
  }
};

void Binder::payload(const Payload& in, int& choice, wsb__PayloadChoice& out) const {
  std::visit(Visitor{*this, choice, out}, in);
}

void Binder::message(const Message& m, wsb__Message& w) const {
  w.recipient = m.meta.recipient;
  w.sender = m.meta.sender;
  w.authToken = m.meta.auth_token;
  w.timestamp = m.meta.timestamp;
  w.record.resize(m.records.size());
  for (std::size_t i = 0; i < m.records.size(); ++i) {
    const Record& r = m.records[i];
    wsb__Record& x = w.record[i];
    x.title = r.title;
    x.author = r.author;
    x.body = r.body;
    x.sequence = r.sequence;
    x.created = r.created;
    x.priority = r.priority;
    x.category = r.category;
    x.flags = r.flags;
    x.ttl = r.ttl;
  }
  // Optional element: omitted when empty, decoded back to empty.
  w.attachment = m.attachment.empty() ? nullptr : binary(m.attachment);
}

wsb__Message* Binder::new_message(const Message& m) const {
  wsb__Message* w = checked(soap_new_wsb__Message(ctx_));
  message(m, *w);
  return w;
}

xsd__base64Binary* Binder::binary(const Bytes& bytes) const {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw std::length_error("soap: gSOAP binaries are limited to 2 GiB (int __size)");
  xsd__base64Binary* b = checked(soap_new_xsd__base64Binary(ctx_));
  b->__ptr = const_cast<unsigned char*>(bytes.data());
  b->__size = static_cast<int>(bytes.size());
  // Outside MTOM mode id/type/options stay NULL: with a type set gSOAP
  // would switch the message to DIME.
  if (mtom_) b->type = const_cast<char*>(kAttachmentType);
  return b;
}

// ---- unbind: generated structs -> model ----

void Unbinder::fail(const std::string& what) const { throw DecodeError(who_ + ": " + what); }

template <class T>
T& Unbinder::present(T* p, const char* element) const {
  if (p == nullptr) fail(std::string("<wsb:") + element + "> is nil");
  return *p;
}

void Unbinder::bytes_of(const xsd__base64Binary& b, Bytes& out) const {
  if (b.__size < 0 || (b.__size > 0 && b.__ptr == nullptr)) fail("invalid binary");
  out.assign(b.__ptr, b.__ptr + b.__size);
}

Payload Unbinder::payload(int choice, wsb__PayloadChoice& c, const char* element) const {
  switch (choice) {
    case SOAP_UNION_wsb__PayloadChoice_text:
      return Text{take(present(c.text, "text"))};
    case SOAP_UNION_wsb__PayloadChoice_ints: {
      auto& items = present(c.ints, "ints").item;
      return IntArray{{items.begin(), items.end()}};
    }
    case SOAP_UNION_wsb__PayloadChoice_strings:
      return StringArray{take(present(c.strings, "strings").item)};
    case SOAP_UNION_wsb__PayloadChoice_objects: {
      ObjectArray p;
      auto& objects = present(c.objects, "objects").object;
      p.values.reserve(objects.size());
      for (wsb__Object& o : objects) p.values.push_back({o.id, take(o.name), o.value, o.active});
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_message:
      return message(present(c.message, "message"));
    case SOAP_UNION_wsb__PayloadChoice_messages: {
      MessageList p;
      auto& messages = present(c.messages, "messages").message;
      p.messages.reserve(messages.size());
      for (wsb__Message& m : messages) p.messages.push_back(message(m));
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_binary: {
      Binary p;
      bytes_of(present(c.binary, "binary"), p.data);
      return p;
    }
    case SOAP_UNION_wsb__PayloadChoice_buildings:
      return buildings(present(c.buildings, "buildings"));
    default:
      fail(std::string("<wsb:") + element + "> carries no payload element");
  }
}

Message Unbinder::message(wsb__Message& w) const {
  Message m;
  m.meta = {take(w.recipient), take(w.sender), take(w.authToken), w.timestamp};
  m.records.reserve(w.record.size());
  for (wsb__Record& x : w.record)
    m.records.push_back({take(x.title), take(x.author), take(x.body), x.sequence, x.created,
                         x.priority, x.category, x.flags, x.ttl});
  // Absent (or nil) attachment: message A's empty attachment.
  if (w.attachment != nullptr) bytes_of(*w.attachment, m.attachment);
  return m;
}

BuildingCollection Unbinder::buildings(wsb__BuildingList& l) const {
  BuildingCollection p;
  p.buildings.reserve(l.building.size());
  for (wsb__Building& w : l.building) {
    Building b{take(w.id), take(w.name), w.height, w.floors, {}};
    b.footprint.reserve(w.point.size());
    for (const wsb__Point& pt : w.point) b.footprint.push_back({pt.x, pt.y});
    p.buildings.push_back(std::move(b));
  }
  return p;
}

}  // namespace wsb::soap
