#!/usr/bin/env bash
# Executes a notebook headless (jupyter nbconvert --execute) inside a
# temporary folder of its own: the executed copy, Jupyter's runtime files
# and matplotlib's cache all land there and go with it. Fails on any cell
# that raises.
#   run_notebook.sh PYTHON NOTEBOOK
set -euo pipefail
python=$1 notebook=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/vramsim-notebook.XXXXXX")
trap 'rm -rf "$work"' EXIT
export JUPYTER_RUNTIME_DIR="$work/runtime" JUPYTER_DATA_DIR="$work/data" IPYTHONDIR="$work/ipython"
export MPLCONFIGDIR="$work/mpl"
cp "$notebook" "$work/"
cd "$work"
"$python" -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
  --output executed.ipynb "$work/$(basename "$notebook")"
"$python" - "$work/executed.ipynb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
          if o.get("output_type") == "error"]
code = sum(c["cell_type"] == "code" for c in nb["cells"])
print(f"notebook: {code} code cells executed, {len(errors)} errors")
sys.exit(1 if errors else 0)
PY
