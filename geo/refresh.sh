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

# pinned prints the commit data/VERSIONS pins for lists_vpn.
pinned() {
	awk -F'\t' '$1 == "lists_vpn" { print $3 }' "$versions" 2>/dev/null || true
}
[ -n "$commit" ] || commit=$(pinned)
if [ -z "$commit" ]; then
	echo "refresh.sh: no commit given and none pinned in $versions" >&2
	exit 2
fi

if [ -n "$gitdir" ]; then
	commit=$(git -C "$gitdir" rev-parse --verify "$commit^{commit}")
	date=$(TZ=UTC git -C "$gitdir" show -s --date=format-local:%Y-%m-%d --format=%cd "$commit")
else
	if ! [[ $commit =~ ^[0-9a-f]{40}$ ]]; then
		commit=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er .sha)
	fi
	date=$(awk -F'\t' -v c="$commit" '$1 == "lists_vpn" && $3 == c { print $4 }' "$versions" 2>/dev/null || true)
	[ -n "$date" ] || date=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er '.commit.committer.date[:10]')
fi

# get PATH prints the file PATH at the commit.
get() {
	if [ -n "$gitdir" ]; then
		git -C "$gitdir" show "$commit:$1"
	else
		curl -fsSL "https://raw.githubusercontent.com/$repo/$commit/$1"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
get input/datacenter/ASN.txt >"$tmp/ASN.txt"
get README.md >"$tmp/README.md"

# Each line is "AS<number>", then blanks and an optional "# comment".
if bad=$(grep -nvE $'^(AS[0-9]+([ \t].*)?|[ \t]*(#.*)?)\r?$' "$tmp/ASN.txt"); then
	echo "refresh.sh: input/datacenter/ASN.txt: unexpected lines:" >&2
	echo "$bad" | head -5 >&2
	exit 1
fi
# The licence: the fenced block of the README's "# License" section.
awk '/^# License/ { s = 1; next } s == 1 && /^```/ { s = 2; next } s == 2 && /^```/ { exit } s == 2 { print }' \
	"$tmp/README.md" >"$tmp/LICENSE"
grep -q 'MIT License' "$tmp/LICENSE" && grep -q 'Permission is hereby granted' "$tmp/LICENSE" || {
	echo "refresh.sh: README.md's License section is no longer the MIT licence: review it and fix VERSIONS" >&2
	exit 1
}

mkdir -p "$data/lists_vpn"
# The AS numbers, sorted, once each.
grep -oE '^AS[0-9]+' "$tmp/ASN.txt" | cut -c3- | sort -n -u >"$data/lists_vpn/datacenter-asn.txt"
cp "$tmp/LICENSE" "$data/lists_vpn/LICENSE"
{
	printf '# The upstream list embedded in geo, written by refresh.sh: do not edit.\n'
	printf '# name\trepository\tcommit\tcommit date (UTC)\tlicence\tupstream file -> embedded file\n'
	printf 'lists_vpn\thttps://github.com/%s\t%s\t%s\tMIT\tinput/datacenter/ASN.txt (AS numbers, sorted, once each) -> lists_vpn/datacenter-asn.txt; README.md (License section) -> lists_vpn/LICENSE\n' \
		"$repo" "$commit" "$date"
} >"$data/VERSIONS"

echo "lists_vpn $commit ($date): $(wc -l <"$data/lists_vpn/datacenter-asn.txt") hosting ASNs"
