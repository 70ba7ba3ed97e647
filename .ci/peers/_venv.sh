# peer_venv VENV VERSION CHECK INSTALL: a Python VERSION virtualenv at VENV in which the Python code CHECK runs;
# unless it already does, made afresh and INSTALL (shell commands, the venv's pip first on PATH) run in it.
peer_venv() {
    local venv=$1 version=$2 check=$3 install=$4
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
        return 0
    fi
    local python="python$version"
    "$python" -c '' 2>/dev/null || export PYENV_VERSION=$version  # a pyenv shim runs only when it is selected
    rm -rf "$venv"
    "$python" -m venv "$venv"
    (export PATH="$venv/bin:$PATH" PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 && eval "$install")
    "$venv/bin/python" -c "$check"
}
