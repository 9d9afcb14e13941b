"""The man pages and the shell completions, from one source: man/*.1.md.

    /usr/bin/python3 man/render.py roff PAGE.1.md OUT.1      # one man page (roff, for man-db)
    /usr/bin/python3 man/render.py bash OUT PAGE.1.md ...    # bash completion for every page given
    /usr/bin/python3 man/render.py zsh OUT PAGE.1.md ...     # zsh completion (#compdef nicmatrix)
    ... --nicmatrix BUILD/nicmatrix                           # with the flags the field table declares

The source is a small Markdown dialect (ronn's), so the page reads the same on GitHub:

    # nicmatrix-sweep(1) -- one-line summary        the title: page name, section, the whatis line
    ## SECTION                                      .SH; `### Title` is .SS
    text, `literal` (bold), *PLACEHOLDER* (italic)  a paragraph; a blank line ends it
    ```                                             a literal block (kept as it is, indented)
    * `-o`, `--output` *FILE*: description          an item (.TP): in OPTIONS, one option of the command
      continuation                                  an indented line continues the item above

Under `## OPTIONS`, every item names its flags in backticks and, if it takes a value, the value as
*PLACEHOLDER*; one line is one option, which is all an added flag needs. A page for a command with
subcommands (`nicmatrix lab up|down|show`) groups them under `### up`, `### down`, ... inside OPTIONS. The
placeholder tells the completion what to offer: a name with FILE, CONFIG, KEY or PATH gives file names,
IFACE interfaces, NS network namespaces, HOST or ADDR host names, `a|b|c` those words; anything else
nothing. In `## ARGUMENTS` the items are the positional arguments, named the same way. `nicmatrix.1.md`
lists the subcommands under `## COMMANDS` (one item each: * `sweep`: ...).

The flags of a command that the test spec's field table declares (core/traffic/traffic_types.hpp; listed by
`nicmatrix schema flags`) take their names and placeholder from it: their item is `* {key}: description`
(the field's JSON key), and a flag of the table that has no item gets one from its --help text, after the
page's last option. So a field added to the table needs nothing here; its item is written when it needs
more than --help says.

tests/docs/ checks the sources against `nicmatrix CMD --help`, renders every page through groff with
warnings on, and drives both completions.
"""
import dataclasses
import json
import re
import subprocess
import sys


@dataclasses.dataclass
class Option:
    names: list            # ["-o", "--output"]
    placeholder: str       # "FILE", "table|md|csv", or "" for a flag
    text: str              # the description (Markdown inline)
    repeated: bool = False  # an argument written *FILE*...: one or more

    @property
    def kind(self):
        return value_kind(self.placeholder)


@dataclasses.dataclass
class Page:
    name: str                      # nicmatrix-sweep
    section: str                   # 1
    summary: str                   # the whatis line
    blocks: list                   # (kind, payload) in order, for the roff writer
    options: dict                  # command words after the page's command ("" or "up") -> [Option]
    arguments: dict                # same keys -> [Option] (positional, names empty)
    commands: list                 # nicmatrix.1 only: [(name, text)]

    @property
    def command(self):
        """The words after `nicmatrix`: "sweep" for nicmatrix-sweep, "" for nicmatrix itself."""
        return self.name.partition("-")[2]


def value_kind(placeholder):
    """What a value called PLACEHOLDER is, for completion: file, iface, netns, host, words:a b c, or ""."""
    p = placeholder.strip("[]. ")
    if "=" in p:
        return ""
    if "|" in p:
        return "words:" + " ".join(w for w in p.split("|") if w)
    upper = p.upper()
    if any(w in upper for w in ("FILE", "CONFIG", "KEY", "PATH", "DIR")):
        return "file"
    if "IFACE" in upper:
        return "iface"
    if upper in ("NS", "NETNS"):
        return "netns"
    if "HOST" in upper or "ADDR" in upper:
        return "host"
    return ""


_TITLE = re.compile(r"^# ([a-z0-9-]+)\((\d)\) -- (.+)$")
_ITEM = re.compile(r"^\* (.+?(?:[`*]|\.\.\.)):(?: (.*)|$)")
_FIELD_ITEM = re.compile(r"^\* \{([a-z0-9_]+)\}:(.*)$")


def _parse_term(term):
    """`-o`, `--output` *FILE* -> (["-o", "--output"], "FILE")."""
    names = re.findall(r"`([^`]+)`", term)
    holders = re.findall(r"\*([^*]+)\*", term)
    return names, (holders[0] if holders else "")


def table_flags(nicmatrix):
    """{command: [{"key", "flags", "value", "help", ...}]}: the flags the field table declares, as
    `nicmatrix schema flags` prints them."""
    out = subprocess.run([nicmatrix, "schema", "flags"], capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def _table_term(row):
    """A table flag's item term: `-P`, `--parallel` *N*."""
    term = ", ".join(f"`{n}`" for n in row["flags"])
    return term + (f" *{row['value']}*" if row["value"] else "")


def parse(path, flags=None):
    """Reads one page source; raises ValueError naming the file and line for anything it cannot read.
    `flags`: table_flags(), for the items `* {key}: ...` and the table's flags the page has no item for."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    m = _TITLE.match(lines[0]) if lines else None
    if not m:
        raise ValueError(f"{path}:1: expected '# NAME(SECTION) -- summary'")
    page = Page(m[1], m[2], m[3], [], {}, {}, [])
    table = {row["key"]: row for row in (flags or {}).get(page.command, [])}
    unused = dict(table)
    last_option = None   # where the table's flags without an item go: after the last item of OPTIONS
    section, group = "", ""
    i = 1
    while i < len(lines):
        line = lines[i]
        field = _FIELD_ITEM.match(line) if section == "OPTIONS" else None
        if field:
            if field[1] not in table:
                raise ValueError(f"{path}:{i + 1}: {{{field[1]}}} is not a field with a flag of `nicmatrix "
                                 f"{page.command}` (nicmatrix schema flags; render.py --nicmatrix BIN)")
            unused.pop(field[1], None)
            line = f"* {_table_term(table[field[1]])}:{field[2]}"
        if line.startswith("```"):
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            if end == len(lines):
                raise ValueError(f"{path}:{i + 1}: unclosed ``` block")
            page.blocks.append(("code", lines[i + 1:end]))
            i = end + 1
            continue
        if line.startswith("## "):
            section, group = line[3:].strip(), ""
            page.blocks.append(("section", section))
        elif line.startswith("### "):
            title = line[4:].strip()
            page.blocks.append(("subsection", title))
            if section in ("OPTIONS", "ARGUMENTS"):
                group = title
        elif line.startswith("* "):
            item = _ITEM.match(line)
            if not item:
                raise ValueError(f"{path}:{i + 1}: an item is '* TERM: text' with TERM in `...` or *...*")
            text = [item[2] or ""]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                text.append(lines[i].strip())
            term, body = item[1], " ".join(t for t in text if t)
            page.blocks.append(("item", (term, body)))
            names, holder = _parse_term(term)
            if section == "OPTIONS":
                if not names or not all(n.startswith("-") for n in names):
                    raise ValueError(f"{path}:{i + 1}: an option item names its flags in backticks: * `--flag` *VALUE*: ...")
                page.options.setdefault(group, []).append(Option(names, holder, body))
                last_option = len(page.blocks)
            elif section == "ARGUMENTS":
                page.arguments.setdefault(group, []).append(Option([], holder, body, term.endswith("...")))
            elif section == "COMMANDS":
                page.commands.append((names[0] if names else term, body))
        elif line.strip():
            para = [line]
            while i + 1 < len(lines) and lines[i + 1].strip() and not lines[i + 1].startswith(("#", "* ", "```")):
                i += 1
                para.append(lines[i])
            page.blocks.append(("synopsis" if section == "SYNOPSIS" else "para", para))
        i += 1
    if unused and last_option is None:
        raise ValueError(f"{path}: no ## OPTIONS item to put the table's flags after: {', '.join(unused)}")
    for row in reversed(list(unused.values())):
        names, holder = _parse_term(_table_term(row))
        page.blocks.insert(last_option, ("item", (_table_term(row), row["help"])))
        page.options.setdefault("", []).append(Option(names, holder, row["help"]))
    return page


# ---- roff --------------------------------------------------------------------------------------------

def _escape(text):
    """Plain text for roff: backslashes, minus signs (so `--lab` stays ASCII when copied) and a leading
    dot or quote, which roff would read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text)


def _inline(text):
    out = []
    for piece in re.split(r"(`[^`]+`|\*[^*\s][^*]*\*)", text):
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            out.append("\\fB" + _escape(piece[1:-1]) + "\\fR")
        elif piece.startswith("*") and piece.endswith("*") and len(piece) > 1:
            out.append("\\fI" + _escape(piece[1:-1]) + "\\fR")
        else:
            out.append(_escape(piece))
    return re.sub(r"^([.'])", r"\\&\1", "".join(out))


def roff(page, version=""):
    title = page.name.upper()
    source = f"nicmatrix {version}".strip()
    out = [f'.TH "{title}" "{page.section}" "" "{source}" "nicmatrix manual"',
           ".SH NAME", f"{_escape(page.name)} \\- {_inline(page.summary)}"]
    for kind, payload in page.blocks:
        if kind == "section":
            out.append(f'.SH "{payload}"')
        elif kind == "subsection":
            out.append(f'.SS "{_escape(payload)}"')
        elif kind == "para":
            out.append(".PP")
            out.extend(_inline(line.strip()) for line in payload)
        elif kind == "synopsis":
            out.append(".PP")
            out.append(".nh")
            out.append(".ad l")
            for n, line in enumerate(payload):
                if n:
                    out.append(".br")
                out.append(_inline(line.strip()))
            out.append(".ad")
            out.append(".hy")
        elif kind == "item":
            term, body = payload
            out.append(".TP")
            out.append(_inline(term))
            out.append(_inline(body))
        elif kind == "code":
            out.extend([".PP", ".RS 4", ".nf"])
            out.extend(_escape(line) if line else "" for line in payload)
            out.extend([".fi", ".RE"])
    return "\n".join(out) + "\n"


# ---- completions -------------------------------------------------------------------------------------

def _tree(pages):
    """{command path: (options, arguments, subcommands)} for every command: "" (nicmatrix itself),
    "sweep", "lab", "lab up", ...; options and arguments as Option lists, subcommands as names."""
    tree = {}
    for p in pages:
        groups = sorted(set(p.options) | set(p.arguments))
        for g in groups:
            tree[f"{p.command} {g}".strip()] = (p.options.get(g, []), p.arguments.get(g, []), [])
        if p.command:
            own = tree.setdefault(p.command, ([], [], []))
            own[2].extend(g for g in groups if g)
        else:
            own = tree.setdefault("", ([], [], []))
            own[2].extend(c for c, _ in p.commands)
    return tree


def _sh_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def bash(pages):
    tree = _tree(pages)
    out = ["# bash completion for nicmatrix: subcommands, their options, and what each option's value is",
           "# (files, interfaces, namespaces, hosts, fixed words). Generated from man/*.1.md by man/render.py:",
           "# edit those, not this file. Needs nothing but bash (bash-completion's helpers are not used).",
           "",
           "_nicmatrix() {",
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev=''",
           "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}",
           "    # Per command path ('.' is nicmatrix itself): its subcommands, its options, the kind of its",
           "    # first positional argument, and the kind of value each option takes ('any': no completion).",
           "    local -A subs opts args vals",
           ]
    for path, (options, arguments, subs) in sorted(tree.items()):
        key = path or "."
        out.append(f"    subs[{_sh_quote(key)}]={_sh_quote(' '.join(subs))}")
        out.append(f"    opts[{_sh_quote(key)}]={_sh_quote(' '.join(n for o in options for n in o.names))}")
        if arguments and arguments[0].kind:
            out.append(f"    args[{_sh_quote(key)}]={_sh_quote(arguments[0].kind)}")
        for o in options:
            if o.placeholder:
                for n in o.names:
                    out.append(f"    vals[{_sh_quote(key + ' ' + n)}]={_sh_quote(o.kind or 'any')}")
    out += [
        "    # The command path: the words naming (sub)commands, skipping options and their values.",
        "    local path=. i w",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        "        w=${COMP_WORDS[i]}",
        "        if [[ $w == -* ]]; then",
        "            [[ $w != *=* && -n ${vals[$path $w]+x} ]] && ((i++))",
        "        elif [[ \" ${subs[$path]} \" == *\" $w \"* ]]; then",
        "            if [[ $path == . ]]; then path=$w; else path=\"$path $w\"; fi",
        "        fi",
        "    done",
        "    local kind=",
        "    if [[ $prev == -* && -n ${vals[$path $prev]+x} ]]; then",
        "        kind=${vals[$path $prev]}",
        "    elif [[ $cur == -* ]]; then",
        "        COMPREPLY=($(compgen -W \"${opts[$path]} --help\" -- \"$cur\"))",
        "        return 0",
        "    elif [[ -n ${subs[$path]} ]]; then",
        "        COMPREPLY=($(compgen -W \"${subs[$path]}\" -- \"$cur\"))",
        "        return 0",
        "    else",
        "        kind=${args[$path]-}",
        "    fi",
        "    case $kind in",
        "        file)",
        "            compopt -o filenames 2>/dev/null",
        "            COMPREPLY=($(compgen -f -- \"$cur\")) ;;",
        "        iface) COMPREPLY=($(compgen -W \"$(ls /sys/class/net 2>/dev/null)\" -- \"$cur\")) ;;",
        "        netns) COMPREPLY=($(compgen -W \"$(ip netns list 2>/dev/null | cut -d' ' -f1)\" -- \"$cur\")) ;;",
        "        host) COMPREPLY=($(compgen -A hostname -- \"$cur\")) ;;",
        "        words:*) COMPREPLY=($(compgen -W \"${kind#words:}\" -- \"$cur\")) ;;",
        "        *) COMPREPLY=() ;;",
        "    esac",
        "    return 0",
        "}",
        "complete -F _nicmatrix nicmatrix",
        "",
    ]
    return "\n".join(out)


def _zsh_text(text):
    """A description for _arguments/_describe: the first clause, without markup, asides in brackets, or
    the characters _arguments reads ([ ] :)."""
    plain = re.sub(r"\s*\([^()]*\)", "", re.sub(r"[`*]", "", text))
    plain = re.split(r"; |\. |: ", plain)[0].rstrip(".")
    plain = plain.replace("\\", "").replace("[", "(").replace("]", ")").replace(":", " -")
    return plain[:70].rstrip()


def _zsh_quote(text):
    """For inside '...' in the generated script."""
    return text.replace("'", "'\\''")


_ZSH_ACTIONS = {"file": "_files", "iface": "_net_interfaces", "host": "_hosts",
                "netns": "{compadd - ${${(f)\"$(ip netns list 2>/dev/null)\"}%% *}}", "": " "}


def _zsh_action(kind):
    if kind.startswith("words:"):
        return "(" + kind[6:] + ")"
    return _ZSH_ACTIONS.get(kind, " ")


def _zsh_specs(page, group):
    specs = []
    for o in page.options.get(group, []):
        desc = _zsh_quote(_zsh_text(o.text))
        message = o.names[-1].lstrip("-") if "|" in o.placeholder else o.placeholder.lower()
        value = f":{message}:{_zsh_action(o.kind)}" if o.placeholder else ""
        if len(o.names) > 1:
            excl = " ".join(o.names)
            specs.append(f"'({excl})'{{{','.join(o.names)}}}'[{desc}]{value}'")
        else:
            specs.append(f"'{o.names[0]}[{desc}]{value}'")
    for n, a in enumerate(page.arguments.get(group, []), start=1):
        position = "*" if a.repeated else str(n)
        specs.append(f"'{position}:{a.placeholder.lower()}:{_zsh_action(a.kind)}'")
    return specs


def zsh(pages):
    top = next(p for p in pages if p.command == "")
    by_command = {p.command: p for p in pages if p.command}
    out = ["#compdef nicmatrix",
           "# zsh completion for nicmatrix. Generated from man/*.1.md by man/render.py: edit those, not this file.",
           "",
           "_nicmatrix() {",
           "    local -a commands",
           "    commands=(" + " ".join(_sh_quote(f"{c}:{_zsh_text(t)}") for c, t in top.commands) + ")",
           "    if (( CURRENT == 2 )); then",
           "        if [[ $words[CURRENT] == -* ]]; then",
           "            _arguments '--version[print the version]' '(-h --help)'{-h,--help}'[print help]'",
           "        else",
           "            _describe -t commands 'nicmatrix command' commands",
           "        fi",
           "        return",
           "    fi",
           "    local cmd=$words[2]",
           "    shift words; (( CURRENT-- ))",
           "    case $cmd in"]
    for command, page in sorted(by_command.items()):
        subs = sorted(g for g in set(page.options) | set(page.arguments) if g)
        out.append(f"    ({command})")
        if subs:
            out.append("        if (( CURRENT == 2 )); then")
            out.append(f"            _values '{command} command' {' '.join(subs)}")
            out.append("            return")
            out.append("        fi")
            out.append("        local sub=$words[2]")
            out.append("        shift words; (( CURRENT-- ))")
            out.append("        case $sub in")
            for s in subs:
                out.append(f"        ({s}) _arguments -s -S '(-h --help)'{{-h,--help}}'[print help]' " + " ".join(_zsh_specs(page, s)) + " ;;")
            out.append("        esac ;;")
        else:
            out.append("        _arguments -s -S '(-h --help)'{-h,--help}'[print help]' " + " ".join(_zsh_specs(page, "")) + " ;;")
    out += ["    esac", "}", "", '_nicmatrix "$@"', ""]
    return "\n".join(out)


def main(argv):
    flags = None
    if "--nicmatrix" in argv[:-1]:
        at = argv.index("--nicmatrix")
        flags = table_flags(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    if len(argv) >= 3 and argv[0] == "roff":
        version = argv[3] if len(argv) > 3 else ""
        text = roff(parse(argv[1], flags), version)
        out = argv[2]
    elif len(argv) >= 3 and argv[0] in ("bash", "zsh"):
        pages = [parse(p, flags) for p in argv[2:]]
        text = (bash if argv[0] == "bash" else zsh)(pages)
        out = argv[1]
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"render.py: {e}", file=sys.stderr)
        sys.exit(1)
