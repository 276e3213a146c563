#!/usr/bin/env bash
# refresh-testdata.sh regenerates uafamily/testdata/uap-core/ (the test
# agents of uap-core, for the accuracy tests; nothing of it is embedded in
# logtally) from github.com/ua-parser/uap-core at a pinned commit:
#
#   tests/test_ua.yaml      -> testdata/uap-core/test_ua.yaml
#   tests/test_os.yaml      -> testdata/uap-core/test_os.yaml
#   tests/test_device.yaml  -> testdata/uap-core/test_device.yaml.gz (gzip -n -9: 3.3 MB -> 0.35 MB)
#   LICENSE                 -> testdata/uap-core/LICENSE
#
# Usage:
#   uafamily/refresh-testdata.sh [--commit SHA] [--git DIR]
#
# Without --commit the commit pinned in testdata/uap-core/VERSIONS is used,
# so a plain run reproduces the committed files byte for byte. With --git
# the files are read from a local clone (bare or not) instead of
# raw.githubusercontent.com. Needs bash, gzip, and git (local mode) or
# curl and jq (download mode).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$here/testdata/uap-core
repo=ua-parser/uap-core
commit=
gitdir=

while [ $# -gt 0 ]; do
	case $1 in
	--commit) commit=$2; shift 2 ;;
	--git) gitdir=$2; shift 2 ;;
	-h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "refresh-testdata.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

[ -n "$commit" ] || commit=$(awk -F'\t' '$1 == "uap-core" { print $3 }' "$out/VERSIONS" 2>/dev/null || true)
if [ -z "$commit" ]; then
	echo "refresh-testdata.sh: no commit given and none pinned in $out/VERSIONS" >&2
	exit 2
fi

if [ -n "$gitdir" ]; then
	commit=$(git -C "$gitdir" rev-parse --verify "$commit^{commit}")
	date=$(TZ=UTC git -C "$gitdir" show -s --date=format-local:%Y-%m-%d --format=%cd "$commit")
else
	if ! [[ $commit =~ ^[0-9a-f]{40}$ ]]; then
		commit=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er .sha)
	fi
	date=$(awk -F'\t' -v c="$commit" '$1 == "uap-core" && $3 == c { print $4 }' "$out/VERSIONS" 2>/dev/null || true)
	[ -n "$date" ] || date=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er '.commit.committer.date[:10]')
fi

get() {
	if [ -n "$gitdir" ]; then
		git -C "$gitdir" show "$commit:$1"
	else
		curl -fsSL "https://raw.githubusercontent.com/$repo/$commit/$1"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in test_ua.yaml test_os.yaml test_device.yaml; do
	get "tests/$f" >"$tmp/$f"
	grep -q '^test_cases:' "$tmp/$f" || { echo "refresh-testdata.sh: tests/$f: no test_cases" >&2; exit 1; }
done
get LICENSE >"$tmp/LICENSE"
grep -q 'Apache License, Version 2.0' "$tmp/LICENSE" || { echo "refresh-testdata.sh: LICENSE is no longer Apache 2.0: review it and fix VERSIONS" >&2; exit 1; }

mkdir -p "$out"
cp "$tmp/test_ua.yaml" "$tmp/test_os.yaml" "$tmp/LICENSE" "$out/"
gzip -n -9 -c "$tmp/test_device.yaml" >"$out/test_device.yaml.gz"
{
	printf '# The uap-core test agents in testdata/uap-core, written by ../../refresh-testdata.sh: do not edit.\n'
	printf '# name\trepository\tcommit\tcommit date (UTC)\tlicence\tupstream files -> files here\n'
	printf 'uap-core\thttps://github.com/%s\t%s\t%s\tApache-2.0\ttests/test_ua.yaml, tests/test_os.yaml, tests/test_device.yaml (gzip -n -9), LICENSE -> test_ua.yaml, test_os.yaml, test_device.yaml.gz, LICENSE\n' \
		"$repo" "$commit" "$date"
} >"$out/VERSIONS"
echo "uap-core $commit ($date): $(grep -c user_agent_string "$out/test_ua.yaml") browser, $(grep -c user_agent_string "$out/test_os.yaml") OS, $(gzip -dc "$out/test_device.yaml.gz" | grep -c user_agent_string) device cases"
