#!/usr/bin/env bash
# refresh.sh regenerates referrer/data/ from the two upstream lists at a
# pinned commit:
#
#   github.com/matomo-org/searchengine-and-social-list
#       SearchEngines.yml, Socials.yml, AIAssistants.yml, LICENSE (CC0 1.0)
#   github.com/matomo-org/referrer-spam-list
#       spammers.txt, README.md's "License" section (public domain; its
#       composer.json says CC0-1.0)
#
# Usage:
#   referrer/refresh.sh [--se-commit SHA] [--spam-commit SHA]
#                       [--se-git DIR] [--spam-git DIR]
#
# Without --*-commit the commits pinned in data/VERSIONS are used, so a
# plain run must reproduce the committed files byte for byte. A commit may
# also be a branch name (for example master) in download mode: it is
# resolved to a hash through the GitHub API and that hash is pinned.
# With --se-git/--spam-git the files are read from a local clone (bare or
# not, any clone that has the commit) instead of raw.githubusercontent.com.
#
# Needs bash, git (local mode) or curl (download mode), jq and yq (the
# jq wrapper for YAML, Debian package yq).
# The lists we own (data/ai.txt, data/email.txt, data/search.txt,
# data/social.txt) are edited by hand and left alone.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/data

se_repo=matomo-org/searchengine-and-social-list
spam_repo=matomo-org/referrer-spam-list
se_commit=
spam_commit=
se_git=
spam_git=

while [ $# -gt 0 ]; do
	case $1 in
	--se-commit) se_commit=$2; shift 2 ;;
	--spam-commit) spam_commit=$2; shift 2 ;;
	--se-git) se_git=$2; shift 2 ;;
	--spam-git) spam_git=$2; shift 2 ;;
	-h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "refresh.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

# pinned NAME prints the commit data/VERSIONS pins for list NAME.
pinned() {
	awk -F'\t' -v n="$1" '$1 == n { print $3 }' "$data/VERSIONS" 2>/dev/null || true
}
[ -n "$se_commit" ] || se_commit=$(pinned searchengine-and-social-list)
[ -n "$spam_commit" ] || spam_commit=$(pinned referrer-spam-list)
if [ -z "$se_commit" ] || [ -z "$spam_commit" ]; then
	echo "refresh.sh: no commit given and none pinned in $data/VERSIONS" >&2
	exit 2
fi

# resolve REPO GITDIR COMMIT prints the full hash of COMMIT.
resolve() {
	if [ -n "$2" ]; then
		git --git-dir="$2" rev-parse --verify "$3^{commit}" 2>/dev/null ||
			git -C "$2" rev-parse --verify "$3^{commit}"
	elif [[ $3 =~ ^[0-9a-f]{40}$ ]]; then
		echo "$3"
	else
		curl -fsSL "https://api.github.com/repos/$1/commits/$3" | jq -er .sha
	fi
}

# gitc GITDIR ARGS... runs git on a bare or a working clone.
gitc() {
	local d=$1
	shift
	if [ -d "$d/.git" ]; then git -C "$d" "$@"; else git --git-dir="$d" "$@"; fi
}

# commitdate NAME REPO GITDIR COMMIT prints the committer date (YYYY-MM-DD,
# UTC): from the clone, or from VERSIONS if it pins this commit, or from the
# GitHub API.
commitdate() {
	local name=$1
	shift
	local d
	d=$(awk -F'\t' -v n="$name" -v c="$3" '$1 == n && $3 == c { print $4 }' "$data/VERSIONS" 2>/dev/null || true)
	if [ -n "$2" ]; then
		TZ=UTC gitc "$2" show -s --date=format-local:%Y-%m-%d --format=%cd "$3"
	elif [ -n "$d" ]; then
		echo "$d"
	else
		curl -fsSL "https://api.github.com/repos/$1/commits/$3" | jq -er '.commit.committer.date[:10]'
	fi
}

# get REPO GITDIR COMMIT PATH prints the file PATH at COMMIT.
get() {
	if [ -n "$2" ]; then
		gitc "$2" show "$3:$4"
	else
		curl -fsSL "https://raw.githubusercontent.com/$1/$3/$4"
	fi
}

se_commit=$(resolve "$se_repo" "$se_git" "$se_commit")
spam_commit=$(resolve "$spam_repo" "$spam_git" "$spam_commit")
se_date=$(commitdate searchengine-and-social-list "$se_repo" "$se_git" "$se_commit")
spam_date=$(commitdate referrer-spam-list "$spam_repo" "$spam_git" "$spam_commit")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in SearchEngines.yml Socials.yml AIAssistants.yml LICENSE; do
	get "$se_repo" "$se_git" "$se_commit" "$f" >"$tmp/$f"
done
get "$spam_repo" "$spam_git" "$spam_commit" spammers.txt >"$tmp/spammers.txt"
get "$spam_repo" "$spam_git" "$spam_commit" README.md >"$tmp/README.md"

# One host per line: none may be empty or hold a TAB or a line break.
ok='type == "string" and length > 0 and (test("[\t\r\n]") | not)'
yq -e "type == \"object\" and all(.[]; type == \"array\" and all(.[]; type == \"object\" and (.urls | type == \"array\" and length > 0 and all(.[]; $ok))))" \
	"$tmp/SearchEngines.yml" >/dev/null || { echo "refresh.sh: SearchEngines.yml: unexpected shape (want name: [{urls: [host...]}...])" >&2; exit 1; }
for f in Socials.yml AIAssistants.yml; do
	yq -e "type == \"object\" and all(.[]; type == \"array\" and all(.[]; $ok))" \
		"$tmp/$f" >/dev/null || { echo "refresh.sh: $f: unexpected shape (want name: [host...])" >&2; exit 1; }
done
if grep -q -v -E '^[^[:space:]]+$' "$tmp/spammers.txt"; then
	echo "refresh.sh: spammers.txt: a line is empty or holds a space" >&2
	exit 1
fi
# The licence section of the spam list's README: the text from "## License"
# to the next heading.
awk '/^## / { on = ($0 == "## License") } on' "$tmp/README.md" >"$tmp/spam.LICENSE"
grep -q -i 'public domain' "$tmp/spam.LICENSE" || { echo "refresh.sh: referrer-spam-list's README no longer says public domain: review it and fix VERSIONS" >&2; exit 1; }
grep -q 'CC0 1.0 Universal' "$tmp/LICENSE" || { echo "refresh.sh: searchengine-and-social-list's LICENSE is no longer CC0 1.0: review it and fix VERSIONS" >&2; exit 1; }

mkdir -p "$data/searchengine-and-social-list" "$data/referrer-spam-list"
# Every host of the three files, in upstream order, with its channel.
{
	yq -r '.[][] | .urls[] | . + "\tsearch"' "$tmp/SearchEngines.yml"
	yq -r '.[][] | . + "\tsocial"' "$tmp/Socials.yml"
	yq -r '.[][] | . + "\tai"' "$tmp/AIAssistants.yml"
} >"$data/searchengine-and-social-list/hosts.txt"
cp "$tmp/LICENSE" "$data/searchengine-and-social-list/LICENSE"
cp "$tmp/spammers.txt" "$data/referrer-spam-list/spammers.txt"
cp "$tmp/spam.LICENSE" "$data/referrer-spam-list/LICENSE"

{
	printf '# The upstream lists embedded in referrer, written by refresh.sh: do not edit.\n'
	printf '# name\trepository\tcommit\tcommit date (UTC)\tlicence\tupstream file -> embedded file\n'
	printf 'searchengine-and-social-list\thttps://github.com/%s\t%s\t%s\tCC0-1.0\tSearchEngines.yml (.[][].urls[]), Socials.yml (.[][]), AIAssistants.yml (.[][]) -> searchengine-and-social-list/hosts.txt (host, TAB, search|social|ai)\n' \
		"$se_repo" "$se_commit" "$se_date"
	printf 'referrer-spam-list\thttps://github.com/%s\t%s\t%s\tCC0-1.0\tspammers.txt -> referrer-spam-list/spammers.txt\n' \
		"$spam_repo" "$spam_commit" "$spam_date"
} >"$data/VERSIONS"

echo "searchengine-and-social-list $se_commit ($se_date): $(wc -l <"$data/searchengine-and-social-list/hosts.txt") hosts"
echo "referrer-spam-list $spam_commit ($spam_date): $(wc -l <"$data/referrer-spam-list/spammers.txt") hosts"
