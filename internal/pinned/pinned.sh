# shellcheck shell=bash
# pinned.sh: the steps the refresh scripts of the pinned lists share
# (botclass/refresh.sh, referrer/refresh.sh, geo/refresh.sh,
# uafamily/refresh-testdata.sh). Sourced, not run: each script keeps its
# options, its upstream repositories and what it extracts, and calls
#
#   pinned_init VERSIONS      the VERSIONS file whose pins (and dates) are
#                             read; makes $pinned_tmp, removed on exit
#   pinned_fetch NAME REPO COMMIT GITDIR
#                             list NAME is github.com/REPO at COMMIT (empty:
#                             the one VERSIONS pins), read from the local
#                             clone GITDIR (bare or not; empty: download):
#                             sets ${pinned_commit[NAME]} (a full hash) and
#                             ${pinned_date[NAME]} (YYYY-MM-DD, UTC)
#   pinned_get NAME PATH      prints the file PATH of list NAME at its commit
#   pinned_licence FILE WHAT TEXT...
#                             fails unless FILE (WHAT) still holds each
#                             TEXT (any case): the licence VERSIONS names
#   pinned_versions FILE TITLE COLUMN [NAME LICENCE FILES]...
#                             writes VERSIONS: the comment TITLE, the
#                             columns (the last one COLUMN), a line per list
#   pinned_die MESSAGE        prints "script: MESSAGE" and exits 1
#
# Download mode resolves a COMMIT that is not a full hash (a branch name)
# through the GitHub API, and takes a commit's date from VERSIONS when it
# pins that commit, or from the API: it needs curl and jq. Local mode needs
# git. The Go side, the reader of VERSIONS, is this directory's package.

declare -A pinned_repo pinned_git pinned_commit pinned_date
pinned_versions_file=
pinned_tmp=

pinned_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

pinned_init() {
	pinned_versions_file=$1
	pinned_tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand now: the path is fixed
	trap "rm -rf '$pinned_tmp'" EXIT
}

# pinned_gitc GITDIR ARGS... runs git on a bare or a working clone.
pinned_gitc() {
	local d=$1
	shift
	if [ -d "$d/.git" ]; then git -C "$d" "$@"; else git --git-dir="$d" "$@"; fi
}

# pinned_field NAME COMMIT FIELD prints field FIELD of list NAME's line in
# VERSIONS (of the line pinning COMMIT, if given), or nothing.
pinned_field() {
	awk -F'\t' -v n="$1" -v c="$2" -v f="$3" '$1 == n && (c == "" || $3 == c) { print $f }' \
		"$pinned_versions_file" 2>/dev/null || true
}

pinned_fetch() {
	local name=$1 repo=$2 commit=$3 gitdir=$4
	[ -n "$commit" ] || commit=$(pinned_field "$name" "" 3)
	if [ -z "$commit" ]; then
		echo "${0##*/}: no commit given for $name and none pinned in $pinned_versions_file" >&2
		exit 2
	fi
	local date=
	if [ -n "$gitdir" ]; then
		commit=$(pinned_gitc "$gitdir" rev-parse --verify "$commit^{commit}")
		date=$(TZ=UTC pinned_gitc "$gitdir" show -s --date=format-local:%Y-%m-%d --format=%cd "$commit")
	else
		if ! [[ $commit =~ ^[0-9a-f]{40}$ ]]; then
			commit=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er .sha)
		fi
		date=$(pinned_field "$name" "$commit" 4)
		[ -n "$date" ] || date=$(curl -fsSL "https://api.github.com/repos/$repo/commits/$commit" | jq -er '.commit.committer.date[:10]')
	fi
	pinned_repo[$name]=$repo
	pinned_git[$name]=$gitdir
	pinned_commit[$name]=$commit
	pinned_date[$name]=$date
}

pinned_get() {
	local name=$1 path=$2
	if [ -n "${pinned_git[$name]}" ]; then
		pinned_gitc "${pinned_git[$name]}" show "${pinned_commit[$name]}:$path"
	else
		curl -fsSL "https://raw.githubusercontent.com/${pinned_repo[$name]}/${pinned_commit[$name]}/$path"
	fi
}

pinned_licence() {
	local file=$1 what=$2 p
	shift 2
	for p; do
		grep -q -i -F -- "$p" "$file" || pinned_die "$what no longer says \"$p\": review its licence and fix VERSIONS"
	done
}

pinned_versions() {
	local file=$1 title=$2 column=$3
	shift 3
	{
		printf '# %s\n' "$title"
		printf '# name\trepository\tcommit\tcommit date (UTC)\tlicence\t%s\n' "$column"
		while [ $# -gt 0 ]; do
			printf '%s\thttps://github.com/%s\t%s\t%s\t%s\t%s\n' \
				"$1" "${pinned_repo[$1]}" "${pinned_commit[$1]}" "${pinned_date[$1]}" "$2" "$3"
			shift 3
		done
	} >"$file"
}
