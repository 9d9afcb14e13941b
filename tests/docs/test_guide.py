"""The guide (README.md, docs/*.md, CONTRIBUTING.md, bench/NOTES.md) against the repository and the built
binary: every relative link and #anchor of every Markdown file of the repository resolves (anchors as
GitHub makes them from headings), no link leaves the repository, every `nicmatrix ...` command in the guide's shell examples
uses subcommands, options and listed choices that `nicmatrix SUB --help` has, the commands table of the
README too, a `$ build/nicmatrix report|compare ...` example in the README prints what it shows, and the
README stays short with its two quick-start commands first.

A renamed heading, a moved page or a removed flag fails here, naming the file and line."""
import os
import re
import shlex
import subprocess

from collections import namedtuple

import pytest

from conftest import _OPTION, _TYPE, NM_BINARY, SOURCE, help_subcommands, help_text

GUIDE = ["README.md", "CONTRIBUTING.md", "bench/NOTES.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(SOURCE, "docs")) if f.endswith(".md"))
SKIP_DIRS = {".git", "build", "build-fuzz", "Testing", "nicmatrix-results", "node_modules"}

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_SHELL = {"sh", "bash", "shell", "console"}


def repo_markdown():
    """Every Markdown file of the repository (tracked or new), relative to SOURCE."""
    found = []
    for root, dirs, files in os.walk(SOURCE):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        found += [os.path.relpath(os.path.join(root, f), SOURCE) for f in files if f.endswith(".md")]
    return sorted(found)


def split_blocks(text):
    """[(kind, language, first line number, lines)]: kind "text" or "code", in file order."""
    blocks, kind, lang, start, lines, fence = [], "text", "", 1, [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = _FENCE.match(line)
        if kind == "text" and m:
            blocks.append(("text", "", start, lines))
            kind, lang, start, lines, fence = "code", m[2], n + 1, [], m[1][0] * 3
        elif kind == "code" and line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
            blocks.append(("code", lang, start, lines))
            kind, lang, start, lines = "text", "", n + 1, []
        else:
            lines.append(line)
    blocks.append((kind, lang, start, lines))
    return blocks


def links(path):
    """[(line number, target)] of the inline links and images of a Markdown file, outside code."""
    text = open(os.path.join(SOURCE, path), encoding="utf-8").read()
    found = []
    for kind, _, start, lines in split_blocks(text):
        if kind != "text":
            continue
        for i, line in enumerate(lines):
            for m in _LINK.finditer(_CODE_SPAN.sub("", line)):
                found.append((start + i, m[1]))
    return found


def slug(heading):
    """The anchor GitHub makes of a heading: its text without markup, lower case, punctuation dropped
    (letters, digits, '-' and '_' stay), spaces made '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path):
    text = open(os.path.join(SOURCE, path), encoding="utf-8").read()
    seen, result = {}, set()
    for kind, _, _, lines in split_blocks(text):
        if kind != "text":
            continue
        for line in lines:
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m[1])
            result.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return result


def check_link(path, target):
    """None when the link resolves inside the repository, else why not."""
    if re.match(r"^https?://", target):
        return None
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return "a link to something that is neither in the repository nor a public http(s) page"
    where, _, anchor = target.partition("#")
    if where.startswith("/"):
        return "an absolute path: it points outside the repository (use a path relative to this file)"
    file = os.path.normpath(os.path.join(SOURCE, os.path.dirname(path), where)) if where else os.path.join(SOURCE, path)
    if os.path.relpath(file, SOURCE).startswith(".."):
        return "it leaves the repository"
    if not os.path.exists(file):
        return "no such file"
    if anchor:
        if not file.endswith(".md"):
            return "an anchor into a file that is not Markdown"
        if anchor not in anchors(os.path.relpath(file, SOURCE)):
            return f"no heading makes the anchor #{anchor}"
    return None


def test_the_guide_exists():
    for path in GUIDE + ["docs/architecture.md", "docs/performance.md"]:
        assert os.path.isfile(os.path.join(SOURCE, path)), path


@pytest.mark.parametrize("path", repo_markdown())
def test_every_link_resolves(path):
    broken = [f"{path}:{n}: ({t}): {why}" for n, t in links(path) if (why := check_link(path, t))]
    assert not broken, "\n".join(broken)


def test_no_markdown_file_links_outside_the_repository():
    leaving = []
    for path in repo_markdown():
        for n, target in links(path):
            why = check_link(path, target)
            if why and why != "no such file" and not why.startswith("no heading"):
                leaving.append(f"{path}:{n}: ({target}): {why}")
            elif why == "no such file" and "../shared" in target:
                leaving.append(f"{path}:{n}: ({target}): it leaves the repository")
    assert not leaving, "\n".join(leaving)


def test_slugs_are_githubs():
    assert slug("Safety: a server that strangers cannot take down") == "safety-a-server-that-strangers-cannot-take-down"
    assert slug("Following a sweep live: `--json-stream`") == "following-a-sweep-live---json-stream"
    assert slug("Request/response tests") == "requestresponse-tests"
    assert slug("2026-12-01: the A/A check") == "2026-12-01-the-aa-check"


def test_a_broken_link_is_found(tmp_path, monkeypatch):
    """The checker itself: a missing file, a missing anchor and a path out of the repository fail."""
    assert check_link("README.md", "docs/no-such-page.md") == "no such file"
    assert check_link("README.md", "docs/sweeps.md#no-such-heading").startswith("no heading")
    assert check_link("README.md", "../shared/DESIGN.md") == "it leaves the repository"
    assert check_link("docs/sweeps.md", "/work/shared/DESIGN.md").startswith("an absolute path")
    assert check_link("docs/sweeps.md", "file:///etc/passwd").startswith("a link to something")
    assert check_link("docs/sweeps.md", "#the-config") is None


# ---- commands -------------------------------------------------------------------------------------------

_help_cache = {}
Option = namedtuple("Option", "choices has_default")   # choices: the values --help lists, or None


def help_of(words):
    """({option: False for a flag, else Option}, [subcommands]) of `nicmatrix WORDS --help`; the choices are
    those of a type CLI11 prints as TYPE:{a,b,c}, has_default when it prints TYPE=DEFAULT."""
    key = tuple(words)
    if key not in _help_cache:
        text = help_text(*words)
        block = text.split("\nOptions:\n", 1)[1].split("\nSubcommands:\n", 1)[0] if "\nOptions:\n" in text else ""
        options = {}
        for line in block.splitlines():
            m = _OPTION.match(line)   # the same reading of CLI11's lines as conftest.help_options
            if not m:
                continue
            value = m[2] if m[2] and _TYPE.match(m[2]) else None
            choices = re.search(r":\{([^}]*)\}", value or "")
            spec = False
            if value:
                spec = Option([c.strip() for c in choices[1].split(",")] if choices else None, "=" in value)
            for name in m[1].split(","):
                options[name] = spec
        _help_cache[key] = (options, help_subcommands(*words))
    return _help_cache[key]


def command_chain(tokens):
    """The subcommand words at the start of TOKENS (after `nicmatrix`), and the rest."""
    chain = []
    while tokens and tokens[0] in help_of(chain)[1]:
        chain.append(tokens.pop(0))
    return chain, tokens


def check_invocation(tokens):
    """Problems with `nicmatrix TOKENS...` as --help describes it (positional arguments are not checked)."""
    chain, rest = command_chain(list(tokens))
    options, subs = help_of(chain)
    problems = []
    if subs and not any(t in ("--help", "-h", "--version") for t in rest):
        problems.append(f"`nicmatrix {' '.join(chain)}` needs one of its subcommands: {', '.join(subs)}")
    i = 0
    while i < len(rest):
        tok = rest[i]
        i += 1
        if tok == "--":
            break
        if not tok.startswith("-") or re.match(r"^-\d+(\.\d+)?$", tok) and tok not in options or tok == "-":
            continue
        name, eq, value = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        if name in ("--help", "-h", "--version"):
            continue
        if name not in options:
            problems.append(f"`nicmatrix {' '.join(chain)}` has no option {name}")
            continue
        kind = options[name]
        if kind is False:
            continue
        if not eq:
            # An option with a default may stand alone (`sweep CONFIG --lab`): CLI11 shows no other sign.
            if i >= len(rest) or kind.has_default and rest[i].startswith("-"):
                if not kind.has_default:
                    problems.append(f"{name} needs a value")
                continue
            value = rest[i]
            i += 1
        if kind.choices and value not in kind.choices and not re.search(r"[<>$*]|^[A-Z]+$", value):
            problems.append(f"{name} {value}: not one of {', '.join(kind.choices)}")
    return problems


def shell_lines(path):
    """[(line number, text)] of the shell commands in PATH's examples: every line of a sh/bash/console
    block, and lines starting with `$ ` in blocks without a language (continuation lines joined)."""
    text = open(os.path.join(SOURCE, path), encoding="utf-8").read()
    found = []
    for kind, lang, start, lines in split_blocks(text):
        if kind != "code" or not (lang in _SHELL or lang == ""):
            continue
        pending, first = "", None
        for i, line in enumerate(lines):
            if lang == "" and not pending:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            elif lang == "console" and not pending:
                if not line.startswith("$ ") and not line.startswith("# "):
                    continue
                line = line[2:]
            first = first or start + i
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            found.append((first, pending + line))
            pending, first = "", None
    return found


def nicmatrix_invocations(line):
    """The argument lists of every `nicmatrix` (or build/nicmatrix) command on one shell line."""
    line = re.sub(r"<([\w -]+)>", r"\1", line)   # placeholders like <stamp>
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return []
    segments, current = [], []
    for t in tokens:
        if t and set(t) <= set("|&;()"):
            segments.append(current)
            current = []
        else:
            current.append(t)
    segments.append(current)
    found = []
    for seg in segments:
        while seg and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", seg[0]):
            seg = seg[1:]
        while seg:
            if seg[:3] == ["ip", "netns", "exec"] and len(seg) > 3:
                seg = seg[4:]
            elif seg[0] in ("sudo", "exec", "command", "time"):
                seg = seg[1:]
            elif seg[0] == "timeout" and len(seg) > 1:
                seg = seg[2:]
            else:
                break
        if seg and os.path.basename(seg[0]) == "nicmatrix":
            found.append(seg[1:])
    return found


@pytest.mark.parametrize("path", GUIDE)
def test_every_nicmatrix_command_in_the_examples_parses(path):
    problems = []
    for n, line in shell_lines(path):
        for args in nicmatrix_invocations(line):
            problems += [f"{path}:{n}: {line.strip()}\n    {p}" for p in check_invocation(args)]
    assert not problems, "\n".join(problems)


def test_the_examples_have_commands():
    """The extraction itself finds the commands (a parser that finds none would pass everything)."""
    seen = sum(len(nicmatrix_invocations(line)) for path in GUIDE for _, line in shell_lines(path))
    assert seen >= 30
    assert check_invocation(["sweep", "x.json", "--no-such-flag"]) == ["`nicmatrix sweep` has no option --no-such-flag"]
    assert nicmatrix_invocations("ip netns exec nmlab-a build/nicmatrix run -c 198.18.0.2 -t 5   # TCP") == \
        [["run", "-c", "198.18.0.2", "-t", "5"]]


def readme_table_commands():
    """The command column of the README's commands table: [(line number, text)]."""
    found = []
    for n, line in enumerate(open(os.path.join(SOURCE, "README.md"), encoding="utf-8"), 1):
        m = re.match(r"^\| `(nicmatrix [^`]*)`", line)
        if m:
            found.append((n, m[1].replace("\\|", "|")))
    return found


def test_the_readme_commands_table_matches_help():
    rows = readme_table_commands()
    assert len(rows) >= 10
    problems = []
    for n, text in rows:
        words = text.split()[1:]
        chain, rest = command_chain([w for w in words])
        if not chain:
            continue   # `nicmatrix --version`, `nicmatrix CMD --help`
        options, _ = help_of(chain)
        for flag in re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", " ".join(rest)):
            if flag not in options and flag not in ("--help", "-h"):
                problems.append(f"README.md:{n}: `nicmatrix {' '.join(chain)}` has no option {flag}")
    assert not problems, "\n".join(problems)


def test_readme_outputs_are_what_the_commands_print():
    """A README block that starts with `$ build/nicmatrix report|compare FILE...` (files in the repository)
    shows exactly what that command prints."""
    text = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()
    checked = 0
    for kind, lang, start, lines in split_blocks(text):
        if kind != "code" or not lines or not re.match(r"^\$ build/nicmatrix (report|compare) ", lines[0]):
            continue
        argv = shlex.split(lines[0][2:], comments=True)
        out = subprocess.run([NM_BINARY] + argv[1:], cwd=SOURCE, capture_output=True, text=True, timeout=120, check=True).stdout
        assert [l.rstrip() for l in out.rstrip("\n").split("\n")] == [l.rstrip() for l in lines[1:]], \
            f"README.md:{start}: the output shown is not what `{lines[0][2:]}` prints today"
        checked += 1
    assert checked >= 1


def test_the_readme_is_short_and_starts_with_the_quick_start():
    text = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()
    assert text.count("\n") < 250, f"README.md has {text.count(chr(10))} lines; the guide belongs in docs/"
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings[0] == "Quick start", headings
    quick = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    code = [b for b in split_blocks(quick) if b[0] == "code"][0][3]
    commands = [l.split("#")[0].strip() for l in code if l.strip()]
    assert commands == ["bash scripts/quickstart.sh", "bash scripts/test.sh"], commands
