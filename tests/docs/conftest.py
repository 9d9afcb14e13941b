import os
import re
import subprocess
import sys

import pytest

SOURCE = os.environ.get("NM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
NM_BINARY = os.environ.get("NM_BINARY", os.path.join(SOURCE, "build", "nicmatrix"))
MAN_DIR = os.path.join(SOURCE, "man")
sys.path.insert(0, MAN_DIR)

import render  # noqa: E402  (man/render.py: the page parser and the completion writers)

_OPTION = re.compile(r"^  (-[^\s,]+(?:,-[^\s,]+)*)(?: (\S+))?")
_TYPE = re.compile(r"^[A-Z][A-Z0-9_]*(?:$|[:=\[ ])")


def run(*args, timeout=60, check=True, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=check, **kw)


def help_text(*words):
    return run(NM_BINARY, *words, "--help").stdout


def help_subcommands(*words):
    """The subcommands `nicmatrix WORDS --help` lists."""
    text = help_text(*words)
    if "\nSubcommands:\n" not in text:
        return []
    block = text.split("\nSubcommands:\n", 1)[1]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ") and line.strip()]


def help_options(*words):
    """{option name: takes a value} for every option `nicmatrix WORDS --help` shows, --help itself left out.
    CLI11 prints `  -o,--output TEXT REQUIRED   text`: the names, then the value's type (capitals) for an
    option that takes one, or nothing / `Excludes:` / `Needs:` for a flag."""
    text = help_text(*words)
    block = text.split("\nOptions:\n", 1)[1].split("\nSubcommands:\n", 1)[0]
    options = {}
    for line in block.splitlines():
        m = _OPTION.match(line)
        if not m:
            continue
        takes_value = bool(m[2] and _TYPE.match(m[2]))
        for name in m[1].split(","):
            if name not in ("-h", "--help"):
                options[name] = takes_value
    return options


def table_flags():
    """The flags the field table declares (`nicmatrix schema flags`), which the pages name by field."""
    return render.table_flags(NM_BINARY)


def parse_page(path):
    return render.parse(path, table_flags())


def pages():
    flags = table_flags()
    return {p.command: p for p in (render.parse(os.path.join(MAN_DIR, f), flags) for f in sorted(os.listdir(MAN_DIR))
                                   if f.endswith(".1.md"))}


@pytest.fixture(scope="session")
def man_pages():
    return pages()
