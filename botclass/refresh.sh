#!/usr/bin/env bash
# refresh.sh regenerates botclass/data/ (and the upstream examples in
# botclass/testdata/) from the two upstream lists at a pinned commit:
#
#   github.com/monperrus/crawler-user-agents  crawler-user-agents.json, LICENSE
#   github.com/ai-robots-txt/ai.robots.txt    robots.json, LICENSE
#
# Usage:
#   botclass/refresh.sh [--cua-commit SHA] [--ai-commit SHA]
#                       [--cua-git DIR] [--ai-git DIR]
#
# Without --*-commit the commits pinned in data/VERSIONS are used, so a
# plain run must reproduce the committed files byte for byte. A commit may
# also be a branch name (for example master or main) in download mode: it is
# resolved to a hash through the GitHub API and that hash is pinned.
# With --cua-git/--ai-git the files are read from a local clone (bare or
# not, any clone that has the commit) instead of raw.githubusercontent.com.
#
# Besides the names, it extracts what the lists say of each crawler (for
# Name): ai.robots.txt's "operator" (the text of a markdown link, or the
# text before its first comma, parenthesis or " that/to/who/which/used";
# empty when "Unclear at this time." or a bare URL) and "function", and
# crawler-user-agents' "tags", tabs and line breaks folded to spaces.
#
# Needs bash, git (local mode) or curl (download mode), and jq.
# The lists we own (data/search.txt, data/tool.txt, data/headless.txt) are
# edited by hand and left alone.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/data
testdata=$here/testdata

cua_repo=monperrus/crawler-user-agents
ai_repo=ai-robots-txt/ai.robots.txt
cua_commit=
ai_commit=
cua_git=
ai_git=

while [ $# -gt 0 ]; do
	case $1 in
	--cua-commit) cua_commit=$2; shift 2 ;;
	--ai-commit) ai_commit=$2; shift 2 ;;
	--cua-git) cua_git=$2; shift 2 ;;
	--ai-git) ai_git=$2; shift 2 ;;
	-h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}"; exit 0 ;;
	*) echo "refresh.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

# pinned NAME prints the commit data/VERSIONS pins for list NAME.
pinned() {
	awk -F'\t' -v n="$1" '$1 == n { print $3 }' "$data/VERSIONS" 2>/dev/null || true
}
[ -n "$cua_commit" ] || cua_commit=$(pinned crawler-user-agents)
[ -n "$ai_commit" ] || ai_commit=$(pinned ai.robots.txt)
if [ -z "$cua_commit" ] || [ -z "$ai_commit" ]; then
	echo "refresh.sh: no commit given and none pinned in $data/VERSIONS" >&2
	exit 2
fi

# resolve REPO GITDIR COMMIT prints the full hash of COMMIT.
resolve() {
	if [ -n "$2" ]; then
		git -C "$2" rev-parse --verify "$3^{commit}"
	elif [[ $3 =~ ^[0-9a-f]{40}$ ]]; then
		echo "$3"
	else
		curl -fsSL "https://api.github.com/repos/$1/commits/$3" | jq -er .sha
	fi
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
		TZ=UTC git -C "$2" show -s --date=format-local:%Y-%m-%d --format=%cd "$3"
	elif [ -n "$d" ]; then
		echo "$d"
	else
		curl -fsSL "https://api.github.com/repos/$1/commits/$3" | jq -er '.commit.committer.date[:10]'
	fi
}

# get REPO GITDIR COMMIT PATH prints the file PATH at COMMIT.
get() {
	if [ -n "$2" ]; then
		git -C "$2" show "$3:$4"
	else
		curl -fsSL "https://raw.githubusercontent.com/$1/$3/$4"
	fi
}

cua_commit=$(resolve "$cua_repo" "$cua_git" "$cua_commit")
ai_commit=$(resolve "$ai_repo" "$ai_git" "$ai_commit")
cua_date=$(commitdate crawler-user-agents "$cua_repo" "$cua_git" "$cua_commit")
ai_date=$(commitdate ai.robots.txt "$ai_repo" "$ai_git" "$ai_commit")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

get "$cua_repo" "$cua_git" "$cua_commit" crawler-user-agents.json >"$tmp/cua.json"
get "$cua_repo" "$cua_git" "$cua_commit" LICENSE >"$tmp/cua.LICENSE"
get "$ai_repo" "$ai_git" "$ai_commit" robots.json >"$tmp/robots.json"
get "$ai_repo" "$ai_git" "$ai_commit" LICENSE >"$tmp/ai.LICENSE"

# One pattern or name per line: none may hold a line break or be empty.
jq -e 'type == "array" and all(.[]; (.pattern | type == "string" and length > 0 and (test("[\t\r\n]") | not)) and all(.instances[]; test("[\r\n]") | not))' \
	"$tmp/cua.json" >/dev/null || { echo "refresh.sh: crawler-user-agents.json: unexpected shape (a pattern or instance is empty or spans lines)" >&2; exit 1; }
jq -e 'type == "object" and all(keys_unsorted[]; length > 0 and (test("[\t\r\n]") | not))' \
	"$tmp/robots.json" >/dev/null || { echo "refresh.sh: robots.json: unexpected shape (an agent name is empty or spans lines)" >&2; exit 1; }

mkdir -p "$data/crawler-user-agents" "$data/ai.robots.txt" "$testdata"
# crawler-user-agents.json: the "pattern" of each entry, in upstream order.
jq -r '.[].pattern' "$tmp/cua.json" >"$data/crawler-user-agents/patterns.txt"
cp "$tmp/cua.LICENSE" "$data/crawler-user-agents/LICENSE"
# robots.json: the agent names (the object's keys), in upstream order.
jq -r 'keys_unsorted[]' "$tmp/robots.json" >"$data/ai.robots.txt/agents.txt"
cp "$tmp/ai.LICENSE" "$data/ai.robots.txt/LICENSE"
# What the lists say of each crawler, one line per name or pattern, in the
# same order: ai.robots.txt "name<TAB>operator<TAB>function",
# crawler-user-agents "pattern<TAB>tags" (comma-separated).
jq -r 'to_entries[] | [
	.key,
	(.value.operator // "" | gsub("[\t\r\n]+"; " ") |
		if test("^(Unclear at this time\\.?|Unknown|No information provided\\.?)$"; "i") or test("^https?://") then ""
		elif test("^\\[[^\\]]+\\]\\(") then capture("^\\[(?<t>[^\\]]+)\\]").t
		else sub(" \\(.*$"; "") | sub(",.*$"; "") | sub(" (that|to|who|which|used) .*$"; "") end),
	(.value.function // "" | gsub("[\t\r\n]+"; " "))
	] | join("\t")' "$tmp/robots.json" >"$data/ai.robots.txt/info.tsv"
jq -r '.[] | [.pattern, (.tags // [] | join(","))] | join("\t")' "$tmp/cua.json" >"$data/crawler-user-agents/tags.tsv"
# The upstream example user agents, for the tests (not embedded).
jq -r '.[].instances[]' "$tmp/cua.json" >"$testdata/crawler-user-agents-instances.txt"

{
	printf '# The upstream lists embedded in botclass, written by refresh.sh: do not edit.\n'
	printf '# name\trepository\tcommit\tcommit date (UTC)\tlicence\tupstream file -> embedded file\n'
	printf 'crawler-user-agents\thttps://github.com/%s\t%s\t%s\tMIT\tcrawler-user-agents.json (.[].pattern; .[].pattern, .[].tags) -> crawler-user-agents/patterns.txt; tags.tsv\n' \
		"$cua_repo" "$cua_commit" "$cua_date"
	printf 'ai.robots.txt\thttps://github.com/%s\t%s\t%s\tMIT\trobots.json (keys; keys, .operator, .function) -> ai.robots.txt/agents.txt; info.tsv\n' \
		"$ai_repo" "$ai_commit" "$ai_date"
} >"$data/VERSIONS"

# The licence column above says MIT: check it is still so.
for l in "$data/crawler-user-agents/LICENSE" "$data/ai.robots.txt/LICENSE"; do
	grep -q 'MIT License' "$l" || { echo "refresh.sh: $l is no longer the MIT licence: review it and fix VERSIONS" >&2; exit 1; }
done

echo "crawler-user-agents $cua_commit ($cua_date): $(wc -l <"$data/crawler-user-agents/patterns.txt") patterns"
echo "ai.robots.txt $ai_commit ($ai_date): $(wc -l <"$data/ai.robots.txt/agents.txt") agents"
