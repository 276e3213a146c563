#!/usr/bin/env bash
# refresh.sh regenerates geo/data/ from the upstream hosting list at a
# pinned commit:
#
#   github.com/X4BNet/lists_vpn  input/datacenter/ASN.txt, README.md (its
#                                licence, MIT, is the README's "License"
#                                section: the repository has no LICENSE file)
#
# Usage:
#   geo/refresh.sh [--commit SHA] [--git DIR] [--data DIR]
#
# Without --commit the commit pinned in data/VERSIONS is used, so a plain
# run must reproduce the committed files byte for byte. A commit may also be
# a branch name (for example main) in download mode: it is resolved to a
# hash through the GitHub API and that hash is pinned.
# With --git the files are read from a local clone (bare or not, any clone
# that has the commit) instead of raw.githubusercontent.com. --data writes
# elsewhere than geo/data (the tests compare such a copy with geo/data).
#
# Needs bash, git (local mode) or curl and jq (download mode), awk, sort.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../internal/pinned/pinned.sh
. "$here/../internal/pinned/pinned.sh"
data=$here/data
versions=$here/data/VERSIONS

repo=X4BNet/lists_vpn
commit=
gitdir=

while [ $# -gt 0 ]; do
	case $1 in
	--commit) commit=$2; shift 2 ;;
	--git) gitdir=$2; shift 2 ;;
	--data) data=$2; shift 2 ;;
	-h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "refresh.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

pinned_init "$versions"
pinned_fetch lists_vpn "$repo" "$commit" "$gitdir"
tmp=$pinned_tmp
pinned_get lists_vpn input/datacenter/ASN.txt >"$tmp/ASN.txt"
pinned_get lists_vpn README.md >"$tmp/README.md"

# Each line is "AS<number>", then blanks and an optional "# comment".
if bad=$(grep -nvE $'^(AS[0-9]+([ \t].*)?|[ \t]*(#.*)?)\r?$' "$tmp/ASN.txt"); then
	echo "refresh.sh: input/datacenter/ASN.txt: unexpected lines:" >&2
	echo "$bad" | head -5 >&2
	exit 1
fi
# The licence: the fenced block of the README's "# License" section.
awk '/^# License/ { s = 1; next } s == 1 && /^```/ { s = 2; next } s == 2 && /^```/ { exit } s == 2 { print }' \
	"$tmp/README.md" >"$tmp/LICENSE"
pinned_licence "$tmp/LICENSE" "README.md's License section" 'MIT License' 'Permission is hereby granted'

mkdir -p "$data/lists_vpn"
# The AS numbers, sorted, once each.
grep -oE '^AS[0-9]+' "$tmp/ASN.txt" | cut -c3- | sort -n -u >"$data/lists_vpn/datacenter-asn.txt"
cp "$tmp/LICENSE" "$data/lists_vpn/LICENSE"
pinned_versions "$data/VERSIONS" 'The upstream list embedded in geo, written by refresh.sh: do not edit.' 'upstream file -> embedded file' \
	lists_vpn MIT 'input/datacenter/ASN.txt (AS numbers, sorted, once each) -> lists_vpn/datacenter-asn.txt; README.md (License section) -> lists_vpn/LICENSE'

echo "lists_vpn ${pinned_commit[lists_vpn]} (${pinned_date[lists_vpn]}): $(wc -l <"$data/lists_vpn/datacenter-asn.txt") hosting ASNs"
