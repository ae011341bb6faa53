# Sourced by the tests that run wsbench-server as a process: starts
# "$server" (set by the caller) in the background and sets $pid and the
# endpoints it prints ($beast, $gsoap, $xmlrpc, $grpc); `out` names its output
# file, removed with anything listed in $cleanup on exit. Its dictionary
# (E8) is a small list in a folder of its own, $dictionary_dir.
out=$(mktemp)
dictionary_dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$out" "$dictionary_dir" $cleanup' EXIT
printf 'apple\nzebra\n' >"$dictionary_dir/words"

"$server" --dictionary-dir "$dictionary_dir" --dictionary-words "$dictionary_dir/words" >"$out" &
pid=$!
for _ in $(seq 100); do
  [ "$(wc -l <"$out")" -ge 5 ] && break  # four stacks and the floor
  sleep 0.05
done
endpoint() { awk -v s="$1" '$1 == s { print $2 }' "$out"; }
beast=$(endpoint beast)
gsoap=$(endpoint gsoap)
xmlrpc=$(endpoint xmlrpc-c)
grpc=$(endpoint grpc)
[ -n "$beast" ] && [ -n "$gsoap" ] && [ -n "$xmlrpc" ] && [ -n "$grpc" ] ||
  { echo "endpoints: $(cat "$out")"; exit 1; }
