# Harbor's ATIF schema (harbor.models.trajectories: pydantic models, the only thing they import) in a Python 3.12
# virtualenv at $1, against which `occubench export --format atif` is validated. Harbor itself is installed without
# its dependencies: they bring LiteLLM and a cloud SDK per sandbox provider, none of which the schema needs.
# Sourced by .ci/peers.sh with arguments DIR/harbor and the repository root.
venv=${1:?usage: bash .ci/peers/harbor.sh DIR/harbor REPO}
check='import harbor.models.trajectories, importlib.metadata as m; assert m.version("harbor") == "0.26.0"'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
    return 0 2>/dev/null || exit 0  # already complete
fi
python=${PYTHON312:-python3.12}
# A pyenv shim of python3.12 runs only when 3.12 is selected.
"$python" -c '' 2>/dev/null || export PYENV_VERSION=3.12
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pydantic>=2.14"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps harbor==0.26.0
"$venv/bin/python" -c "$check"
