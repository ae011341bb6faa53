// The walk from a library's value tree (a RapidJSON DOM, an xmlrpc-c value
// tree) into the payload model, written once: member names, required and
// optional members and the shape of each kind live here; how to reach a
// member, an array or a scalar of that library is the Tree policy's. Every
// member and type is checked; a failure is Tree::fail (a DecodeError).
//
// Tree provides, `what` naming the item in error messages:
//   Node, Object (a checked struct/object handle), Array (indexable range)
//   Object object(const Node&, what)         Array array(const Node&, what)
//   const Node& member(const Object&, name)  const Node* optional_member(...)
//   std::size_t size(const Array&)
//   string_of, int32_of, int64_of, double_of, bool_of (const Node&, what)
//   void bytes_of(const Node&, what, Bytes&)
//   top(const Node& root): the root checked to hold exactly one member (a
//     handle that must stay alive while the member is used)
//   std::pair<std::string_view, const Node*> only_member(top's handle)
//   [[noreturn]] void fail(const std::string&)
//   static constexpr bool kGeoJson: buildings as a GeoJSON FeatureCollection
//     (JSON) rather than an array of building structs (XML-RPC)
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/payload.h"

namespace wsb {

template <class Tree>
class TreeDecoder {
 public:
  using Node = typename Tree::Node;

  static Payload payload(const Node& root) {
    decltype(auto) top = Tree::top(root);
    const auto [kind, v] = Tree::only_member(top);
    if (kind == "text") return Text{Tree::string_of(*v, "text")};
    if (kind == "ints") {
      IntArray p;
      each(*v, "ints", p.values, [](const Node& i) { return Tree::int32_of(i, "int"); });
      return p;
    }
    if (kind == "strings") {
      StringArray p;
      each(*v, "strings", p.values, [](const Node& s) { return Tree::string_of(s, "string"); });
      return p;
    }
    if (kind == "objects") {
      ObjectArray p;
      each(*v, "objects", p.values, [](const Node& item) {
        decltype(auto) o = Tree::object(item, "object");
        return Object{Tree::int32_of(Tree::member(o, "id"), "id"),
                      Tree::string_of(Tree::member(o, "name"), "name"),
                      Tree::double_of(Tree::member(o, "value"), "value"),
                      Tree::bool_of(Tree::member(o, "active"), "active")};
      });
      return p;
    }
    if (kind == "message") return message(*v);
    if (kind == "messages") {
      MessageList p;
      each(*v, "messages", p.messages, [](const Node& m) { return message(m); });
      return p;
    }
    if (kind == "binary") {
      Binary p;
      Tree::bytes_of(*v, "binary", p.data);
      return p;
    }
    if (kind == "buildings") {
      BuildingCollection p;
      if constexpr (Tree::kGeoJson) {
        decltype(auto) collection = Tree::object(*v, "buildings");
        expect_type(collection, "FeatureCollection");
        each(Tree::member(collection, "features"), "features", p.buildings,
             [](const Node& f) { return feature(f); });
      } else {
        each(*v, "buildings", p.buildings, [](const Node& b) { return building(b); });
      }
      return p;
    }
    Tree::fail("unknown payload member '" + std::string(kind) + "'");
  }

  static Message message(const Node& v) {
    decltype(auto) s = Tree::object(v, "message");
    Message m;
    m.meta.recipient = Tree::string_of(Tree::member(s, "recipient"), "recipient");
    m.meta.sender = Tree::string_of(Tree::member(s, "sender"), "sender");
    m.meta.auth_token = Tree::string_of(Tree::member(s, "authToken"), "authToken");
    m.meta.timestamp = Tree::int64_of(Tree::member(s, "timestamp"), "timestamp");
    if (const Node* records = Tree::optional_member(s, "records")) {
      each(*records, "records", m.records, [](const Node& r) { return record(r); });
    }
    if (const Node* attachment = Tree::optional_member(s, "attachment"))
      Tree::bytes_of(*attachment, "attachment", m.attachment);
    return m;
  }

 private:
  // An array member into `out`, one element at a time.
  template <class T, class F>
  static void each(const Node& v, const char* what, std::vector<T>& out, F element) {
    const auto items = Tree::array(v, what);
    out.reserve(Tree::size(items));
    for (const auto& item : items) out.push_back(element(item));
  }

  static std::int16_t int16_of(const Node& v, const char* what) {
    const std::int32_t i = Tree::int32_of(v, what);
    if (i < std::numeric_limits<std::int16_t>::min() ||
        i > std::numeric_limits<std::int16_t>::max())
      Tree::fail(std::string(what) + " is out of 16-bit range");
    return static_cast<std::int16_t>(i);
  }

  static Record record(const Node& v) {
    decltype(auto) s = Tree::object(v, "record");
    Record r;
    r.title = Tree::string_of(Tree::member(s, "title"), "title");
    r.author = Tree::string_of(Tree::member(s, "author"), "author");
    r.body = Tree::string_of(Tree::member(s, "body"), "body");
    r.sequence = Tree::int64_of(Tree::member(s, "sequence"), "sequence");
    r.created = Tree::int64_of(Tree::member(s, "created"), "created");
    r.priority = Tree::int32_of(Tree::member(s, "priority"), "priority");
    r.category = Tree::int32_of(Tree::member(s, "category"), "category");
    r.flags = Tree::int32_of(Tree::member(s, "flags"), "flags");
    r.ttl = int16_of(Tree::member(s, "ttl"), "ttl");
    return r;
  }

  // {"type": "Feature", "id", "properties": {"name", "height", "floors"},
  //  "geometry": {"type": "Polygon", "coordinates": [[[x, y], ...]]}}: the
  // one ring is the footprint (the model has no holes).
  static Building feature(const Node& v) {
    decltype(auto) f = Tree::object(v, "feature");
    expect_type(f, "Feature");
    Building b;
    b.id = Tree::string_of(Tree::member(f, "id"), "id");
    decltype(auto) properties = Tree::object(Tree::member(f, "properties"), "properties");
    b.name = Tree::string_of(Tree::member(properties, "name"), "name");
    b.height = Tree::double_of(Tree::member(properties, "height"), "height");
    b.floors = Tree::int32_of(Tree::member(properties, "floors"), "floors");
    decltype(auto) geometry = Tree::object(Tree::member(f, "geometry"), "geometry");
    expect_type(geometry, "Polygon");
    const auto rings = Tree::array(Tree::member(geometry, "coordinates"), "coordinates");
    if (Tree::size(rings) != 1) Tree::fail("a building's Polygon must have exactly one ring");
    positions(rings[0], b.footprint);
    return b;
  }

  template <class Object>
  static void expect_type(const Object& o, const char* type) {
    if (Tree::string_of(Tree::member(o, "type"), "type") != type)
      Tree::fail(std::string("\"type\" must be \"") + type + "\"");
  }

  // [[x, y], ...] into `out`.
  static void positions(const Node& v, std::vector<Point>& out) {
    const auto points = Tree::array(v, "footprint");
    out.reserve(Tree::size(points));
    for (const auto& p : points) {
      const auto xy = Tree::array(p, "point");
      if (Tree::size(xy) != 2) Tree::fail("point does not have two coordinates");
      out.push_back({Tree::double_of(xy[0], "x"), Tree::double_of(xy[1], "y")});
    }
  }

  static Building building(const Node& v) {
    decltype(auto) s = Tree::object(v, "building");
    Building b;
    b.id = Tree::string_of(Tree::member(s, "id"), "id");
    b.name = Tree::string_of(Tree::member(s, "name"), "name");
    b.height = Tree::double_of(Tree::member(s, "height"), "height");
    b.floors = Tree::int32_of(Tree::member(s, "floors"), "floors");
    positions(Tree::member(s, "footprint"), b.footprint);
    return b;
  }
};

}  // namespace wsb
