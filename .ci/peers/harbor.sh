# Harbor's ATIF schema (harbor.models.trajectories: pydantic models, the only thing they import) in a Python 3.12
# virtualenv at $1, against which `occubench export --format atif` is validated. Harbor itself is installed without
# its dependencies: they bring LiteLLM and a cloud SDK per sandbox provider, none of which the schema needs.
# Sourced by .ci/peers.sh with arguments DIR/harbor and the repository root.
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
peer_venv "${1:?usage: bash .ci/peers/harbor.sh DIR/harbor REPO}" 3.12 \
    'import harbor.models.trajectories, importlib.metadata as m; assert m.version("harbor") == "0.26.0"' \
    'pip install "pydantic>=2.14" && pip install --no-deps harbor==0.26.0'
