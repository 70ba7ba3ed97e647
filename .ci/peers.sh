#!/usr/bin/env bash
# The peer projects our integrations are tested with, each in a virtualenv of its own under DIR: they cannot share
# ours (openenv needs mcp<2 through fastmcp 3, verifiers pins mcp==2.0.0 and openai<3, harbor needs Python 3.12 and
# brings LiteLLM), and an integration is tested with the other project's own client, server or schema. Each
# .ci/peers/<name>.sh makes DIR/<name> (its bin/ holds the peer's python and commands). Tests find them through
# OCCUBENCH_PEERS=DIR; without it they skip, and with OCCUBENCH_REQUIRE_PEERS=1 (as .ci/run sets) they fail.
set -euo pipefail
dir=${1:?usage: bash .ci/peers.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
for script in "$here"/peers/[!_]*.sh; do
    [ -e "$script" ] || continue
    name=$(basename "$script" .sh)
    echo "peer $name: $dir/$name"
    # shellcheck source=/dev/null
    (. "$script" "$dir/$name" "$here/..")
done
