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
# shellcheck source-path=SCRIPTDIR source=../internal/pinned/pinned.sh
. "$here/../internal/pinned/pinned.sh"
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

pinned_init "$out/VERSIONS"
pinned_fetch uap-core "$repo" "$commit" "$gitdir"
tmp=$pinned_tmp
for f in test_ua.yaml test_os.yaml test_device.yaml; do
	pinned_get uap-core "tests/$f" >"$tmp/$f"
	grep -q '^test_cases:' "$tmp/$f" || pinned_die "tests/$f: no test_cases"
done
pinned_get uap-core LICENSE >"$tmp/LICENSE"
pinned_licence "$tmp/LICENSE" LICENSE 'Apache License, Version 2.0'

mkdir -p "$out"
cp "$tmp/test_ua.yaml" "$tmp/test_os.yaml" "$tmp/LICENSE" "$out/"
gzip -n -9 -c "$tmp/test_device.yaml" >"$out/test_device.yaml.gz"
pinned_versions "$out/VERSIONS" 'The uap-core test agents in testdata/uap-core, written by ../../refresh-testdata.sh: do not edit.' 'upstream files -> files here' \
	uap-core Apache-2.0 'tests/test_ua.yaml, tests/test_os.yaml, tests/test_device.yaml (gzip -n -9), LICENSE -> test_ua.yaml, test_os.yaml, test_device.yaml.gz, LICENSE'
echo "uap-core ${pinned_commit[uap-core]} (${pinned_date[uap-core]}): $(grep -c user_agent_string "$out/test_ua.yaml") browser, $(grep -c user_agent_string "$out/test_os.yaml") OS, $(gzip -dc "$out/test_device.yaml.gz" | grep -c user_agent_string) device cases"
