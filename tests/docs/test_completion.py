"""The bash and zsh completions (generated from man/*.1.md) complete subcommands, their options and their
values (files, interfaces, fixed words) the way `nicmatrix --help` describes them. bash's completion
function is driven directly (COMP_WORDS/COMP_CWORD, then COMPREPLY); zsh's through its completion system
in a pseudo-terminal (tests/docs/zsh_complete.zsh)."""
import os
import shutil
import subprocess

import pytest

from conftest import MAN_DIR, help_options, help_subcommands, pages, render, run

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = help_subcommands()


@pytest.fixture(scope="module")
def completions(tmp_path_factory):
    d = tmp_path_factory.mktemp("completion")
    parsed = list(pages().values())
    (d / "nicmatrix").write_text(render.bash(parsed))
    (d / "_nicmatrix").write_text(render.zsh(parsed))
    return d


def bash_complete(completions, line, cwd=None):
    """COMPREPLY for the command line `line` (the cursor at its end) from the bash completion file, in a
    bash without any startup file."""
    words = line.split(" ")
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
              '_nicmatrix; printf "%s\\n" "${COMPREPLY[@]}"')
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", str(completions / "nicmatrix"), *words],
                         capture_output=True, text=True, timeout=30, check=True, cwd=cwd)
    assert res.stderr == ""
    return sorted(w for w in res.stdout.split("\n") if w)


def test_bash_completes_subcommands(completions):
    assert bash_complete(completions, "nicmatrix sw") == ["sweep"]
    assert bash_complete(completions, "nicmatrix ") == sorted(TOP)
    assert bash_complete(completions, "nicmatrix lab ") == sorted(help_subcommands("lab"))
    assert bash_complete(completions, "nicmatrix lab u") == ["up"]


@pytest.mark.parametrize("words", [(c,) for c in TOP if not help_subcommands(c)] +
                         [(c, s) for c in TOP for s in help_subcommands(c)], ids=" ".join)
def test_bash_completes_every_option_help_shows(completions, words):
    offered = bash_complete(completions, "nicmatrix " + " ".join(words) + " -")
    assert set(offered) == set(help_options(*words)) | {"--help"}


def test_bash_completes_values(completions, tmp_path):
    (tmp_path / "conf-a.json").write_text("{}")
    (tmp_path / "other").write_text("")
    assert bash_complete(completions, "nicmatrix sweep con", cwd=tmp_path) == ["conf-a.json"]
    assert bash_complete(completions, "nicmatrix sweep x.json -o con", cwd=tmp_path) == ["conf-a.json"]
    assert bash_complete(completions, "nicmatrix report x.json --format ") == ["csv", "html", "json", "md", "table"]
    assert bash_complete(completions, "nicmatrix sweep x.json --topology b") == ["bridge"]
    # An option's value is not taken for a subcommand or a positional argument: after `--name up` the
    # path is still `lab up`.
    assert "--topology" in bash_complete(completions, "nicmatrix lab up --name up --t")
    # Interfaces: what `ip -o link` lists in this namespace.
    links = {line.split(": ")[1].split("@")[0] for line in run("ip", "-o", "link").stdout.splitlines()}
    assert set(bash_complete(completions, "nicmatrix show ")) == links
    assert set(bash_complete(completions, "nicmatrix run -c h --iface ")) == links
    # A value with no completion (a number) offers nothing rather than options or files.
    assert bash_complete(completions, "nicmatrix set lo --mtu ") == []


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed (scripts/install-deps.sh package-check)")
def test_zsh_completes_subcommands_options_and_values(completions, tmp_path):
    def zsh_complete(line):
        res = run("zsh", "-f", os.path.join(HERE, "zsh_complete.zsh"), str(completions), line, timeout=60, cwd=tmp_path)
        return sorted(set(res.stdout.split()))
    assert zsh_complete("nicmatrix sw") == ["sweep"]
    assert zsh_complete("nicmatrix lab ") == sorted(help_subcommands("lab"))
    assert set(zsh_complete("nicmatrix sweep --")) >= {o for o in help_options("sweep") if o.startswith("--")}
    assert zsh_complete("nicmatrix report x.json --format ") == ["csv", "html", "json", "md", "table"]
    (tmp_path / "conf-a.json").write_text("{}")
    assert "conf-a.json" in zsh_complete("nicmatrix sweep con")
