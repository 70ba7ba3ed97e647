# olah 0.5.4, a self-hosted Hugging Face Hub mirror, in a Python 3.11 virtualenv at $1: in offline mode it serves
# local git repositories as Hub repositories, and the tests fetch world packages from it with huggingface_hub (the
# hf:// backend). It is a server we run, not a library we import: apart, its dependency floors (fastapi>=0.141,
# pydantic>=2.13, huggingface_hub>=1.27) do not move ours. Read-only: it takes no uploads. Sourced by .ci/peers.sh
# with arguments DIR/olah and the repository root.
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
peer_venv "${1:?usage: bash .ci/peers/olah.sh DIR/olah REPO}" 3.11 \
    'import os, sys, olah, importlib.metadata as m; assert m.version("olah") == "0.5.4"
assert os.path.exists(os.path.join(os.path.dirname(sys.executable), "olah-cli"))' \
    'pip install olah==0.5.4'
