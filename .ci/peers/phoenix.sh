# Arize Phoenix 20.26.1 (the `arize-phoenix` server: an OpenTelemetry trace collector with its own store and UI) and
# its own client, arize-phoenix-client 3.5.0 (`phoenix.client`), in a Python 3.11 virtualenv at $1: the tracing tests
# start its server on loopback, send it traces with our OpenTelemetry SDK and read back what it stored through its
# client (tests/telemetry/phoenix.py). It is a server we run, not a library we import: apart, its heavy dependencies
# (~850 MB: its own OpenTelemetry, grpcio, pandas, pyarrow, SQLAlchemy, strawberry-graphql, LLM SDKs) do not move
# ours. Sourced by .ci/peers.sh with arguments DIR/phoenix and the repository root.
. "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
peer_venv "${1:?usage: bash .ci/peers/phoenix.sh DIR/phoenix REPO}" 3.11 \
    'import os, sys, phoenix.server.main, phoenix.client, importlib.metadata as m
assert m.version("arize-phoenix") == "20.26.1" and m.version("arize-phoenix-client") == "3.5.0"
assert os.path.exists(os.path.join(os.path.dirname(sys.executable), "phoenix"))' \
    'pip install arize-phoenix==20.26.1 arize-phoenix-client==3.5.0'
