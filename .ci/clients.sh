#!/usr/bin/env bash
# Installs the real agent clients the client tests drive (testscripts/
# clients_test.go): Claude Code and Codex, pinned, from the npm registry,
# into $M1ND_CLIENTS_DIR (default ~/.cache/m1nd-clients). Skips the
# install when both pinned versions are already there. Prints each
# binary's path and version, and how long the install took.
#
# Use: .ci/clients.sh, then export M1ND_CLIENTS_DIR=~/.cache/m1nd-clients
# (or the folder you chose) so `go test ./testscripts` finds them.
set -euo pipefail

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
dir="${M1ND_CLIENTS_DIR:-$HOME/.cache/m1nd-clients}"
bin="$dir/node_modules/.bin"

have() { # binary version
  [ -x "$bin/$1" ] && "$bin/$1" --version 2>/dev/null | grep -qF "$2"
}

if have claude "$CLAUDE_VERSION" && have codex "$CODEX_VERSION"; then
  echo "clients already installed in $dir"
else
  command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node.js (Claude Code wants node >= 22)" >&2; exit 1; }
  mkdir -p "$dir"
  start=$(date +%s)
  # Claude Code's postinstall puts its native binary in place; an engine
  # warning (it asks for node >= 22) is harmless here: the binary is native.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION"
  echo "installed the clients in $(( $(date +%s) - start ))s into $dir"
  have claude "$CLAUDE_VERSION" || { echo "claude $CLAUDE_VERSION did not install" >&2; exit 1; }
  have codex "$CODEX_VERSION" || { echo "codex $CODEX_VERSION did not install" >&2; exit 1; }
fi
for b in claude codex; do
  printf '%s: %s (%s)\n' "$b" "$(readlink -f "$bin/$b")" "$("$bin/$b" --version 2>&1 | head -n 1)"
done
