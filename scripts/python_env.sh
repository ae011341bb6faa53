# Sourced by scripts that need Python packages beyond the standard library.
# wsbench_python_env: a virtual environment in build/python over Debian's
# python3 (so Debian's matplotlib and numpy stay visible), with SciPy from
# PyPI pinned to Debian bookworm's version: Debian's python3-scipy pulls
# Boost 1.74 headers, which conflict with the Boost 1.81 wsbench builds
# with. Sets WSBENCH_PYTHON to its interpreter; a second call does nothing.
# shellcheck shell=bash

WSBENCH_SCIPY_VERSION=1.10.1

wsbench_python_env() {
  local root venv
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$root/build/python"
  if [ ! -x "$venv/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "$venv" || return 1
  fi
  if ! "$venv/bin/python" -c "import scipy" 2>/dev/null; then
    echo "wsbench: installing scipy==$WSBENCH_SCIPY_VERSION into build/python" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "scipy==$WSBENCH_SCIPY_VERSION" ||
      return 1
  fi
  WSBENCH_PYTHON="$venv/bin/python"
  export WSBENCH_PYTHON
}
