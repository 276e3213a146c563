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
# shellcheck source-path=SCRIPTDIR source=../internal/pinned/pinned.sh
. "$here/../internal/pinned/pinned.sh"
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

pinned_init "$data/VERSIONS"
pinned_fetch searchengine-and-social-list "$se_repo" "$se_commit" "$se_git"
pinned_fetch referrer-spam-list "$spam_repo" "$spam_commit" "$spam_git"
tmp=$pinned_tmp

for f in SearchEngines.yml Socials.yml AIAssistants.yml LICENSE; do
	pinned_get searchengine-and-social-list "$f" >"$tmp/$f"
done
pinned_get referrer-spam-list spammers.txt >"$tmp/spammers.txt"
pinned_get referrer-spam-list README.md >"$tmp/README.md"

# One host per line: none may be empty or hold a TAB or a line break.
ok='type == "string" and length > 0 and (test("[\t\r\n]") | not)'
yq -e "type == \"object\" and all(.[]; type == \"array\" and all(.[]; type == \"object\" and (.urls | type == \"array\" and length > 0 and all(.[]; $ok))))" \
	"$tmp/SearchEngines.yml" >/dev/null || pinned_die "SearchEngines.yml: unexpected shape (want name: [{urls: [host...]}...])"
for f in Socials.yml AIAssistants.yml; do
	yq -e "type == \"object\" and all(.[]; type == \"array\" and all(.[]; $ok))" \
		"$tmp/$f" >/dev/null || pinned_die "$f: unexpected shape (want name: [host...])"
done
if grep -q -v -E '^[^[:space:]]+$' "$tmp/spammers.txt"; then
	pinned_die "spammers.txt: a line is empty or holds a space"
fi
# The licence section of the spam list's README: the text from "## License"
# to the next heading.
awk '/^## / { on = ($0 == "## License") } on' "$tmp/README.md" >"$tmp/spam.LICENSE"
pinned_licence "$tmp/spam.LICENSE" "referrer-spam-list's README" 'public domain'
pinned_licence "$tmp/LICENSE" "searchengine-and-social-list's LICENSE" 'CC0 1.0 Universal'

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

pinned_versions "$data/VERSIONS" 'The upstream lists embedded in referrer, written by refresh.sh: do not edit.' 'upstream file -> embedded file' \
	searchengine-and-social-list CC0-1.0 'SearchEngines.yml (.[][].urls[]), Socials.yml (.[][]), AIAssistants.yml (.[][]) -> searchengine-and-social-list/hosts.txt (host, TAB, search|social|ai)' \
	referrer-spam-list CC0-1.0 'spammers.txt -> referrer-spam-list/spammers.txt'

echo "searchengine-and-social-list ${pinned_commit[searchengine-and-social-list]} (${pinned_date[searchengine-and-social-list]}): $(wc -l <"$data/searchengine-and-social-list/hosts.txt") hosts"
echo "referrer-spam-list ${pinned_commit[referrer-spam-list]} (${pinned_date[referrer-spam-list]}): $(wc -l <"$data/referrer-spam-list/spammers.txt") hosts"
