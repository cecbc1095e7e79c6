#!/usr/bin/env bash
# Install memrepo with the content scanner's hot modules compiled to C by mypyc (the opt-in build,
# pyproject.toml's mypyc hook; needs a C compiler) into a venv of its own, default .venv-compiled.
# The build runs on a copy of the checkout: the hook compiles in place, and a compiled module left
# in src/ would shadow the .py file it was built from in an editable install.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv-compiled}"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r src policies pyproject.toml README.md .pre-commit-hooks.yaml "$copy"/
find "$copy" \( -name __pycache__ -o -name '*.so' \) -prune -exec rm -rf {} +
python3 -m venv "$venv"
"$venv"/bin/pip install -q --upgrade pip >/dev/null 2>&1 || true
HATCH_BUILD_HOOK_ENABLE_MYPYC=true "$venv"/bin/pip install -q "$copy[test]"
"$venv"/bin/python -c "from memrepo import detect; assert detect.compiled(); print('compiled scanner installed in $venv')"
