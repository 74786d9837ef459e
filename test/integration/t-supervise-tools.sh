#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# t-supervise-tools.sh — real programs supervised end to end (docs/sandbox.md, Supervised
# programs), in real boxes, as the caller and as boxtest, with a policy that permits all but
# fs:read of `.env`: through box's shell, the python alias (no [tool.python3]: the host
# python3 supervised with the agent's grants) makes a venv in the project, pip installs into
# it a wheel built locally beforehand (pip wheel --no-index, no network), and the venv's
# python imports it; `python3 -m pytest` (Debian's python3-pytest) runs a small project's
# tests (one reads `.env` and expects the refusal); a supervised [tool.git] commits a file
# but `git add .env` is refused. The refusals are decision lines with source "supervisor".
# Trusts: nothing; test code.
. test/lib.sh
. test/integration/lib-run.sh
. test/integration/lib-shell.sh
. test/integration/lib-supervise.sh
set -u
trap run_cleanup EXIT
cd "$W"

require_shell_built
boxtest_or_skip "supervised tools as boxtest" || :
missing=
/usr/bin/python3 -c 'import setuptools, wheel, venv, pip' 2>/dev/null || missing="$missing python3-venv/pip/setuptools/wheel"
/usr/bin/python3 -c 'import pytest' 2>/dev/null || missing="$missing python3-pytest"
command -v git >/dev/null || missing="$missing git"
if [ -n "$missing" ]; then
	not_ok "the packages scripts/deps.sh installs:$missing"
	tap_done
	exit 1
fi

for u in $(shell_users); do
	D=$(user_dir "$u")
	P=$D/proj
	name=e2e-suptools-$u-$$
	mkdir -p "$D/steps" "$D/pkg/boxdemo" "$D/wheels" "$P/tests"
	echo SECRET-TOKEN >"$P/.env"
	echo proj-content >"$P/p.txt"
	mkdir -p "$P/repo"
	echo SECRET-TOKEN >"$P/repo/.env"
	echo repo-content >"$P/repo/r.txt"
	cat >"$D/pol.cedar" <<'EOF'
@id("all")
permit (principal, action, resource);

@id("no_env")
forbid (principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*.env" };
EOF
	# a wheel built here, from a local project, without the network
	printf 'def hello():\n    return "boxdemo-hello"\n' >"$D/pkg/boxdemo/__init__.py"
	printf 'from setuptools import setup\nsetup(name="boxdemo", version="0.1", packages=["boxdemo"])\n' \
		>"$D/pkg/setup.py"
	chown -R "$u:" "$D"
	# (pip's own stderr: setuptools' distutils warning)
	if ! as_user "$u" "cd '$D/pkg' && /usr/bin/python3 -m pip wheel -q --no-index --no-deps --no-build-isolation -w '$D/wheels' ." \
		>"$D/wheel.log" 2>&1; then
		sed 's/^/#   /' "$D/wheel.log" | tail -5
	fi
	whl=$(ls "$D/wheels"/boxdemo-0.1-*.whl 2>/dev/null | head -1)
	check "$u: the wheel is built locally (pip wheel --no-index)" test -n "$whl"
	cat >"$P/tests/test_env.py" <<'EOF'
import pytest


def test_reads_project():
    assert open("p.txt").read().strip() == "proj-content"


def test_env_refused():
    with pytest.raises(PermissionError):
        open(".env").read()
EOF
	cat >"$D/steps/t.py" <<EOF
[
 ("venv", ["python3", "-m", "venv", "--without-pip", "--system-site-packages", "venv"]),
 ("pip", ["bash", "-c", "venv/bin/python -m pip install -q --no-index --no-deps --no-cache-dir $whl"]),
 ("import", ["bash", "-c", "venv/bin/python -c 'import boxdemo, sys; print(boxdemo.hello(), sys.prefix)'"]),
 ("pytest", ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]),
 ("git_init", ["bash", "-c", "cd repo && git init -q && git add r.txt && git -c user.name=t -c user.email=t@e commit -qm one && git log --format=%s"]),
 ("git_env", ["bash", "-c", "cd repo && git add .env"]),
]
EOF
	cat >"$D/box.ini" <<EOF
[box]
name = $name
state_dir = $D/state/$name
policy = pol.cedar
timeout = 300s

[agent]
command = $W/agent.py $D/steps/t.py
workspace = $P

[agent.env]
$(agent_env)

[agent.filesystem]
write = $P
read = $D/steps
read = $D/wheels

[tool.git]
command = /usr/bin/git
supervise = fs
[tool.git.filesystem]
write = $P
EOF
	chown -R "$u:" "$D"
	chmod 644 "$D/box.ini" "$D/pol.cedar"
	out=$D/t.out err=$D/t.err
	SHELL_BOX_TIMEOUT=400 box_run "$u" "$out" "$err" -c "$D/box.ini"
	rc=$?
	check "$u: the box runs to its end (rc $rc)" test "$rc" = 0
	if [ "$rc" != 0 ]; then grep -v '^box:   ' "$err" | head -20 | sed 's/^/#   /'; fi
	check_step "$u: python3 -m venv in the project (supervised)" "$out" venv rc_is "$out" venv 0
	check_step "$u: pip installs the local wheel into the venv (supervised)" "$out" pip rc_is "$out" pip 0
	check "$u: … the package is in the venv's site-packages" \
		bash -c "ls -d '$P'/venv/lib/python3*/site-packages/boxdemo >/dev/null"
	check_step "$u: the venv's python imports it (its prefix is the venv)" "$out" import \
		out_is "$out" import "boxdemo-hello $P/venv"
	check_step "$u: python3 -m pytest runs the project's tests (2 passed, .env refused)" "$out" pytest \
		bash -c "[ '$(step_rc "$out" pytest)' = 0 ] && grep -q '2 passed' <<<\"\$1\"" _ "$(step_out "$out" pytest)"
	check_step "$u: a supervised [tool.git] commits" "$out" git_init out_is "$out" git_init one
	check_step "$u: … but git add .env is refused" "$out" git_env \
		bash -c "[ '$(step_rc "$out" git_env)' != 0 ] && grep -qi 'permission denied' <<<\"\$1\"" _ "$(step_err "$out" git_env)"
	check "$u: … and .env is not in git's index" \
		bash -c "! git -C '$P/repo' ls-files --stage 2>/dev/null | grep -q '\.env'"
	check "$u: the secret never reached the output" bash -c "! grep -q SECRET '$out'"

	forget_default_state "$u" "$name"
	dec=$D/state/$name/decisions.jsonl
	check "$u: decisions.jsonl: pip's write into the venv (source supervisor)" \
		sup_decision "$dec" fs:write permit /boxdemo/__init__.py write_content
	check "$u: … pytest's refused .env" sup_decision "$dec" fs:read deny /proj/.env read_content
	check "$u: … git's refused .env" sup_decision "$dec" fs:read deny /proj/repo/.env
	check "$u: nothing of the box is left (box-shell)" no_shell_left
done
tap_done
