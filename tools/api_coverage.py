#!/usr/bin/env python3
"""API coverage report: which pyACL / AscendCL functions of the contract exist.

    python3 tools/api_coverage.py [--spec PATH] [--build-dir DIR] [--output FILE]

Reads the contract (../shared/spec/pyacl-api.md beside the repository, or
--spec / $OPENACL_SPEC), lists the Python functions per module (acl, acl.rt,
acl.mdl, acl.op, acl.prof, acl.util, acl.media, acl.blas) and the C functions
(acl* names) it names, then checks each one:

  C        declared in include/acl/**.h, and defined (exported) by
           <build>/lib/libascendcl.so (`nm -D --defined-only`);
  Python   present in the built module (<build>/python/acl*.so): dir() of acl
           and of its submodules.

Writes docs/api-coverage.md (counts per module, then the full tables). If the
spec cannot be found it prints a note and exits 0; a missing build only leaves
the "implemented" columns at "no" (and says so in the report).
"""
import argparse
import datetime
import os
import pathlib
import re
import subprocess
import sys
from collections import OrderedDict, defaultdict

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUBMODULES = ("rt", "mdl", "op", "prof", "util", "media", "blas", "himpi", "fv")
PY_MODULE_ORDER = ["acl"] + [f"acl.{m}" for m in SUBMODULES]

# Default Python module of each spec section (most specific section number wins).
SECTION_MODULE = {
    "1": "acl",
    "2": "acl.rt",
    "3": "acl.mdl",
    "3.1": "acl",
    "4": "acl",
    "4.4": "acl.op",
    "4.5": "acl.blas",
    "5": "acl.prof",
    "6": "acl.util",
    "7": "acl.media",
}
# Sections whose bullets list functions without their module prefix.
LIST_SECTIONS = ("2.8", "3.7", "4.5", "7")

# C function families, by name prefix (longest first).
C_GROUPS = [
    ("aclrt", "aclrt* (runtime)"),
    ("aclmdl", "aclmdl* (models)"),
    ("acldump", "acldump* (dump)"),
    ("aclopCompile", "aclop* (single operators)"),
    ("aclop", "aclop* (single operators)"),
    ("aclprof", "aclprof* (profiling)"),
    ("aclblas", "aclblas* (cBLAS)"),
    ("acldvpp", "acldvpp*/aclvdec*/aclvenc* (media)"),
    ("aclvdec", "acldvpp*/aclvdec*/aclvenc* (media)"),
    ("aclvenc", "acldvpp*/aclvdec*/aclvenc* (media)"),
    ("aclsys", "acl* (base: init, buffers, tensor descs, fp16)"),
    ("acl", "acl* (base: init, buffers, tensor descs, fp16)"),
]
C_VERBS = {"Get", "Set", "Create", "Destroy", "Start", "Stop", "Load", "Unload", "Init",
           "Finalize", "Add", "Enable", "Disable", "Query", "Record", "Reset", "Malloc",
           "Free", "Register", "Unregister", "Subscribe", "Update"}


# --------------------------------------------------------------------------- spec


def code_spans(text):
    return re.findall(r"`([^`]*)`", text)


def camel_words(name):
    return re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", name)


def expand_brackets(token):
    """aclrt[Ctx]SetX -> [aclrtSetX, aclrtCtxSetX]."""
    m = re.search(r"\[([A-Za-z0-9_]+)\]", token)
    if not m:
        return [token]
    head, tail = token[:m.start()], token[m.end():]
    return expand_brackets(head + tail) + expand_brackets(head + m.group(1) + tail)


def expand_c_alternation(token):
    """Names in 'A/B/C' where B, C replace the end of A, or are whole names:
    aclmdlGetNumInputs/Outputs, aclmdlBundleLoadFromFile/FromMem/Unload/GetModelNum,
    aclrtSet/GetSysParamOpt (the verbs differ, the object is shared),
    aclrtGetOverflowStatus/aclrtResetOverflowStatus."""
    parts = [p for p in token.split("/") if p]
    if len(parts) <= 1:
        return parts
    first = parts[0]
    m = re.match(r"(acl[a-z]*)(.*)", first)
    prefix, words = m.group(1), camel_words(m.group(2))
    p1_words = camel_words(parts[1])
    if (words and words[-1] in C_VERBS and not parts[1].startswith("acl")
            and p1_words and p1_words[0] in C_VERBS and len(p1_words) > 1):
        tail = "".join(p1_words[1:])
        stem = prefix + "".join(words[:-1])
        return [first + tail] + [stem + p for p in parts[1:]]
    names = [first]
    for part in parts[1:]:
        if part.startswith("acl"):
            names.append(part)
            continue
        pw = camel_words(part)
        w0 = pw[0] if pw else ""
        if w0 in words:
            cut = len(words) - 1 - words[::-1].index(w0)
        elif w0 in C_VERBS and any(w in C_VERBS for w in words):
            cut = next(i for i, w in enumerate(words) if w in C_VERBS)
        else:
            cut = len(words) - 1
        names.append(prefix + "".join(words[:cut]) + part)
    return names


def c_names_in_span(span, allow_bare):
    """Function names in one code span of C text. A name counts when '(' follows
    it, or ' / ' (a list of names), or (allow_bare) the end of the span."""
    names = []
    for m in re.finditer(r"\bacl[A-Za-z0-9_\[\]/]*", span):
        token = m.group(0).rstrip("/")
        after = span[m.end():].lstrip()
        if not re.match(r"acl[a-z]*[\[A-Z]", token):
            continue
        if after.startswith("(") or after.startswith("/") or (allow_bare and after == ""):
            for t in expand_brackets(token):
                names.extend(expand_c_alternation(t))
    return [n for n in names if re.fullmatch(r"acl[a-z]*[A-Z][A-Za-z0-9_]*", n)]


def split_module(text, default):
    """'acl.rt.x(' / 'rt.x(' / 'acl.x(' / 'x(' -> (module, rest, explicit)."""
    m = re.match(r"acl\.(%s)\.(.*)" % "|".join(SUBMODULES), text)
    if m:
        return f"acl.{m.group(1)}", m.group(2), True
    m = re.match(r"(%s)\.(.*)" % "|".join(SUBMODULES), text)
    if m:
        return f"acl.{m.group(1)}", m.group(2), True
    m = re.match(r"acl\.(.*)", text)
    if m:
        return "acl", m.group(1), True
    return default, text, False


def continuation_stem(previous):
    """Stem that a '_suffix' span continues: the name up to its last _desc/_config
    (dvpp_set_pic_desc_data -> dvpp_set_pic_desc), else None."""
    m = re.match(r"(.*_(?:desc|config))(_|$)", previous)
    return m.group(1) if m else None


def expand_py_alternation(token):
    """get/set/reset_stream_res_limit -> get_..., set_..., reset_...;
    vdec_set/get_channel_desc_x -> vdec_set_channel_desc_x, vdec_get_channel_desc_x;
    dvpp_get_stream_desc_data/_size -> dvpp_get_stream_desc_data, dvpp_get_stream_desc_size;
    dvpp_create_hist/destroy_hist -> dvpp_create_hist, dvpp_destroy_hist;
    value_write/value_wait -> both as written."""
    parts = [p for p in token.split("/") if p]
    if len(parts) <= 1:
        return parts
    first = parts[0]
    if any(p.startswith("_") for p in parts[1:]):
        stem = continuation_stem(first) or first.rpartition("_")[0]
        return [first] + [stem + p if p.startswith("_") else p for p in parts[1:]]
    if "_" in first and all("_" not in p for p in parts[1:]):
        # dvpp_set_roi_config_left/right/top/bottom: the last word varies.
        stem = first.rpartition("_")[0]
        return [first] + [stem + "_" + p for p in parts[1:]]
    firsts = [p.split("_", 1)[0] for p in parts]
    if len(set(firsts)) == 1:
        return parts
    head = ""
    if "_" in first and firsts[0] not in firsts[1:]:
        head, first = first.split("_", 1)
        head += "_"
    if "_" in first:  # whole names sharing the family head (dvpp_)
        return [head + first] + [head + p for p in parts[1:]]
    last_alt, _, tail = parts[-1].partition("_")
    tail = "_" + tail if tail else ""
    alts = [first] + parts[1:-1] + [last_alt]
    return [head + a + tail for a in alts]


def py_names_in_span(span, default, unprefixed_ok, previous, bare_ok, families):
    """Python function names at the start of one code span: [(module, name)].

    previous: names of the previous span (for '_suffix' continuations);
    bare_ok: an unprefixed name alone in the span counts (table cells);
    families: first words of names already found per module (bare names in
    lists count only when they start like a known name: 'venc_...')."""
    span = span.strip()
    if span.startswith("_"):
        m = re.match(r"((?:_[a-z0-9]+)+(?:/(?:_[a-z0-9]+)+)*)\s*(\(|->|$)", span)
        if not m or not previous:
            return []
        out = []
        for module, prev in previous:
            stem = continuation_stem(prev)
            if stem:
                out += [(module, stem + s) for s in m.group(1).split("/")]
        return out
    module, rest, explicit = split_module(span, default)
    if module is None or (not explicit and not unprefixed_ok):
        return []
    # A comma list of bare names: 'create_notify, destroy_notify, ...'.
    if not explicit and re.fullmatch(r"[a-z][a-z0-9_]*(\s*,\s*[a-z][a-z0-9_]*)+", rest):
        return [(module, n.strip()) for n in rest.split(",") if "_" in n]
    m = re.match(r"([a-z][a-z0-9_/]*)\s*(\(|->|$)", rest)
    if not m:
        return []
    token = m.group(1)
    if not explicit and "_" not in token:
        return []
    if not explicit and m.group(2) == "" and "/" not in token and not bare_ok:
        # A bare snake_case word in prose is usually an argument name; accept it
        # only when it starts like a function already found ('venc_...').
        if token.split("_", 1)[0] not in families.get(module, ()):
            return []
    return [(module, n) for n in expand_py_alternation(token)]


def section_module(section):
    best = None
    for key, module in SECTION_MODULE.items():
        if section == key or section.startswith(key + "."):
            if best is None or len(key) > len(best[0]):
                best = (key, module)
    return best[1] if best else None


def parse_spec(text):
    """Returns (python: {module: OrderedDict name->section},
                c: OrderedDict name->section)."""
    # Two passes: the first learns the families ('venc_', 'dvpp_') that let the
    # second accept bare names listed before the first explicit one.
    python, _ = _parse_spec(text, defaultdict(set))
    families = defaultdict(set)
    for module, names in python.items():
        families[module].update(n.split("_", 1)[0] for n in names)
    return _parse_spec(text, families)


def _parse_spec(text, families):
    python = defaultdict(OrderedDict)
    c = OrderedDict()
    section = "0"
    table_cols = None

    def scan_py(spans, module, unprefixed_ok, bare_ok):
        previous = None
        for span in spans:
            found = py_names_in_span(span, module, unprefixed_ok, previous, bare_ok, families)
            for mod, name in found:
                python[mod].setdefault(name, section)
                families[mod].add(name.split("_", 1)[0])
            own = [f for f in found if f[0] == module]
            if own:
                previous = own

    def scan_c(spans, allow_bare):
        for span in spans:
            for name in c_names_in_span(span, allow_bare):
                c.setdefault(name, section)

    for line in text.splitlines():
        h = re.match(r"#+\s+(\d+(?:\.\d+)*)\.?\s", line)
        if h:
            section = h.group(1)
            table_cols = None
            continue
        module = section_module(section)
        if module is None:
            continue
        list_mode = any(section == s or section.startswith(s + ".") for s in LIST_SECTIONS)
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", cell) for cell in cells if cell):
                continue
            if table_cols is None:
                table_cols = cells
                continue
            if not table_cols[0].startswith("Python"):
                continue
            if "Not bound in Python" not in " ".join(cells) and "(C only)" not in cells[0]:
                scan_py(code_spans(cells[0]), module, True, True)
            if len(cells) > 1 and len(table_cols) > 1 and table_cols[1].startswith("C"):
                scan_c(code_spans(cells[1]), True)
            continue
        table_cols = None
        if stripped.startswith(("* ", "- ")):
            # 'C type `aclvdecCallback(...)`' names a type, not a function.
            cleaned = re.sub(r"C type `[^`]*`", "", stripped)
            scan_py(code_spans(cleaned), module, list_mode, False)
            scan_c(code_spans(cleaned), False)
            # '(`aclblasGemmEx`)': the C name of the Python function before it.
            scan_c(re.findall(r"\(`(acl[A-Za-z0-9_]+)`", cleaned), True)
        else:
            m = re.search(r"C[- ]only", stripped)
            if m:
                # The names listed after 'C-only', up to an 'enums' list.
                tail = re.split(r"\benums?\b", stripped[m.end():])[0]
                scan_c(code_spans(tail), True)
    return python, c


# --------------------------------------------------------------------------- checks


def header_functions(include_dir):
    declared = set()
    for path in sorted(include_dir.rglob("*.h")):
        text = path.read_text(errors="replace")
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        for m in re.finditer(r"ACL_FUNC_VISIBILITY\s+[^;{}()]*?\b(acl\w+)\s*\(", text):
            declared.add(m.group(1))
    return declared


def library_symbols(lib):
    if not lib.exists():
        return None
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"api_coverage: nm failed on {lib}: {exc}", file=sys.stderr)
        return None
    symbols = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TtWi":
            symbols.add(parts[2].split("@")[0])
    return symbols


def python_functions(build_dir):
    """{module: set(names)} from the built module, or None if it cannot be imported."""
    pydir = build_dir / "python"
    if not pydir.is_dir():
        return None, f"{pydir} does not exist"
    sys.path.insert(0, str(pydir))
    try:
        import acl  # noqa: F401
    except ImportError as exc:
        return None, f"import acl from {pydir} failed: {exc}"
    where = pathlib.Path(getattr(acl, "__file__", "") or "").resolve()
    if pydir.resolve() not in where.parents:
        return None, f"no acl module in {pydir} (found {where} instead)"
    found = {}
    for module in PY_MODULE_ORDER:
        obj = acl if module == "acl" else sys.modules.get(module) or getattr(
            acl, module.split(".", 1)[1], None)
        if obj is None:
            continue
        found[module] = {n for n in dir(obj) if not n.startswith("_")
                         and callable(getattr(obj, n, None))
                         and not isinstance(getattr(obj, n), type(acl))}
    return found, getattr(acl, "__file__", str(pydir))


# --------------------------------------------------------------------------- report


def c_group(name):
    for prefix, group in C_GROUPS:
        if name.startswith(prefix):
            return group
    return "other"


def pct(a, b):
    return f"{100.0 * a / b:.0f}%" if b else "-"


def yes(flag):
    return "yes" if flag else "no"


def render(spec_path, build_dir, py_spec, c_spec, declared, symbols, py_found, py_note):
    lines = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "none"
    except OSError:
        commit = "none"
    lines += [
        "# API coverage",
        "",
        "Generated by `python3 tools/api_coverage.py` (do not edit by hand): the functions",
        "named by the compatibility contract `../shared/spec/pyacl-api.md`, and whether",
        "this tree has them.",
        "",
        f"- Generated: {now}, commit `{commit}`, build directory `{_rel(build_dir)}`.",
        "- C: *header* = declared in `include/acl/**.h`; *library* = exported by",
        "  `libascendcl.so` (`nm -D --defined-only`). Implemented means in the library.",
        "- Python: present in the built `acl` module (`dir()` of `acl` and its submodules).",
        "- The lists are read out of the contract's tables and lists, so a function the",
        "  contract only mentions in prose may be missing here.",
    ]
    if symbols is None:
        lines.append(f"- **No library found** under `{_rel(build_dir)}/lib`: every C "
                     "function shows as not implemented.")
    if py_found is None:
        lines.append(f"- **Python module not importable** ({py_note}): every Python "
                     "function shows as not implemented.")
    lines += ["", "## Summary", "", "### Python", "",
              "| module | in contract | implemented | coverage |", "| --- | ---: | ---: | ---: |"]
    py_total = py_done = 0
    for module in PY_MODULE_ORDER:
        names = py_spec.get(module)
        if not names:
            continue
        have = py_found.get(module, set()) if py_found else set()
        done = sum(1 for n in names if n in have)
        py_total += len(names)
        py_done += done
        lines.append(f"| `{module}` | {len(names)} | {done} | {pct(done, len(names))} |")
    lines.append(f"| **all** | **{py_total}** | **{py_done}** | **{pct(py_done, py_total)}** |")

    groups = OrderedDict()
    for _, group in C_GROUPS:
        groups.setdefault(group, [])
    for name in c_spec:
        groups.setdefault(c_group(name), []).append(name)
    lines += ["", "### C", "",
              "| functions | in contract | declared | in library | coverage |",
              "| --- | ---: | ---: | ---: | ---: |"]
    c_total = c_decl = c_done = 0
    for group, names in groups.items():
        if not names:
            continue
        d = sum(1 for n in names if n in declared)
        s = sum(1 for n in names if symbols and n in symbols)
        c_total += len(names)
        c_decl += d
        c_done += s
        lines.append(f"| {group} | {len(names)} | {d} | {s} | {pct(s, len(names))} |")
    lines.append(f"| **all** | **{c_total}** | **{c_decl}** | **{c_done}** | "
                 f"**{pct(c_done, c_total)}** |")

    lines += ["", "## Python functions", ""]
    for module in PY_MODULE_ORDER:
        names = py_spec.get(module)
        if not names:
            continue
        have = py_found.get(module, set()) if py_found else set()
        lines += [f"### `{module}`", "", "| function | contract § | implemented |",
                  "| --- | --- | --- |"]
        for name, section in names.items():
            lines.append(f"| `{module}.{name}` | {section} | {yes(name in have)} |")
        lines.append("")

    lines += ["## C functions", ""]
    for group, names in groups.items():
        if not names:
            continue
        lines += [f"### {group}", "", "| function | contract § | header | library |",
                  "| --- | --- | --- | --- |"]
        for name in names:
            lines.append(f"| `{name}` | {c_spec[name]} | {yes(name in declared)} | "
                         f"{yes(bool(symbols) and name in symbols)} |")
        lines.append("")

    extra_py = []
    if py_found:
        for module, have in py_found.items():
            extra_py += [f"`{module}.{n}`" for n in sorted(have - set(py_spec.get(module, {})))]
    extra_c = sorted(n for n in (symbols or set()) if re.match(r"acl[a-z]*[A-Z]", n)
                     and n not in c_spec)
    lines += ["## Beyond the contract", "",
              "Implemented but not named by the contract (OpenACL additions, or names the",
              "contract only mentions in prose):", ""]
    lines.append("- Python: " + (", ".join(extra_py) if extra_py else "none"))
    lines.append("- C: " + (", ".join(f"`{n}`" for n in extra_c) if extra_c else "none"))
    lines.append("")
    return "\n".join(lines), (py_done, py_total, c_done, c_total)


def _rel(path):
    try:
        return str(pathlib.Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def find_spec(explicit):
    """--spec or $OPENACL_SPEC when given (and only that), else the shared folder
    beside the repository."""
    given = explicit or os.environ.get("OPENACL_SPEC")
    candidates = [given] if given else [ROOT.parent / "shared" / "spec" / "pyacl-api.md",
                                        ROOT / "shared" / "spec" / "pyacl-api.md"]
    for cand in candidates:
        if pathlib.Path(cand).is_file():
            return pathlib.Path(cand)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", help="path of pyacl-api.md (default: ../shared/spec/pyacl-api.md)")
    ap.add_argument("--build-dir", default=os.environ.get("OPENACL_BUILD_DIR", "build"),
                    help="build directory (default: build)")
    ap.add_argument("--output", default=str(ROOT / "docs" / "api-coverage.md"),
                    help="report to write (default: docs/api-coverage.md); '-' for stdout")
    args = ap.parse_args(argv)

    spec = find_spec(args.spec)
    if spec is None:
        print("api_coverage: contract pyacl-api.md not found ("
              f"{args.spec or os.environ.get('OPENACL_SPEC') or ROOT.parent / 'shared' / 'spec'}); "
              "nothing written")
        return 0
    build_dir = pathlib.Path(args.build_dir)
    if not build_dir.is_absolute():
        build_dir = ROOT / build_dir

    py_spec, c_spec = parse_spec(spec.read_text(encoding="utf-8"))
    declared = header_functions(ROOT / "include" / "acl")
    symbols = library_symbols(build_dir / "lib" / "libascendcl.so")
    py_found, py_note = python_functions(build_dir)
    report, (py_done, py_total, c_done, c_total) = render(
        spec, build_dir, py_spec, c_spec, declared, symbols, py_found, py_note)
    if args.output == "-":
        sys.stdout.write(report)
    else:
        pathlib.Path(args.output).write_text(report, encoding="utf-8")
        print(f"api_coverage: wrote {args.output}")
    print(f"api_coverage: Python {py_done}/{py_total}, C {c_done}/{c_total} "
          f"(C declared in headers: {sum(1 for n in c_spec if n in declared)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
