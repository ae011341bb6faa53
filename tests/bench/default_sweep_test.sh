#!/usr/bin/env bash
# The default sweep's rows: the codec kernels on the payloads of its round
# trips only, every step table and every round-trip table still with rows
# (a ping per stack and codec, the TLS rows and their new-connection
# partners, the anchors), the rest under --full; and a filter that names a
# payload of the full catalogue alone still gets it.
set -euo pipefail
bench=$1
fail() { echo "FAIL: $*"; exit 1; }

default=$("$bench" --benchmark_list_tests=true 2>/dev/null)
full=$("$bench" --full --benchmark_list_tests=true 2>/dev/null)
codec=$(grep -Ev '^(rtt|anchor)/' <<<"$default")
rtt=$(grep -E '^rtt/' <<<"$default")

# The codec payloads: exactly the round trips' get and echo payloads.
payloads=$(awk -F/ '{print ($1 == "memcpy") ? $2 "/" $3 : $3 "/" $4}' <<<"$codec" |
  sort -u | tr '\n' ' ')
[ "$payloads" = "ints/3200 message-a/100 message-b/128KiB " ] ||
  fail "default codec payloads: $payloads"

# Every table of the summary keeps rows: each step, the memcpy floor and
# gSOAP's chunked encode.
for family in memcpy encode decode bind write read unbind encode-chunked; do
  grep -q "^$family/" <<<"$codec" || fail "no $family rows in the default sweep"
done

# Every stack and codec of the default keeps its ping; the TLS stacks their
# three calls kept alive and as new connections; the anchors all theirs.
for stack_codec in $(cut -d/ -f2,3 <<<"$rtt" | sort -u); do
  grep -q "^rtt/$stack_codec/ping/same/" <<<"$rtt" || fail "no ping for $stack_codec"
done
for tls in $(grep -Eo '^rtt/[^/]+-tls/[^/]+/' <<<"$rtt" | sort -u); do
  for call in ping echo/message-a/100 echo/message-b/128KiB; do
    for connection in "" new-connection/; do
      grep -q "^$tls$call/${connection}same/" <<<"$rtt" || fail "no $tls$call/$connection"
    done
  done
done
[ "$(grep -c '^anchor/' <<<"$default")" = "$(grep -c '^anchor/' <<<"$full")" ] ||
  fail "the default sweep lacks anchors of the full one"
grep -q '^rtt/grpc/protobuf/ping/same/' <<<"$rtt" || fail "no gRPC ping"

# The rest is --full's: more rows, and the size series.
[ "$(grep -c . <<<"$full")" -gt "$(grep -c . <<<"$default")" ] || fail "--full adds no rows"
! grep -q '^encode/json/objects/800$' <<<"$default" || fail "objects/800 in the default"
for row in rtt/beast-tls/xml/ping/same/ rtt/beast/soap-mtom/get/ints/3200/same/; do
  ! grep -q "^$row" <<<"$default" || fail "$row in the default"
  grep -q "^$row" <<<"$full" || fail "$row not in --full"
done

# A filter naming payloads of the full catalogue runs them, with a note why.
widened=$("$bench" --benchmark_list_tests=true '--benchmark_filter=^encode/json/objects/800$' 2>&1)
grep -qx 'encode/json/objects/800' <<<"$widened" || fail "filter not widened: $widened"
grep -q 'codec payloads of the full sweep' <<<"$widened" || fail "no note: $widened"
# A filter that names no payload gets the default's three.
plain=$("$bench" --benchmark_list_tests=true '--benchmark_filter=^encode/json/' 2>/dev/null)
[ "$(grep -c . <<<"$plain")" = 3 ] || fail "encode/json/ selects: $plain"
echo "ok: $(grep -c . <<<"$default") default rows ($(grep -c . <<<"$full") with --full)"
