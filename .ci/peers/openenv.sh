# OpenEnv 0.10.0 (the `openenv` package: its EnvClient, GenericEnvClient and MCPToolClient) in a virtualenv at $1,
# with whose own clients the tests play `occubench serve --protocol openenv`. It cannot share ours: it needs mcp<2
# through fastmcp 3. Its dependencies come with it (fastmcp, gradio, huggingface_hub, openai...): the clients import
# some of them. Sourced by .ci/peers.sh with arguments DIR/openenv and the repository root.
venv=${1:?usage: bash .ci/peers/openenv.sh DIR/openenv REPO}
check='import openenv.core.mcp_client, importlib.metadata as m; assert m.version("openenv") == "0.10.0"'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
    return 0 2>/dev/null || exit 0  # already complete
fi
python=${PYTHON311:-python3.11}
# A pyenv shim of python3.11 runs only when 3.11 is selected.
"$python" -c '' 2>/dev/null || export PYENV_VERSION=3.11
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check openenv==0.10.0
"$venv/bin/python" -c "$check"
