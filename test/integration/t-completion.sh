#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-completion.sh — packaging/completion/boxctl, the bash completion `make install`
# places: loaded into bash (without bash-completion's helpers, as on a minimal
# system), its function completes commands, options, agents, and the names of the
# caller's running boxes (from `boxctl ps`) for log, stop and shell; and `boxctl --version`
# prints the version.
# Trusts: nothing; test code.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/lib-run.sh"

comp="$here/../../packaging/completion/boxctl"
# complete_words WORD...: what the completion offers for the command line WORDS
# (the last one being completed), one per line.
complete_words() {
	PATH="$RB:$PATH" bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_boxctl boxctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
# check runs its command in another bash: it needs these too.
export -f complete_words
export comp RB

check "the completion file is valid bash" bash -n "$comp"
check "commands: r → run" bash -c '[ "$(complete_words boxctl r)" = run ]'
out=$(complete_words boxctl "")
check "commands: every boxctl(1) command is offered" \
	bash -c "for c in init check policy run ps stop shell log mcp version help; do grep -qx \"\$c\" <<<'$out' || exit 1; done"
check "init --agent: the four agents" \
	bash -c '[ "$(complete_words boxctl init --agent "" | sort | tr "\n" " ")" = "claude-code codex gemini generic " ]'
check "run options: --de → --detach" bash -c '[ "$(complete_words boxctl run --de)" = --detach ]'
check "run options: --dr → --dry-run" bash -c '[ "$(complete_words boxctl run --dr)" = --dry-run ]'
check "run options: --ti → --timings" bash -c '[ "$(complete_words boxctl run --ti)" = --timings ]'
check "policy subcommands: su → suggest" bash -c '[ "$(complete_words boxctl policy su)" = suggest ]'
check "log --verdict: permit and deny" \
	bash -c '[ "$(complete_words boxctl log --verdict "" | sort | tr "\n" " ")" = "deny permit " ]'

# A running box of this test's own: its name is offered to log and stop.
name=cmp-$$-box
cat >"$W/cmp.ini" <<EOF
[box]
name = $name
[agent]
command = /bin/sleep 30
workspace = $W
EOF
"$RB/boxctl" run -q --detach -c "$W/cmp.ini" >/dev/null 2>"$W/run.err"
for _ in $(seq 100); do "$RB/boxctl" ps 2>/dev/null | grep -q "^$name	" && break; sleep 0.1; done
check "log: the running box's name is offered" \
	bash -c "complete_words boxctl log cmp-$$ | grep -qx '$name'"
check "stop: likewise" bash -c "complete_words boxctl stop cmp | grep -qx '$name'"
check "shell: likewise" bash -c "complete_words boxctl shell cmp | grep -qx '$name'"
check "shell: one box only (nothing after the name)" \
	bash -c "[ -z \"\$(complete_words boxctl shell '$name' cmp)\" ]"
"$RB/boxctl" stop "$name" >/dev/null 2>&1

ver=$("$RB/boxctl" --version)
check "boxctl --version prints the version ($ver)" bash -c "[[ '$ver' =~ ^boxctl\ [0-9]+\.[0-9]+\.[0-9]+ ]]"
check "boxctl -V and boxctl version say the same" \
	bash -c "[ \"\$('$RB/boxctl' -V)\" = '$ver' ] && [ \"\$('$RB/boxctl' version)\" = '$ver' ]"
tap_done
