"""The man pages (man/*.1.md) are in step with `nicmatrix --help`: a page for every subcommand, every option
`nicmatrix CMD --help` shows on that page (and none it no longer has), a value where the option takes one;
and every page renders through groff without a warning, as man-db shows it.

A flag added to the CLI fails here until its page has the line "* `--flag` *VALUE*: what it does" under
OPTIONS (man/render.py describes the format)."""
import os
import subprocess

import pytest

from conftest import MAN_DIR, help_options, help_subcommands, pages, parse_page, render, run

TOP = help_subcommands()
# Every command path: ("sweep",), ("lab", "up"), ...
COMMANDS = [(c,) for c in TOP if not help_subcommands(c)] + [(c, s) for c in TOP for s in help_subcommands(c)]


def test_every_subcommand_has_a_page_and_an_entry_in_nicmatrix_1(man_pages):
    assert TOP, "nicmatrix --help lists no subcommands"
    assert sorted(c for c in man_pages if c) == sorted(TOP), "man/nicmatrix-CMD.1.md for each subcommand of --help"
    assert [c for c, _ in man_pages[""].commands] == TOP, "nicmatrix.1.md: ## COMMANDS lists --help's subcommands in its order"


def test_top_level_options(man_pages):
    documented = {n for o in man_pages[""].options.get("", []) for n in o.names} - {"-h", "--help"}
    assert documented == set(help_options())


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_page_options_match_help(words, man_pages):
    page = man_pages[words[0]]
    group = words[1] if len(words) > 1 else ""
    documented = {n: bool(o.placeholder) for o in page.options.get(group, []) for n in o.names}
    shown = help_options(*words)
    where = f"man/nicmatrix-{words[0]}.1.md" + (f" (### {group})" if group else "")
    missing = sorted(set(shown) - set(documented))
    stale = sorted(set(documented) - set(shown))
    assert not missing, f"{where}: options `nicmatrix {' '.join(words)} --help` shows but the page lacks: {missing}"
    assert not stale, f"{where}: options the page documents but `nicmatrix {' '.join(words)} --help` does not show: {stale}"
    wrong = sorted(n for n in shown if shown[n] != documented[n])
    assert not wrong, f"{where}: these take a value in --help but not on the page, or the other way round: {wrong}"


@pytest.mark.parametrize("words", [(c,) for c in TOP], ids=" ".join)
def test_subcommand_groups_match_help(words, man_pages):
    page = man_pages[words[0]]
    groups = sorted(g for g in set(page.options) | set(page.arguments) if g)
    assert groups == sorted(help_subcommands(*words))


@pytest.mark.parametrize("source", sorted(f for f in os.listdir(MAN_DIR) if f.endswith(".1.md")))
def test_page_renders_without_groff_warnings(source, tmp_path):
    page = parse_page(os.path.join(MAN_DIR, source))
    out = tmp_path / source[:-3]
    out.write_text(render.roff(page, "test"))
    # groff with every warning on, as lintian checks man pages; the text as man-db renders it.
    res = run("groff", "-man", "-ww", "-z", "-Tutf8", str(out))
    assert res.stderr == ""
    text = subprocess.run(["man", "-l", "-P", "cat", str(out)], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8"), check=True).stdout
    assert f"{page.name} - " in text.split("NAME", 1)[1].split("\n\n")[0].replace("\n", " ").replace("  ", " ")
    for o in page.options.get("", []):
        for n in o.names:
            assert n in text, f"{n} not in the rendered {source}"


def test_the_roff_escapes_minus_and_leading_dots(tmp_path):
    src = tmp_path / "nicmatrix-x.1.md"
    src.write_text("# nicmatrix-x(1) -- a test\n\n## DESCRIPTION\n\n.starts with a dot, `--lab` and a\\backslash\n")
    roff = render.roff(render.parse(str(src)))
    assert "\n\\&.starts" in roff
    assert "\\fB\\-\\-lab\\fR" in roff
    assert "a\\ebackslash" in roff


def test_a_malformed_option_line_is_an_error_naming_the_line(tmp_path):
    src = tmp_path / "nicmatrix-x.1.md"
    src.write_text("# nicmatrix-x(1) -- a test\n\n## OPTIONS\n\n* lab: no backticks\n")
    with pytest.raises(ValueError, match=r"nicmatrix-x.1.md:5:"):
        render.parse(str(src))


def test_each_page_names_the_others_that_exist(man_pages):
    """SEE ALSO and the text refer to pages as `name`(1); each must exist (or be another package's)."""
    import re
    ours = {p.name for p in man_pages.values()}
    for page in man_pages.values():
        text = open(os.path.join(MAN_DIR, page.name + ".1.md")).read()
        for ref in re.findall(r"`(nicmatrix[a-z-]*)`\(1\)", text):
            assert ref in ours, f"{page.name}: refers to {ref}(1), which is not a page"


FLAGS = {"run": [{"key": "streams", "flags": ["-P", "--parallel"], "value": "N", "help": "Streams"},
                 {"key": "new_field", "flags": ["--new-field"], "value": "", "help": "A field just added"}]}


def test_a_field_item_takes_its_flags_from_the_table_and_a_flag_without_one_gets_its_help(tmp_path):
    src = tmp_path / "nicmatrix-run.1.md"
    src.write_text("# nicmatrix-run(1) -- a test\n\n## OPTIONS\n\n* {streams}: Streams, with more to say.\n"
                   "* `--json`: JSON.\n\n## SEE ALSO\n\n`nicmatrix`(1)\n")
    page = render.parse(str(src), FLAGS)
    assert [(o.names, o.placeholder, o.text) for o in page.options[""]] == [
        (["-P", "--parallel"], "N", "Streams, with more to say."), (["--json"], "", "JSON."), (["--new-field"], "", "A field just added")]
    roff = render.roff(page)
    assert roff.index("\\fB\\-\\-json\\fR") < roff.index("\\fB\\-\\-new\\-field\\fR") < roff.index('.SH "SEE ALSO"')


def test_a_field_item_of_no_table_flag_is_an_error_naming_the_line(tmp_path):
    src = tmp_path / "nicmatrix-run.1.md"
    src.write_text("# nicmatrix-run(1) -- a test\n\n## OPTIONS\n\n* {no_such_field}: text\n")
    with pytest.raises(ValueError, match=r"nicmatrix-run.1.md:5: \{no_such_field\}"):
        render.parse(str(src), FLAGS)
