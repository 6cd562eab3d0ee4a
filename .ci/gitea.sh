#!/usr/bin/env bash
# Builds Gitea from its Go module, pinned, for the forge round trip
# (testscripts/forges_test.go), into $M1ND_GITEA_DIR (default
# ~/.cache/m1nd-gitea/<version>): the binary, and the module's source tree
# beside it, whose options/ (locales) a build without bindata reads at run
# time (STATIC_ROOT_PATH). Skips the build when that version is there.
# About 4 minutes on 2 cores the first time; nothing after.
#
# Use: .ci/gitea.sh, then export M1ND_GITEA_DIR=~/.cache/m1nd-gitea/1.27.3
# (or the folder you chose) so `go test ./testscripts` finds it.
set -euo pipefail

GITEA_VERSION=1.27.3
dir="${M1ND_GITEA_DIR:-$HOME/.cache/m1nd-gitea/$GITEA_VERSION}"

if [ -x "$dir/gitea" ] && [ -d "$dir/src/options" ]; then
  echo "gitea $GITEA_VERSION already built in $dir"
  exit 0
fi
start=$(date +%s)
mkdir -p "$dir"
src=$(cd "$dir" && go mod download -json "code.gitea.io/gitea@v$GITEA_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "go mod download gave no source folder for gitea $GITEA_VERSION" >&2; exit 1; }
rm -rf "$dir/src.tmp" && cp -r "$src" "$dir/src.tmp" && chmod -R u+w "$dir/src.tmp"
# sqlite needs cgo (gcc); the version is stamped as Gitea's own Makefile does.
(cd "$dir/src.tmp" && CGO_ENABLED=1 GOFLAGS= go build -tags 'sqlite sqlite_unlock_notify' \
  -ldflags "-X main.Version=$GITEA_VERSION" -o "$dir/gitea.tmp" .)
rm -rf "$dir/src" && mv "$dir/src.tmp" "$dir/src" && mv "$dir/gitea.tmp" "$dir/gitea"
echo "gitea $("$dir/gitea" --version 2>/dev/null | head -n 1) built in $dir in $(( $(date +%s) - start ))s"
