#!/usr/bin/env bash
# Runs compare_test.py with the interpreter scripts/compare uses (SciPy).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/python_env.sh
wsbench_python_env
exec "$WSBENCH_PYTHON" tests/scripts/compare_test.py
