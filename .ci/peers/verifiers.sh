# verifiers 0.4.0 (its `vf-eval` and the `verifiers.v1` stack) in a Python 3.11 virtualenv at $1, with this
# repository's integrations/verifiers (`occubench-verifiers`) installed into it as a user would (not editable): the
# tests run `vf-eval` on an occubench environment there. It cannot share our virtualenv: verifiers pins mcp==2.0.0
# and openai<3. Reused when complete and the integration installed is the repository's current one (a hash of its
# files); otherwise the integration alone is reinstalled. Sourced by .ci/peers.sh with arguments DIR/verifiers and
# the repository root.
venv=${1:?usage: bash .ci/peers/verifiers.sh DIR/verifiers REPO}
repo=${2:?usage: bash .ci/peers/verifiers.sh DIR/verifiers REPO}
source_dir="$repo/integrations/verifiers"
stamp="$venv/occubench-verifiers.sha256"
# Its source files: not caches (hidden folders, __pycache__) nor what a build leaves.
digest=$(cd "$source_dir" && find . -type f -not -path '*/.*' -not -path '*/__pycache__/*' \
    -not -path '*.egg-info/*' -not -path './build/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
peer_venv "$venv" 3.11 \
    'import os, sys, verifiers.v1, importlib.metadata as m; assert m.version("verifiers") == "0.4.0"
assert os.path.exists(os.path.join(os.path.dirname(sys.executable), "vf-eval"))' \
    'pip install verifiers==0.4.0'
if [ "$(cat "$stamp" 2>/dev/null)" != "$digest" ]; then
    # Built from a copy, so no build/ or .egg-info is left in the repository.
    copy=$(mktemp -d)
    cp -R "$source_dir/." "$copy"
    # Its dependencies (aiohttp, openai, mcp) come with verifiers.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$copy"
    rm -rf "$copy"
    "$venv/bin/python" -c 'import occubench_verifiers'
    echo "$digest" > "$stamp"
fi
