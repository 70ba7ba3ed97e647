#!/usr/bin/env bash
# Every optional extra proven from nothing: for each extra the wheel declares (but dev and docs, which the README's
# own install proves), a fresh virtualenv with `pip install "WHEEL[extra]"` and nothing else, then the first command
# of that extra's guide, taken from the guide and run as printed where it runs offline, and `occubench doctor`
# saying the extra is usable. An extra with no check here fails: a new extra needs one. Called by .ci/run once the
# wheel is built; by hand (the virtualenvs are left in WORKDIR; name extras to check only those):
#   python -m pip wheel --no-deps -w dist . && bash .ci/extras.sh dist/occubench-*.whl /tmp/extras [EXTRA...]
# The virtualenvs are made one after another and share pip's cache (~/.cache/pip, or PIP_CACHE_DIR).
set -euo pipefail
usage="usage: bash .ci/extras.sh WHEEL WORKDIR [EXTRA...]"
wheel=$(realpath "${1:?$usage}")
mkdir -p "${2:?$usage}"
work=$(cd "$2" && pwd)
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
shared="$repo/../shared"  # the data the tests read, beside the repository (CI lays it there)
export PIP_DISABLE_PIP_VERSION_CHECK=1 COLUMNS=160 no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

# guide_block FILE HEADING: the first block marked runnable (tests/test_docs.py's convention) under the heading
# line HEADING of the guide FILE, as printed.
guide_block() {
    awk -v heading="$2" '
        $0 == heading { found = 1; next }
        found && /^<!-- runnable -->$/ { marked = 1; next }
        marked && inside && /^```$/ { exit }
        marked && inside { print; next }
        marked && /^```bash/ { inside = 1 }
    ' "$repo/docs/guides/$1"
}

run_guide_block() {
    local code
    code=$(guide_block "$1" "$2")
    [ -n "$code" ] || { echo "no runnable block under '$2' in docs/guides/$1" >&2; return 1; }
    OCCUBENCH_DOCS_REPO=$repo bash -euo pipefail -c "$code"
}

# start_mock: the project's mock OpenAI-compatible server on a free loopback port, its base URL in $mock_url.
start_mock() {
    python -m occubench.testing.server --port 0 >mock.out 2>&1 &
    mock_pid=$!
    for _ in $(seq 100); do
        mock_url=$(head -n1 mock.out)
        [ -n "$mock_url" ] && return 0
        sleep 0.1
    done
    echo "the mock server did not start:" >&2
    cat mock.out >&2
    return 1
}
stop_mock() {
    [ -n "${mock_pid:-}" ] || return 0
    kill "$mock_pid" && wait "$mock_pid" || true
    mock_pid=
}

# One function per extra: run in the extra's virtualenv (its bin first on PATH), in an empty folder.
check_openai() {
    # An endpoint whose URL carries credentials goes through the openai SDK's transport, which only this extra has.
    start_mock
    occubench run --suite executable --agent-model mock-agent --base-url "http://user:secret@${mock_url#http://}" \
        --task-ids insurance_claims/pay_water_claim --run-name sdk
    stop_mock
    test -s results/sdk/results.jsonl
}
check_gym() { run_guide_block rl.md "## Gymnasium"; }
check_ray() { run_guide_block rl.md "## Runs on a Ray cluster"; }
check_inspect() {
    # The guide's executable eval as printed, its openai/ model served by the mock.
    local command
    command=$(grep -m1 '^inspect eval occubench/executable' "$repo/docs/guides/inspect.md")
    start_mock
    OPENAI_BASE_URL="$mock_url" OPENAI_API_KEY=k bash -euo pipefail -c "$command"
    stop_mock
    occubench report logs/  # the guide's next step: the log's samples scored, none an error
}
check_awm() { occubench validate --suite awm --data-dir "$shared/awm-1k-sample"; }
check_parquet() {
    # The rows are token ids: a run that recorded them, the mock as agent.
    start_mock
    occubench run --suite executable --agent-model mock-agent --base-url "$mock_url" --record-tokens \
        --task-ids insurance_claims/pay_water_claim --run-name tokens
    stop_mock
    occubench export results/tokens --out rollouts.parquet
    python -c "import pyarrow.parquet as pq; t = pq.read_table('rollouts.parquet'); assert t.num_rows, t; \
print('rollouts.parquet:', t.num_rows, 'row(s) of', t.column_names)"
}
check_hub() { run_guide_block worlds-hub.md "## Try it offline"; }
check_otel() { run_guide_block telemetry.md "## Try it offline"; }

declared=$(python3 -c "import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith('.dist-info/METADATA'))
    print(' '.join(l.split(':', 1)[1].strip() for l in wheel.read(name).decode().splitlines()
                   if l.startswith('Provides-Extra:')))" "$wheel")
extras=${*:-$declared}
started=$SECONDS
for extra in $extras; do
    case " dev docs " in *" $extra "*) continue ;; esac
    case " $declared " in *" $extra "*) ;; *) echo "$extra: not an extra of $(basename "$wheel") ($declared)" >&2; exit 2 ;; esac
    if ! declare -F "check_$extra" >/dev/null; then
        echo "extra $extra has no check in .ci/extras.sh: add check_$extra, its guide's first command" >&2
        exit 1
    fi
    begin=$SECONDS
    venv="$work/$extra"
    rm -rf "$venv" "$work/$extra-run"
    python3 -m venv "$venv"
    # No byte-compiling of every installed module (Ray's and Inspect's are many): what runs is compiled on import.
    "$venv/bin/python" -m pip install --quiet --no-compile "$wheel[$extra]"
    mkdir "$work/$extra-run"
    set +e  # the subshell's own -e stops it at its first failure (ignored if it stood left of ||)
    (
        set -e
        cd "$work/$extra-run"
        export PATH="$venv/bin:$PATH"
        unset PYTHONPATH OPENAI_API_KEY OPENAI_BASE_URL VIRTUAL_ENV
        trap stop_mock EXIT
        "check_$extra"
        occubench doctor | tee doctor.txt
        grep -qx "  $extra: yes" doctor.txt || { echo "occubench doctor does not find $extra usable" >&2; exit 1; }
    )
    status=$?
    set -e
    if [ "$status" != 0 ]; then
        echo "extra $extra FAILED: pip install \"$(basename "$wheel")[$extra]\", then its guide's command" >&2
        exit 1
    fi
    echo "extra $extra: ok ($((SECONDS - begin)) s)"
done
echo "extras: ok ($((SECONDS - started)) s)"
