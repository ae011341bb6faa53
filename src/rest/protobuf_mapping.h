// The protobuf codec's mapping between the model and the generated
// messages (protobuf_codec.cpp), for code that carries the messages
// themselves rather than their bytes: the grpc stack. Includes the
// generated header: only the protobuf codec and the grpc stack include it.
#pragma once

#include "common/payload.h"
#include "wsbench.pb.h"

namespace wsb::rest {

// Model -> message, into a message that may hold an earlier one: its
// storage is reused as the codec's reuse policy does.
void bind_response(const Payload& in, wsbench::Response& out);
void bind_message(const Message& in, wsbench::Message& out);

// Message -> model with the codec's checks (oneof set, ttl in range, equal
// footprint columns, no unknown fields); throws DecodeError.
Payload unbind_response(const wsbench::Response& in);
Message unbind_message(const wsbench::Message& in);

}  // namespace wsb::rest
