#!/bin/sh
# expected_source.sh SOURCE_DIR OUT: writes "<commit> <dirty>" of the
# checkout at SOURCE_DIR to OUT, as the source stamp should have it
# ("unknown unknown" outside the top of a git checkout), asked with other
# git commands than cmake/SourceStamp.cmake's.
src=$1
out=$2
commit=unknown
dirty=unknown
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
  [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ] &&
  commit=$(git -C "$src" rev-parse --verify -q HEAD) || commit=unknown
if [ "$commit" != unknown ]; then
  if git --no-optional-locks -C "$src" diff --quiet HEAD --; then dirty=false; else dirty=true; fi
fi
printf '%s %s\n' "$commit" "$dirty" >"$out"
