# OpenEnv 0.10.0 (the `openenv` package: its EnvClient, GenericEnvClient and MCPToolClient) in a virtualenv at $1,
# with whose own clients the tests play `occubench serve --protocol openenv`. It cannot share ours: it needs mcp<2
# through fastmcp 3. Its dependencies come with it (fastmcp, gradio, huggingface_hub, openai...): the clients import
# some of them. Sourced by .ci/peers.sh with arguments DIR/openenv and the repository root.
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
peer_venv "${1:?usage: bash .ci/peers/openenv.sh DIR/openenv REPO}" 3.11 \
    'import openenv.core.mcp_client, importlib.metadata as m; assert m.version("openenv") == "0.10.0"' \
    'pip install openenv==0.10.0'
