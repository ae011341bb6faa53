// soapcpp2 input: its //gsoap directives and @, $ member markers must stay
// exactly as written.
// clang-format off
// gSOAP interface header for the wsbench SOAP service: input to soapcpp2, not
// a C++ header. The build generates soapStub.h, soapH.h, soapC.cpp, the
// wsbenchProxy / wsbenchService classes, wsbench.nsmap, wsbench.wsdl and
// wsb.xsd from it (src/soap/CMakeLists.txt).
//
// Style: SOAP 1.1, document/literal, one schema with target namespace
// urn:wsbench (prefix wsb), elements qualified, attributes unqualified.
//
// Binary content: every binary is an xsd:base64Binary element. The `soap`
// codec sends it inline as base64; `soap-mtom` sets the MIME type of the
// same struct and switches the engine to SOAP_ENC_MTOM, so gSOAP replaces
// the element's content with <xop:Include href="cid:..."/> and sends the raw
// bytes as a MIME part. XOP is a serialization of the same infoset, so both
// codecs carry the same message under the same schema. (xop.h's
// _xop__Include is not used: outside MTOM mode gSOAP writes it as an extra
// <xop:Include>base64</xop:Include> child, a different schema from plain
// base64Binary, so the two codecs would not be comparable.)
//
// Operations: `get` is what the codecs encode (its response carries one
// payload of the catalogue); all of them are served by the gsoap stack
// (soap_operations.cpp implements them, soap_client.cpp calls them) for the
// round-trip experiments (E1 ping, E3 get, echo, E5 messaging, E7 primes,
// E8 define and put).
// Their parameters are elements of the schema namespace like every other
// (elementForm qualified): <wsb:primes><wsb:n>3</wsb:n></wsb:primes>, as
// the generated WSDL says.

//gsoap wsb service name:           wsbench
//gsoap wsb service namespace:      urn:wsbench
//gsoap wsb service style:          document
//gsoap wsb service encoding:       literal
//gsoap wsb schema namespace:       urn:wsbench
//gsoap wsb schema elementForm:     qualified
//gsoap wsb schema attributeForm:   unqualified

// GML 3 (the gml payload's geometry and feature members): the types below
// are the subset of the OGC schema the buildings use. Not imported from
// schemas.opengis.net: soapcpp2 writes this subset into the WSDL as a schema
// of its own, so the WSDL loads without network access and says what
// gml:featureMember holds here (a wsb:Building).
//gsoap gml schema namespace:       http://www.opengis.net/gml
//gsoap gml schema elementForm:     qualified
//gsoap gml schema attributeForm:   unqualified

#import "stlvector.h"
// The xop namespace in the namespace table, so MTOM's <xop:Include> is
// written and matched by prefix. Its schema is imported from the server
// itself (GET /xop.xsd, relative to the WSDL), not from www.w3.org.
#import "xop.h"
//gsoap xop schema import:          xop.xsd

// Built-in XML schema types, named so the generated schema says what each
// C++ type is on the wire.
typedef std::string xsd__string;
typedef bool xsd__boolean;
typedef short xsd__short;
typedef int xsd__int;
typedef unsigned int xsd__unsignedInt;
typedef LONG64 xsd__long;
typedef double xsd__double;
typedef std::string xsd__ID;
typedef std::string xsd__anyURI;
typedef std::string xsd__positiveInteger;

// xsd:base64Binary, with the id/type/options members that make gSOAP send
// it as an MTOM attachment when SOAP_ENC_MTOM is set and `type` is not
// NULL (the shape wsdl2h generates). Inline base64 otherwise: leave id,
// type and options NULL outside MTOM, or gSOAP switches to DIME.
// `href` is soap-swa's reference to a MIME part of a SOAP with Attachments
// package (<wsb:binary href="cid:..."/>, content empty); gSOAP resolves it
// on receipt into __ptr and __size. NULL (not written) otherwise.
struct xsd__base64Binary {
  unsigned char *__ptr;
  int __size;
  char *id;
  char *type;
  char *options;
  @char *href;
};

// ---- payload types (src/common/payload.h) ----

struct wsb__IntList {
  std::vector<xsd__int> item 0;
};

struct wsb__StringList {
  std::vector<xsd__string> item 0;
};

struct wsb__Object {
  xsd__int id;
  xsd__string name;
  xsd__double value;
  xsd__boolean active;
};

struct wsb__ObjectList {
  std::vector<struct wsb__Object> object 0;
};

// Message A: 100 records and no attachment; message B: an attachment and
// no records.
struct wsb__Record {
  xsd__string title;
  xsd__string author;
  xsd__string body;
  xsd__long sequence;
  xsd__long created;
  xsd__int priority;
  xsd__int category;
  xsd__int flags;
  xsd__short ttl;
};

struct wsb__Message {
  xsd__string recipient;
  xsd__string sender;
  xsd__string authToken;
  xsd__long timestamp;  // nanoseconds since the epoch
  std::vector<struct wsb__Record> record 0;
  struct xsd__base64Binary *attachment 0;  // absent when empty
};

// Every message a queue held, oldest first (the messaging service's receive,
// as a payload of its own).
struct wsb__MessageList {
  std::vector<struct wsb__Message> message 0;
};

// The gml payload as GML 3 building features (common/gml.h):
//   <wsb:buildings><gml:featureMember><wsb:Building gml:id="...">
//     <gml:name/><wsb:height/><wsb:floors/><wsb:footprint>
//       <gml:Polygon srsName="..."><gml:exterior><gml:LinearRing>
//         <gml:posList srsDimension="2">x1 y1 x2 y2 ...</gml:posList>
//   </gml:LinearRing></gml:exterior></gml:Polygon></wsb:footprint>
//   </wsb:Building></gml:featureMember>...</wsb:buildings>
// GML's posList is a list of doubles, which gSOAP has no type for: the
// binding formats and parses it as text.
struct gml__DirectPositionListType {
  std::string __item;                      // "x1 y1 x2 y2 ..."
  @xsd__positiveInteger srsDimension 1;    // "2"
};

struct gml__LinearRingType {
  struct gml__DirectPositionListType gml__posList;  // a closed ring, 4 or more points
};

struct gml__AbstractRingPropertyType {
  struct gml__LinearRingType gml__LinearRing;
};

struct gml__PolygonType {
  @xsd__anyURI srsName 1;
  struct gml__AbstractRingPropertyType gml__exterior;
};

struct wsb__FootprintProperty {
  struct gml__PolygonType gml__Polygon;
};

struct wsb__Building {
  @xsd__ID gml__id 1;
  xsd__string gml__name;
  xsd__double height;
  xsd__int floors;
  struct wsb__FootprintProperty footprint;
};

struct wsb__BuildingMember {
  struct wsb__Building Building;
};

struct wsb__BuildingList {
  std::vector<struct wsb__BuildingMember> gml__featureMember 0;
};

// xs:choice of one payload. The generated schema marks the choice
// minOccurs="0" (its members are pointers); the codec rejects a response
// without one.
union wsb__PayloadChoice {
  xsd__string *text;
  struct wsb__IntList *ints;
  struct wsb__StringList *strings;
  struct wsb__ObjectList *objects;
  struct wsb__Message *message;
  struct xsd__base64Binary *binary;
  struct wsb__BuildingList *buildings;
  struct wsb__MessageList *messages;
  // soap-mtom's form of `buildings`: the same <wsb:buildings> element as
  // a GML document of its own, sent as an MTOM attachment (as cha-et-al
  // sent GML files), with MIME type application/gml+xml.
  struct xsd__base64Binary *buildingsDocument;
};

// A payload as a parameter (echo's request).
struct wsb__Payload {
  $int __union_payload;
  union wsb__PayloadChoice payload;
};

// ---- operation responses ----

struct wsb__pingResponse {
  xsd__string reply;  // wsb::kPingReply
};

// <wsb:getResponse> holds the choice directly: Body/getResponse/ints/item.
struct wsb__getResponse {
  $int __union_payload;
  union wsb__PayloadChoice payload;
};

struct wsb__echoResponse {
  $int __union_payload;
  union wsb__PayloadChoice payload;
};

struct wsb__RegisterClientResponse {
  xsd__string queue;  // the queue id later operations name
};

struct wsb__SendMessageResponse {
};

struct wsb__ReceiveMessageResponse {
  std::vector<struct wsb__Message> message 0;  // every queued message, oldest first
};

struct wsb__UnregisterClientResponse {
};

struct wsb__putResponse {
};

// ---- operations ----

/// Empty request, a short fixed reply ("pong"): the protocol's fixed cost.
int wsb__ping(struct wsb__pingResponse &response);

/// The catalogue payload `kind` (a wsb::kind_name) of size n (a PayloadSpec::n).
int wsb__get(xsd__string kind, xsd__long n, struct wsb__getResponse &response);

/// Returns the payload it was sent.
int wsb__echo(struct wsb__Payload *payload, struct wsb__echoResponse &response);

/// Messaging service of aihkisalo-paaso: register a client and get its queue.
int wsb__RegisterClient(struct wsb__RegisterClientResponse &response);

/// Appends a message to a queue.
int wsb__SendMessage(xsd__string queue, struct wsb__Message *message,
                     struct wsb__SendMessageResponse &response);

/// Removes and returns every message of a queue.
int wsb__ReceiveMessage(xsd__string queue, struct wsb__ReceiveMessageResponse &response);

/// Deletes a queue.
int wsb__UnregisterClient(xsd__string queue, struct wsb__UnregisterClientResponse &response);

/// "FIRST n numbers: 2 3 5 ...", computed on each call (costa-bernardino).
int wsb__primes(xsd__unsignedInt n, xsd__string &result);

/// E8's dictionary: the word's definition; a SOAP Fault if there is none.
int wsb__define(xsd__string word, xsd__string &definition);

/// E8's dictionary: inserts the word or replaces its definition.
int wsb__put(xsd__string word, xsd__string definition, struct wsb__putResponse &response);

/// E9's upload (cha-et-al's direction): takes a payload, answers with a
/// receipt of what it decoded, "<raw bytes> <64-bit hash, hex>" (wsb::upload_receipt).
int wsb__upload(struct wsb__Payload *payload, xsd__string &receipt);
