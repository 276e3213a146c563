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
# shellcheck source-path=SCRIPTDIR source=../internal/pinned/pinned.sh
. "$here/../internal/pinned/pinned.sh"
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

pinned_init "$data/VERSIONS"
pinned_fetch crawler-user-agents "$cua_repo" "$cua_commit" "$cua_git"
pinned_fetch ai.robots.txt "$ai_repo" "$ai_commit" "$ai_git"
tmp=$pinned_tmp

pinned_get crawler-user-agents crawler-user-agents.json >"$tmp/cua.json"
pinned_get crawler-user-agents LICENSE >"$tmp/cua.LICENSE"
pinned_get ai.robots.txt robots.json >"$tmp/robots.json"
pinned_get ai.robots.txt LICENSE >"$tmp/ai.LICENSE"
# The licence column of VERSIONS says MIT: check it is still so.
pinned_licence "$tmp/cua.LICENSE" "crawler-user-agents' LICENSE" 'MIT License'
pinned_licence "$tmp/ai.LICENSE" "ai.robots.txt's LICENSE" 'MIT License'

# One pattern or name per line: none may hold a line break or be empty.
jq -e 'type == "array" and all(.[]; (.pattern | type == "string" and length > 0 and (test("[\t\r\n]") | not)) and all(.instances[]; test("[\r\n]") | not))' \
	"$tmp/cua.json" >/dev/null || pinned_die "crawler-user-agents.json: unexpected shape (a pattern or instance is empty or spans lines)"
jq -e 'type == "object" and all(keys_unsorted[]; length > 0 and (test("[\t\r\n]") | not))' \
	"$tmp/robots.json" >/dev/null || pinned_die "robots.json: unexpected shape (an agent name is empty or spans lines)"

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

pinned_versions "$data/VERSIONS" 'The upstream lists embedded in botclass, written by refresh.sh: do not edit.' 'upstream file -> embedded file' \
	crawler-user-agents MIT 'crawler-user-agents.json (.[].pattern; .[].pattern, .[].tags) -> crawler-user-agents/patterns.txt; tags.tsv' \
	ai.robots.txt MIT 'robots.json (keys; keys, .operator, .function) -> ai.robots.txt/agents.txt; info.tsv'

echo "crawler-user-agents ${pinned_commit[crawler-user-agents]} (${pinned_date[crawler-user-agents]}): $(wc -l <"$data/crawler-user-agents/patterns.txt") patterns"
echo "ai.robots.txt ${pinned_commit[ai.robots.txt]} (${pinned_date[ai.robots.txt]}): $(wc -l <"$data/ai.robots.txt/agents.txt") agents"
